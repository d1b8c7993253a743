import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { envSecretProblem, reservedNamespaceProblem } from './tenant-rules.ts';

const platform = { system: 'sless-system', build: 'sless-builds' };

describe('reserved namespaces', () => {
  it('are the controller’s, the builds’ and Kubernetes’ own', () => {
    for (const ns of ['sless-system', 'sless-builds', 'kube-system', 'kube-node-lease']) assert.ok(reservedNamespaceProblem(ns, platform), ns);
    for (const ns of ['team-a', 'sless-ff8d9819fc0e12bf', 'default', 'kube-team']) assert.equal(reservedNamespaceProblem(ns, platform), undefined, ns);
  });
  it('follow the configured names', () => {
    assert.ok(reservedNamespaceProblem('platform', { system: 'platform', build: 'builds' }));
    assert.equal(reservedNamespaceProblem('sless-system', { system: 'platform', build: 'builds' }), undefined);
  });
});

describe('env_from_secrets', () => {
  it('may name an application Secret of the namespace', () => {
    assert.equal(envSecretProblem('team-a', 'db', { type: 'Opaque' }), undefined);
  });
  it('may not name the platform’s Secrets, git credentials, service account tokens or a missing Secret', () => {
    assert.match(envSecretProblem('team-a', 'sless-controller-secrets', { type: 'Opaque' })?.message ?? '', /platform's own Secrets/);
    assert.match(envSecretProblem('team-a', 'sless-registry', undefined)?.message ?? '', /platform's own Secrets/);
    assert.match(envSecretProblem('team-a', 'pull', { type: 'kubernetes.io/dockerconfigjson' }, ['pull'])?.message ?? '', /platform's own Secrets/);
    assert.match(envSecretProblem('team-a', 'repo-credentials', { type: 'sless.kube5s.ru/git-credentials' })?.message ?? '', /type sless\.kube5s\.ru\/git-credentials/);
    assert.match(envSecretProblem('team-a', 'default-token', { type: 'kubernetes.io/service-account-token' })?.message ?? '', /service account tokens/);
    assert.match(envSecretProblem('team-a', 'later', undefined)?.message ?? '', /does not exist/);
    assert.equal(envSecretProblem('team-a', 'later', undefined)?.reason, 'SecretNotFound');
    assert.equal(envSecretProblem('team-a', 'sless-registry', undefined)?.reason, 'SecretNotAllowed');
  });
});
