// The pure decisions of `sless check`: image names, the registry scheme, docker config credentials,
// CRD drift, the leader Lease, the Kubernetes version, and how results print.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exitCodeOf, fail, formatResult, pass } from './check-result.ts';
import { crdDrift } from './crd-drift.ts';
import { kubeVersionSupported, parseKubeVersion } from './kube-version.ts';
import { leaseVerdict } from './leader-lease.ts';
import { dockerConfigCredentials, parseImageRef, registryBaseUrl, registryHostOf } from './registry-client.ts';

describe('sless check rules', () => {
  it('reads image names as docker does', () => {
    assert.deepEqual(parseImageRef('10.0.0.1:5000/sless/sless-runtime-nodejs20:3'), { registry: '10.0.0.1:5000', repository: 'sless/sless-runtime-nodejs20', reference: '3' });
    assert.deepEqual(parseImageRef('martizih/kaniko:v1.28.3'), { registry: 'docker.io', repository: 'martizih/kaniko', reference: 'v1.28.3' });
    assert.deepEqual(parseImageRef('busybox'), { registry: 'docker.io', repository: 'library/busybox', reference: 'latest' });
    assert.deepEqual(parseImageRef(`ghcr.io/a/b:1@sha256:${'a'.repeat(64)}`), { registry: 'ghcr.io', repository: 'a/b', reference: `sha256:${'a'.repeat(64)}` });
    assert.deepEqual(parseImageRef('localhost:5000/x'), { registry: 'localhost:5000', repository: 'x', reference: 'latest' });
    assert.equal(registryHostOf('registry.example.com/sless'), 'registry.example.com');
  });

  it('talks plain http to loopback and private addresses only, as go-containerregistry does', () => {
    assert.equal(registryBaseUrl('127.0.0.1:5000'), 'http://127.0.0.1:5000');
    assert.equal(registryBaseUrl('10.88.0.1:41234'), 'http://10.88.0.1:41234');
    assert.equal(registryBaseUrl('172.20.0.1:5000'), 'http://172.20.0.1:5000');
    assert.equal(registryBaseUrl('registry.example.com'), 'https://registry.example.com');
    assert.equal(registryBaseUrl('172.32.0.1'), 'https://172.32.0.1');
    assert.equal(registryBaseUrl('docker.io'), 'https://registry-1.docker.io');
  });

  it('finds the credentials a docker config holds for a registry', () => {
    const auth = Buffer.from('u:p:w').toString('base64');
    assert.deepEqual(dockerConfigCredentials(JSON.stringify({ auths: { 'reg.example:5000': { auth } } }), 'reg.example:5000'), { username: 'u', password: 'p:w' });
    assert.deepEqual(dockerConfigCredentials(JSON.stringify({ auths: { 'https://reg.example': { username: 'a', password: 'b' } } }), 'reg.example'), { username: 'a', password: 'b' });
    assert.deepEqual(dockerConfigCredentials(JSON.stringify({ auths: { 'https://index.docker.io/v1/': { auth } } }), 'docker.io'), { username: 'u', password: 'p:w' });
    assert.equal(dockerConfigCredentials(JSON.stringify({ auths: { other: { auth } } }), 'reg.example'), undefined);
    assert.equal(dockerConfigCredentials('not json', 'reg.example'), undefined);
  });

  it('calls a CRD current only with the same versions, schema and subresources', () => {
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } };
    const wanted = { spec: { versions: [{ name: 'v1alpha1', served: true, storage: true, schema, subresources: { status: {} } }] } };
    const established = { conditions: [{ type: 'Established', status: 'True' }] };
    assert.equal(crdDrift(wanted, { ...wanted, status: established }), undefined);
    assert.match(crdDrift(wanted, { spec: { versions: [] }, status: established }) ?? '', /has no version v1alpha1/);
    const older = { spec: { versions: [{ ...wanted.spec.versions[0], schema: { openAPIV3Schema: { type: 'object' } } }] }, status: established };
    assert.match(crdDrift(wanted, older) ?? '', /another schema/);
    assert.match(crdDrift(wanted, { ...wanted, status: { conditions: [{ type: 'Established', status: 'False' }] } }) ?? '', /not Established/);
  });

  it('says a replica leads only while its Lease is renewed within the lease duration', () => {
    const now = Date.parse('2026-12-06T09:00:00Z');
    assert.deepEqual(leaseVerdict({ spec: { holderIdentity: 'sless-controller-0', renewTime: '2026-12-06T08:59:58Z', leaseDurationSeconds: 15 } }, now), { ok: true, holder: 'sless-controller-0', ageSec: 2 });
    const stale = leaseVerdict({ spec: { holderIdentity: 'sless-controller-1', renewTime: '2026-12-06T08:58:00Z', leaseDurationSeconds: 15 } }, now);
    assert.equal(stale.ok, false);
    assert.match(stale.ok ? '' : stale.why, /last renewed the Lease 120 s ago/);
    assert.match(JSON.stringify(leaseVerdict(undefined, now)), /no Lease/);
    assert.match(JSON.stringify(leaseVerdict({ spec: { holderIdentity: '' } }, now)), /no holder/);
  });

  it('needs Kubernetes 1.30 or newer', () => {
    assert.deepEqual(parseKubeVersion({ major: '1', minor: '30+' }), { major: 1, minor: 30 });
    assert.deepEqual(parseKubeVersion({ gitVersion: 'v1.29.4-eks' }), { major: 1, minor: 29 });
    assert.equal(kubeVersionSupported({ major: 1, minor: 29 }), false);
    assert.equal(kubeVersionSupported({ major: 1, minor: 30 }), true);
    assert.equal(kubeVersionSupported({ major: 2, minor: 0 }), true);
  });

  it('prints ✔ or ✖ with the fix under a failure, and exits 0 only when all pass', () => {
    assert.equal(formatResult(pass('S3', 'ok')), '\u2714 S3: ok');
    assert.equal(formatResult(fail('S3', 'refused', 'SLESS_S3_BUCKET')), '\u2716 S3: refused\n    fix: SLESS_S3_BUCKET');
    assert.equal(exitCodeOf([pass('a', ''), pass('b', '')]), 0);
    assert.equal(exitCodeOf([pass('a', ''), fail('b', '', 'x')]), 1);
    assert.equal(exitCodeOf([]), 1);
  });
});
