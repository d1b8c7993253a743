import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { JsonWatch, LineSplitter } from './json-watch.ts';

describe('LineSplitter', () => {
  it('hands over each complete line once, joining a line split across chunks', () => {
    const lines: string[] = [];
    const split = new LineSplitter((l) => lines.push(l));
    split.push(Buffer.from('{"a":1}\n{"b"'));
    split.push(Buffer.from(':2}'));
    split.push(Buffer.from('\n\n{"c":3}\n{"d"'));
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('keeps a multi-byte character whole when a chunk ends inside it', () => {
    const lines: string[] = [];
    const split = new LineSplitter((l) => lines.push(l));
    const bytes = Buffer.from('{"m":"Привет"}\n');
    split.push(bytes.subarray(0, 9));
    split.push(bytes.subarray(9));
    assert.deepEqual(lines, ['{"m":"Привет"}']);
  });
});

describe('JsonWatch', () => {
  let server: Server;
  let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  let kc: KubeConfig;
  before(async () => {
    server = createServer((req, res) => handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const watchOnce = (w: JsonWatch, query: Record<string, unknown> = {}) =>
    new Promise<{ events: Array<[string, unknown]>; err: unknown }>((resolve) => {
      const events: Array<[string, unknown]> = [];
      void w.watch('/api/v1/namespaces/ns/pods', query, (type, obj) => events.push([type, obj]), (err) => resolve({ events, err }));
    });

  it("streams each event as it comes, with watch=true, the query and the kubeconfig's credentials, and ends with null when the server ends", async () => {
    let seen: { url?: string; auth?: string } = {};
    handle = (req, res) => {
      seen = { url: req.url, auth: req.headers.authorization };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"MODI');
      setTimeout(() => res.end('FIED","object":{"metadata":{"name":"a"},"x":1}}\nnot json\n'), 20);
    };
    const { events, err } = await watchOnce(new JsonWatch(kc), { resourceVersion: '7', allowWatchBookmarks: true, labelSelector: undefined });
    assert.deepEqual(events, [
      ['ADDED', { metadata: { name: 'a' } }],
      ['MODIFIED', { metadata: { name: 'a' }, x: 1 }],
    ]);
    assert.equal(err, null);
    assert.equal(seen.url, '/api/v1/namespaces/ns/pods?watch=true&resourceVersion=7&allowWatchBookmarks=true');
    assert.equal(seen.auth, 'Bearer secret-token');
  });

  it('ends with an error carrying the status code when the server refuses the watch', async () => {
    handle = (_req, res) => {
      res.writeHead(410, { 'content-type': 'application/json' });
      res.end('{"kind":"Status","code":410}');
    };
    const { events, err } = await watchOnce(new JsonWatch(kc));
    assert.deepEqual(events, []);
    assert.equal((err as { statusCode?: number }).statusCode, 410);
  });

  it('gives up on a watch that stays silent longer than its timeout, with a TimeoutError', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{}}\n');
    };
    const w = new JsonWatch(kc);
    w.requestTimeoutMs = 150;
    const { events, err } = await watchOnce(w);
    assert.equal(events.length, 1);
    assert.equal((err as Error).name, 'TimeoutError');
  });

  it('stops when its AbortController is aborted, calling done once', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('\n');
    };
    let calls = 0;
    const ended = new Promise<void>((resolve) => {
      void new JsonWatch(kc)
        .watch(
          '/api/v1/pods',
          {},
          () => undefined,
          () => {
            calls++;
            resolve();
          },
        )
        .then((controller) => setTimeout(() => controller.abort(), 30));
    });
    await ended;
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(calls, 1);
  });
});
