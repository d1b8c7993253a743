import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { reuseConnections } from './reuse-connections.ts';

/** A stand-in API server that answers every request with an empty NamespaceList and counts connections. */
async function countingServer() {
  let connections = 0;
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    // A watch: one event, then the stream ends.
    if (req.url?.includes('watch=true')) return res.end(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Pod', metadata: { name: 'p' } } })}\n`);
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

  it('tells the observer of every request it sends, watches too, by verb and resource', async () => {
    const server = await countingServer();
    try {
      const seen: string[] = [];
      const kc = reuseConnections(kubeConfig(server.url), (verb, resource) => seen.push(`${verb} ${resource}`));
      const core = kc.makeApiClient(CoreV1Api);
      await core.listNamespace();
      await core.readNamespace({ name: 'team-a' }).catch(() => undefined);
      await core.patchNamespacedPodStatus({ namespace: 'team-a', name: 'p', body: { status: {} } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)).catch(() => undefined);
      await new Promise<void>((resolve, reject) => {
        void new Watch(kc).watch('/api/v1/namespaces/team-a/pods', {}, () => undefined, () => resolve()).catch(reject);
      });
      assert.deepEqual(seen, ['LIST namespaces', 'GET namespaces', 'PATCH pods/status', 'WATCH pods']);
    } finally {
      await server.close();
    }
  });

  it('a later call sets who hears of requests; already made clients report to it', async () => {
    const server = await countingServer();
    try {
      const first: string[] = [];
      const second: string[] = [];
      const kc = reuseConnections(kubeConfig(server.url), (verb, resource) => first.push(`${verb} ${resource}`));
      const core = kc.makeApiClient(CoreV1Api);
      await core.listNamespace();
      reuseConnections(kc, (verb, resource) => second.push(`${verb} ${resource}`));
      await core.listNamespace();
      assert.deepEqual([first, second], [['LIST namespaces'], ['LIST namespaces']]);
    } finally {
      await server.close();
    }
  });

  it('gives a dispatcher of its own where client-node would use the global one (no TLS options), so those requests are counted too', () => {
    const kc = reuseConnections(kubeConfig('http://127.0.0.1:1'), () => undefined) as unknown as {
      createDispatcher(cluster: unknown, agentOptions: Record<string, unknown>): unknown;
    };
    assert.notEqual(kc.createDispatcher({ name: 'c', server: 'https://10.0.0.1' }, {}), undefined);
  });

  it('speaks HTTP/1.1 to an API server that offers h2 (Node\'s HTTP/2 client aborted the controller at exit)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sless-h2-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      const cert = readFileSync(join(dir, 'cert.pem'));
      const versions: string[] = [];
      // As Go's server does: h2 first by ALPN, HTTP/1.1 for clients that only offer that.
      const server = http2.createSecureServer({ key: readFileSync(join(dir, 'key.pem')), cert, allowHTTP1: true }, (req, res) => {
        versions.push(req.httpVersion);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items: [] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const kc = new KubeConfig();
        kc.loadFromOptions({
          clusters: [{ name: 'c', server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caData: cert.toString('base64') }],
          users: [{ name: 'u', token: 't' }],
          contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
          currentContext: 'x',
        });
        const core = reuseConnections(kc).makeApiClient(CoreV1Api);
        await core.listNamespace();
        await core.listNamespace();
        assert.deepEqual(versions, ['1.1', '1.1']);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
