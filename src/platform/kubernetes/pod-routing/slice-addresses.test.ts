import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { addressesOfSlices, serviceOfSlice, trimEndpointSlice } from './slice-addresses.ts';

function slice(name: string, endpoints: V1EndpointSlice['endpoints'], extra: Partial<V1EndpointSlice> = {}): V1EndpointSlice {
  return {
    addressType: 'IPv4',
    metadata: { name, namespace: 'team', labels: { 'kubernetes.io/service-name': 'hello', 'app.kubernetes.io/managed-by': 'sless' }, managedFields: [] },
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints,
    ...extra,
  };
}

describe('EndpointSlices → pod addresses', () => {
  it('lists every address with its port and the kubelet conditions (unset ready means ready, as kube-proxy reads it)', () => {
    const addresses = addressesOfSlices([
      slice('hello-a', [
        { addresses: ['10.0.0.2'], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', name: 'hello-1' } },
        { addresses: ['10.0.0.3'], conditions: { ready: false, serving: false, terminating: false } },
        { addresses: ['10.0.0.4'], conditions: { ready: false, serving: true, terminating: true } },
        { addresses: ['10.0.0.5'] },
      ]),
    ]);
    assert.deepEqual(addresses, [
      { hostPort: '10.0.0.2:8080', ready: true, terminating: false, pod: 'hello-1' },
      { hostPort: '10.0.0.3:8080', ready: false, terminating: false },
      { hostPort: '10.0.0.4:8080', ready: false, terminating: true },
      { hostPort: '10.0.0.5:8080', ready: true, terminating: false },
    ]);
  });

  it('joins a Service\'s slices; an address in two of them (being moved) is kept once, terminating if either says so', () => {
    const addresses = addressesOfSlices([
      slice('hello-a', [{ addresses: ['10.0.0.2'], conditions: { ready: true } }]),
      slice('hello-b', [
        { addresses: ['10.0.0.2'], conditions: { ready: false, terminating: true } },
        { addresses: ['10.0.0.9'], conditions: { ready: true } },
      ]),
    ]);
    assert.deepEqual(addresses, [
      { hostPort: '10.0.0.2:8080', ready: true, terminating: true },
      { hostPort: '10.0.0.9:8080', ready: true, terminating: false },
    ]);
  });

  it('brackets IPv6 addresses; skips FQDN slices and slices without a usable port', () => {
    assert.deepEqual(addressesOfSlices([slice('v6', [{ addresses: ['fd00::5'] }], { addressType: 'IPv6' })]), [
      { hostPort: '[fd00::5]:8080', ready: true, terminating: false },
    ]);
    assert.deepEqual(addressesOfSlices([slice('fqdn', [{ addresses: ['pod.example'] }], { addressType: 'FQDN' })]), []);
    assert.deepEqual(addressesOfSlices([slice('noport', [{ addresses: ['10.0.0.2'] }], { ports: [] })]), []);
    assert.deepEqual(
      addressesOfSlices([slice('two', [{ addresses: ['10.0.0.2'] }], { ports: [{ name: 'metrics', port: 9090 }, { name: 'other', port: 1 }] })]),
      [],
      'with several ports, only the one named http is served',
    );
  });

  it('a trimmed slice keeps what the addresses and the Service are read from, and nothing else', () => {
    const s = slice('hello-a', [
      { addresses: ['10.0.0.2'], conditions: { ready: true, serving: true, terminating: false }, targetRef: { kind: 'Pod', name: 'hello-1', uid: 'u' }, nodeName: 'n1' },
    ]);
    const before = addressesOfSlices([s]);
    trimEndpointSlice(s);
    assert.deepEqual(addressesOfSlices([s]), before);
    assert.equal(serviceOfSlice(s), 'team/hello');
    assert.deepEqual(s.metadata, { name: 'hello-a', namespace: 'team', labels: { 'kubernetes.io/service-name': 'hello' } });
    assert.equal(serviceOfSlice({ ...s, metadata: { name: 'x', namespace: 'team' } }), undefined);
  });
});
