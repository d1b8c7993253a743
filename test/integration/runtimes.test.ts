// Every runtime server (runtimes/), run as a real process, maps requests to events and contexts and
// return values to responses as docs/contract.md §4 says. The fixtures in test/fixtures/runtimes/ behave
// alike in every language, so one set of expectations covers all five runtimes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TARGETS, type RunningServer } from './runtimes-support.ts';
import { startServer } from './runtimes-support.ts';

const TIMEOUT_SEC = 7;
const functionEnv = {
  SLESS_FUNCTION_NAME: 'greeter',
  SLESS_NAMESPACE: 'team-a',
  SLESS_TIMEOUT_SEC: String(TIMEOUT_SEC),
  GREETING: 'hi from env',
};

interface Echo {
  event: unknown;
  context: {
    method: string;
    path: string;
    query: Record<string, string>;
    headers: Record<string, string>;
    function: string;
    namespace: string;
    deadline: string;
  };
}

for (const target of TARGETS) {
  describe(`${target.runtime} runtime server`, { timeout: 360_000 }, () => {
    let server: RunningServer;
    before(async () => {
      await target.prepare();
      server = await startServer(target.contextHandler(), functionEnv);
    });
    after(async () => server && (await server.stop()));

    it('answers GET /health with {"status":"ok"}', async () => {
      const res = await fetch(`${server.url}/health`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: 'ok' });
    });

    it('hands a JSON body to the handler as the event, with the request as context', async () => {
      const before = Date.now();
      const res = await fetch(`${server.url}/orders/42?tag=a&tag=b&q=x%20y`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'X-Custom': 'yes' },
        body: JSON.stringify({ item: 'tea', qty: 2 }),
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      const { event, context } = (await res.json()) as Echo;
      assert.deepEqual(event, { item: 'tea', qty: 2 });
      assert.equal(context.method, 'POST');
      assert.equal(context.path, '/orders/42');
      assert.deepEqual(context.query, { tag: 'a,b', q: 'x y' });
      assert.equal(context.headers['x-custom'], 'yes');
      assert.equal(context.headers['content-type'], 'application/json');
      assert.match(context.headers.host ?? '', /^127\.0\.0\.1:\d+$/);
      assert.equal(context.function, 'greeter');
      assert.equal(context.namespace, 'team-a');
      assert.match(context.deadline, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const deadline = Date.parse(context.deadline);
      assert.ok(
        deadline >= before + TIMEOUT_SEC * 1000 - 1000 && deadline <= Date.now() + TIMEOUT_SEC * 1000 + 1000,
      );
    });

    it('hands a body that is not JSON to the handler as a string', async () => {
      const res = await fetch(`${server.url}/`, { method: 'PUT', body: 'just some text {' });
      assert.equal(((await res.json()) as Echo).event, 'just some text {');
    });

    it('reads a streamed (chunked) body whole, as a proxy forwards it', async () => {
      const parts = ['{"parts":', '[1,2', ',3]}'];
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const p of parts) controller.enqueue(new TextEncoder().encode(p));
          controller.close();
        },
      });
      const res = await fetch(`${server.url}/stream`, {
        method: 'POST',
        body,
        duplex: 'half',
      } as RequestInit);
      const { event, context } = (await res.json()) as Echo;
      assert.deepEqual(event, { parts: [1, 2, 3] });
      assert.equal(context.headers['transfer-encoding'] ?? 'chunked', 'chunked');
    });

    it('hands {} to the handler when there is no body', async () => {
      const res = await fetch(`${server.url}/anything`);
      const { event, context } = (await res.json()) as Echo;
      assert.deepEqual(event, {});
      assert.equal(context.method, 'GET');
      assert.deepEqual(context.query, {});
    });

    it('sends a returned string as 200 text/plain', async () => {
      const res = await fetch(`${server.url}/text`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await res.text(), 'hello text');
    });

    it('sends a returned array as 200 JSON', async () => {
      const res = await fetch(`${server.url}/array`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), [1, 2, 3]);
    });

    it('sends {statusCode, headers, body} as that response', async () => {
      const res = await fetch(`${server.url}/status`, { method: 'POST' });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get('x-sless'), 'yes');
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(await res.text(), 'created');
    });

    it('sends an object body of a {statusCode} response as JSON', async () => {
      const res = await fetch(`${server.url}/status-json`);
      assert.equal(res.status, 202);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(await res.json(), { queued: true });
    });

    it('answers 204 with no body when the handler returns nothing', async () => {
      const res = await fetch(`${server.url}/none`);
      assert.equal(res.status, 204);
      assert.equal(await res.text(), '');
    });

    it('turns a thrown error into 500 {"error"} and a log line, and keeps serving', async () => {
      const res = await fetch(`${server.url}/boom`, { method: 'DELETE' });
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error: string };
      assert.match(body.error, /boom requested/);
      assert.match(server.stderr(), /boom requested/);
      assert.equal((await fetch(`${server.url}/text`)).status, 200);
    });

    it('answers 500 when the handler returns a statusCode that is not an HTTP status', async () => {
      const res = await fetch(`${server.url}/bad-status`);
      assert.equal(res.status, 500);
      assert.match(((await res.json()) as { error: string }).error, /statusCode 42 is not an HTTP status/);
    });

    it("gives the handler the function's environment", async () => {
      assert.deepEqual(await (await fetch(`${server.url}/env`)).json(), { greeting: 'hi from env' });
    });

    it('serves requests concurrently', async () => {
      const t0 = Date.now();
      const all = await Promise.all([1, 2, 3].map(() => fetch(`${server.url}/slow`).then((r) => r.json())));
      assert.deepEqual(all, [{ slept: true }, { slept: true }, { slept: true }]);
      assert.ok(Date.now() - t0 < 2000, `three 700 ms requests took ${Date.now() - t0} ms`);
    });

    it('calls a handler that takes only the event with the event alone', async () => {
      const one = await startServer(target.eventHandler(), functionEnv);
      try {
        const res = await fetch(`${one.url}/x`, { method: 'POST', body: '{"a":1}' });
        assert.deepEqual(await res.json(), { args: 1, event: { a: 1 } });
      } finally {
        await one.stop();
      }
    });
  });
}
