import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { API_CALL_CONNECTIONS, apiDispatcher } from './api-dispatcher.ts';

/** Holds every watch open; answers every call after `callMs`; counts connections and the most calls at once. */
async function apiServer(callMs: number) {
  let connections = 0;
  let inFlight = 0;
  let mostInFlight = 0;
  const server = http.createServer((req, res) => {
    if (req.url?.includes('watch=true')) return void res.writeHead(200, { 'content-type': 'application/json' }).flushHeaders();
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    setTimeout(() => (inFlight--, res.end('{}')), callMs);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    mostInFlight: () => mostInFlight,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe('the API dispatcher', () => {
  it(`sends at most ${API_CALL_CONNECTIONS} calls at once to an API server, the rest queue (a sync of 1,000 functions opened 123 connections)`, async () => {
    const server = await apiServer(50);
    const dispatcher = apiDispatcher(undefined);
    try {
      const calls = Array.from({ length: 60 }, (_, i) => request(`${server.origin}/api/v1/namespaces/n${i}`, { dispatcher }).then((r) => r.body.text()));
      await Promise.all(calls);
      assert.equal(server.mostInFlight(), API_CALL_CONNECTIONS);
      assert.ok(server.connections() <= API_CALL_CONNECTIONS, `${server.connections()} connections`);
    } finally {
      await dispatcher.destroy();
      await server.close();
    }
  });

  it('never lets watches, however many, take the connections calls need', { timeout: 10_000 }, async () => {
    const server = await apiServer(0);
    const dispatcher = apiDispatcher(undefined);
    try {
      const watches = await Promise.all(
        Array.from({ length: API_CALL_CONNECTIONS * 2 }, (_, i) => request(`${server.origin}/api/v1/namespaces/n${i}/pods?watch=true`, { dispatcher })),
      );
      assert.equal(watches.length, API_CALL_CONNECTIONS * 2, 'every watch is open');
      const started = Date.now();
      const call = await request(`${server.origin}/api/v1/namespaces`, { dispatcher });
      assert.equal(await call.body.text(), '{}');
      assert.ok(Date.now() - started < 1_000, 'the call did not wait for a watch to end');
    } finally {
      await dispatcher.destroy();
      await server.close();
    }
  });
});
