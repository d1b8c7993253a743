import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { gatedKubeConfig, WriteGate, WriteRefusedError } from '../write-gate.ts';
import { FakeTimers } from './fake-timers.ts';
import { CONTENT_TYPES, JsonApi } from './json-api.ts';

describe('JsonApi', () => {
  let server: Server;
  let handle: (req: IncomingMessage, body: string, res: ServerResponse) => void = () => undefined;
  let kc: KubeConfig;
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => handle(req, body, res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends the body as JSON with the kubeconfig's credentials and answers the parsed reply", async () => {
    let seen: { method?: string; url?: string; auth?: string; type?: string; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body };
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"metadata":{"name":"a","resourceVersion":"3"}}');
    };
    const answer = await new JsonApi(kc).send('PATCH', '/api/v1/namespaces/ns/services/a?fieldManager=sless', { spec: { x: 1 } }, CONTENT_TYPES.apply);
    assert.deepEqual(answer, { metadata: { name: 'a', resourceVersion: '3' } });
    assert.deepEqual(seen, {
      method: 'PATCH',
      url: '/api/v1/namespaces/ns/services/a?fieldManager=sless',
      auth: 'Bearer secret-token',
      type: CONTENT_TYPES.apply,
      body: '{"spec":{"x":1}}',
    });
  });

  it("fails with client-node's ApiException, the status code and the server's body kept", async () => {
    handle = (_req, _body, res) => res.writeHead(409, { 'content-type': 'application/json' }).end('{"kind":"Status","reason":"AlreadyExists"}');
    await assert.rejects(new JsonApi(kc).send('POST', '/api/v1/namespaces/ns/services', {}), (err: unknown) => {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 409);
      assert.match(String(err.body), /AlreadyExists/);
      return true;
    });
  });

  it('aborts a write still in flight when the write gate closes (leadership ends), and refuses the next one', { timeout: 5_000 }, async () => {
    const timers = new FakeTimers();
    const gate = new WriteGate(timers);
    gate.openUntil(60_000);
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    let held: ServerResponse | undefined;
    handle = (_req, _body, res) => {
      held = res; // never answered: the write hangs until it is aborted
      arrived();
    };
    const api = new JsonApi(gatedKubeConfig(kc, gate));
    const write = api.send('PATCH', '/apis/sless.kube5s.ru/v1alpha1/namespaces/ns/functions/f/status', { status: {} }, CONTENT_TYPES.merge);
    await requestArrived;
    gate.close('proc-1 stopped leading');
    await assert.rejects(write, (err: unknown) => err instanceof WriteRefusedError && /proc-1 stopped leading/.test(err.message));
    await assert.rejects(api.send('DELETE', '/api/v1/namespaces/ns/services/a'), WriteRefusedError);
    held?.destroy();
  });
});
