import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { reuseConnections } from './reuse-connections.ts';

/** A stand-in API server that answers every request with an empty NamespaceList and counts connections. */
async function countingServer() {
  let connections = 0;
  const server = http.createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items: [] }));
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

function kubeConfig(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

describe('reuseConnections', () => {
  it('sends sequential API calls over one kept-alive connection instead of one connection each', async () => {
    const server = await countingServer();
    try {
      const plain = kubeConfig(server.url).makeApiClient(CoreV1Api);
      for (let i = 0; i < 10; i++) await plain.listNamespace();
      const withoutReuse = server.connections();
      const shared = reuseConnections(kubeConfig(server.url)).makeApiClient(CoreV1Api);
      for (let i = 0; i < 10; i++) await shared.listNamespace();
      const withReuse = server.connections() - withoutReuse;
      assert.equal(withoutReuse, 10, 'client-node as shipped opens a connection per call (if this changes, reuseConnections may go)');
      assert.ok(withReuse <= 2, `${withReuse} connections for 10 calls`);
    } finally {
      await server.close();
    }
  });

  it('is idempotent', () => {
    const kc = kubeConfig('http://127.0.0.1:1');
    assert.equal(reuseConnections(reuseConnections(kc)), kc);
  });
});
