// GET /v1/namespaces/{ns}/functions/{name}/logs over the HTTP stack (memory platform, whose lines come
// from the same FunctionLogs `sless dev` uses): NDJSON, follow until the client leaves, clear 400s and
// 404s, and a bounded number of follows per namespace.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hs256Token, listen, NS, testApp } from '../helpers/http-test-kit.ts';

describe('/v1 .../logs', async () => {
  const { app, platform } = await testApp();
  const base = await listen(app);
  const token = await hs256Token();
  const auth = { authorization: `Bearer ${token}` };
  after(() => app.close());
  await platform.createFunction(NS, { name: 'talker', runtime: 'nodejs20' });
  const url = (query = '', name = 'talker', ns = NS) => `${base}/v1/namespaces/${ns}/functions/${name}/logs${query}`;

  /** Reads NDJSON records from an open answer until `n` have come. */
  async function records(res: Response, n: number): Promise<Array<Record<string, string>>> {
    const out: Array<Record<string, string>> = [];
    const decoder = new TextDecoder();
    let rest = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) out.push(JSON.parse(p) as Record<string, string>);
      if (out.length >= n) break;
    }
    return out;
  }

  it('answers every replica’s lines as newline-delimited JSON {time, replica, stream, line}, oldest first', async () => {
    platform.logs.write(NS, 'talker', 'pid-1', 'stdout', 'hello from one\n');
    platform.logs.write(NS, 'talker', 'pid-2', 'stderr', 'hello from two\n');
    const res = await fetch(url(), { headers: auth });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
    const lines = (await res.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
    assert.deepEqual(lines.map(({ replica, stream, line }) => ({ replica, stream, line })), [
      { replica: 'pid-1', stream: 'stdout', line: 'hello from one' },
      { replica: 'pid-2', stream: 'stderr', line: 'hello from two' },
    ]);
    assert.ok(!Number.isNaN(Date.parse(lines[0]?.time ?? '')));
    const tail = await (await fetch(url('?tail=1'), { headers: auth })).text();
    assert.match(tail, /^\{[^\n]*"hello from two"\}\n$/);
  });

  it('with follow=1 keeps the answer open and writes each new line as it is printed', async () => {
    const abort = new AbortController();
    const res = await fetch(url('?follow=1&tail=0'), { headers: auth, signal: abort.signal });
    assert.equal(res.status, 200);
    const reading = records(res, 1);
    await new Promise((r) => setTimeout(r, 100));
    const printedAt = Date.now();
    platform.logs.write(NS, 'talker', 'pid-1', 'stdout', 'live line\n');
    const [first] = await reading;
    assert.equal(first?.line, 'live line');
    assert.ok(Date.now() - printedAt < 1000, 'arrives within a second');
    abort.abort();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(platform.logs.followers(NS, 'talker'), 0, 'the client left: the follow is gone');
  });

  it('refuses bad since and tail with a 400 that names them, and an unknown function with 404', async () => {
    const since = await fetch(url('?since=yesterday'), { headers: auth });
    assert.equal(since.status, 400);
    assert.match(((await since.json()) as { error: string }).error, /since must be a duration such as 30s, 10m/);
    const tail = await fetch(url('?tail=lots'), { headers: auth });
    assert.equal(tail.status, 400);
    assert.match(((await tail.json()) as { error: string }).error, /tail must be a whole number of lines from 0 to 10000, not "lots"/);
    const missing = await fetch(url('', 'nope'), { headers: auth });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, 'not_found');
  });

  it('is the token’s namespace only (403 elsewhere) and needs a token (401)', async () => {
    assert.equal((await fetch(url('', 'talker', 'someone-else'), { headers: auth })).status, 403);
    assert.equal((await fetch(url())).status, 401);
  });

  it('bounds the follows of a namespace: past the cap 429 with Retry-After; a slot frees when a client leaves', async () => {
    const open: AbortController[] = [];
    for (let i = 0; i < 10; i++) {
      const abort = new AbortController();
      const res = await fetch(url('?follow=1'), { headers: auth, signal: abort.signal });
      assert.equal(res.status, 200);
      open.push(abort);
    }
    const refused = await fetch(url('?follow=1'), { headers: auth });
    assert.equal(refused.status, 429);
    assert.ok(refused.headers.get('retry-after'));
    assert.match(((await refused.json()) as { error: string }).error, /10 log follow\(s\) open \(at most 10 at a time\)/);
    assert.equal((await fetch(url(), { headers: auth })).status, 200, 'a read without follow is not capped');
    open.pop()?.abort();
    await new Promise((r) => setTimeout(r, 200));
    const again = new AbortController();
    assert.equal((await fetch(url('?follow=1'), { headers: auth, signal: again.signal })).status, 200);
    again.abort();
    for (const a of open) a.abort();
  });

  it('is in /v1/openapi.json with its query and line schema', async () => {
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Record<string, { get?: { parameters: Array<{ name: string }>; responses: Record<string, { content?: Record<string, { schema: { required?: string[] } }> }> } }> };
    const op = doc.paths['/v1/namespaces/{ns}/functions/{name}/logs']?.get;
    assert.ok(op);
    assert.deepEqual(op.parameters.map((p) => p.name).sort(), ['follow', 'name', 'ns', 'since', 'tail']);
    assert.deepEqual(op.responses['200']?.content?.['application/x-ndjson']?.schema.required, ['time', 'replica', 'stream', 'line']);
  });
});
