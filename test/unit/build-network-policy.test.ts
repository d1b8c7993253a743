// deploy/base/build-network-policy.yaml read as a CNI that enforces NetworkPolicy would: which destinations a
// build pod (where tenant code runs) may reach. The bridge CNI of the test node does not enforce
// NetworkPolicy, so this evaluates the object itself; the API server accepts it in
// test/integration/kube-platform-deploy.test.ts (dry run of deploy/).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { V1NetworkPolicy, V1NetworkPolicyPeer } from '@kubernetes/client-node';
import { parse } from 'yaml';

const policy = parse(await readFile(new URL('../../deploy/base/build-network-policy.yaml', import.meta.url), 'utf8')) as V1NetworkPolicy;

function ipv4(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}
function inCidr(ip: string, cidr: string): boolean {
  const [base = '', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4(base) / size) * size;
  return ipv4(ip) >= start && ipv4(ip) < start + size;
}

interface Destination {
  readonly ip: string;
  readonly port: number;
  readonly protocol?: 'TCP' | 'UDP';
  /** Set for a pod in the cluster: its namespace's and its own labels. */
  readonly pod?: { readonly namespaceLabels: Record<string, string>; readonly labels: Record<string, string> };
}

function selects(selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string>): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}
function peerAllows(peer: V1NetworkPolicyPeer, d: Destination): boolean {
  if (peer.ipBlock) return inCidr(d.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(d.ip, c));
  if (!d.pod) return false;
  return selects(peer.namespaceSelector, d.pod.namespaceLabels) && selects(peer.podSelector, d.pod.labels);
}
function egressAllowed(d: Destination): boolean {
  return (policy.spec?.egress ?? []).some(
    (rule) =>
      (rule.to ?? []).some((peer) => peerAllows(peer, d)) &&
      (rule.ports === undefined || rule.ports.some((p) => p.port === d.port && (p.protocol ?? 'TCP') === (d.protocol ?? 'TCP'))),
  );
}

const ns = (name: string) => ({ 'kubernetes.io/metadata.name': name });

describe('build namespace NetworkPolicy', () => {
  it('covers every pod of the build namespace, for both directions, and lets nothing connect to them', () => {
    assert.equal(policy.metadata?.namespace, 'sless-builds');
    assert.deepEqual(policy.spec?.podSelector, {});
    assert.deepEqual(policy.spec?.policyTypes, ['Ingress', 'Egress']);
    assert.deepEqual(policy.spec?.ingress, []);
  });

  it('reaches cluster DNS, a labelled in-cluster registry or S3, and public registries and package indexes on 443', () => {
    assert.ok(egressAllowed({ ip: '10.96.0.10', port: 53, protocol: 'UDP', pod: { namespaceLabels: ns('kube-system'), labels: { 'k8s-app': 'kube-dns' } } }));
    assert.ok(egressAllowed({ ip: '10.244.0.7', port: 5000, pod: { namespaceLabels: ns('registry'), labels: { 'sless.kube5s.ru/build-egress': 'allow' } } }));
    assert.ok(egressAllowed({ ip: '151.101.0.223', port: 443 })); // a public address (e.g. a package index)
  });

  it('never reaches the cloud metadata address, the API server, the controller or other cluster pods', () => {
    assert.ok(!egressAllowed({ ip: '169.254.169.254', port: 80 }));
    assert.ok(!egressAllowed({ ip: '10.96.0.1', port: 443 })); // the kubernetes Service
    assert.ok(!egressAllowed({ ip: '192.168.1.10', port: 6443 })); // an API server endpoint on a private address
    assert.ok(!egressAllowed({ ip: '127.0.0.1', port: 443 }));
    const controller = { namespaceLabels: ns('sless-system'), labels: { 'app.kubernetes.io/name': 'sless-controller' } };
    assert.ok(!egressAllowed({ ip: '10.244.0.12', port: 8080, pod: controller }));
    assert.ok(!egressAllowed({ ip: '10.244.0.13', port: 53, protocol: 'UDP', pod: { namespaceLabels: ns('team-a'), labels: {} } }));
  });

  it('reaches public addresses only on 80 and 443', () => {
    assert.ok(!egressAllowed({ ip: '151.101.0.223', port: 22 }));
    assert.ok(!egressAllowed({ ip: '151.101.0.223', port: 6443 }));
  });
});
