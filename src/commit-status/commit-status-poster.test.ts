// The poster against a real HTTP server on loopback that plays a Gitea statuses endpoint.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { after, before, describe, it } from 'node:test';
import { TargetPolicy } from '../source/target-policy.ts';
import { CommitStatusPoster } from './commit-status-poster.ts';
import { statusTarget, type StatusTarget } from './status-target.ts';

const SHA = 'b'.repeat(40);

describe('CommitStatusPoster', () => {
  const received: Array<{ url: string; auth: string; body: Record<string, unknown> }> = [];
  let answers: number[] = [];
  let target: StatusTarget;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', auth: req.headers.authorization ?? '', body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.writeHead(answers.shift() ?? 201, { 'content-type': 'application/json' }).end('{"message":"nope"}');
    });
  });
  const logs: string[] = [];
  const logger = { info: (m: string) => logs.push(`info ${m}`), warn: (m: string) => logs.push(`warn ${m}`) };
  const poster = () => new CommitStatusPoster({ logger, targets: TargetPolicy.anyTarget(), retry: { baseMs: 10, maxMs: 20, attempts: 4 } });

  before(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const t = statusTarget({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/acme/functions.git`, token: 'tok' });
    assert.ok(!('error' in t));
    target = t;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  const reset = () => {
    received.length = 0;
    logs.length = 0;
    answers = [];
  };

  it('posts each status once to /api/v1/repos/{owner}/{repo}/statuses/{sha} with the token; the same status again is not re-posted', async () => {
    reset();
    const p = poster();
    const status = { context: 'sless', state: 'pending' as const, description: 'a: building' };
    p.post(target, SHA, [status]);
    p.post(target, SHA, [status]);
    await p.idle();
    p.post(target, SHA, [status]);
    await p.idle();
    assert.equal(received.length, 1);
    assert.equal(received[0]?.url, `/api/v1/repos/acme/functions/statuses/${SHA}`);
    assert.equal(received[0]?.auth, 'token tok');
    assert.deepEqual(received[0]?.body, { state: 'pending', context: 'sless', description: 'a: building' });
    assert.deepEqual(p.contexts(target, SHA), ['sless']);
    await p.close();
  });

  it('a post that fails is logged and retried with backoff until it goes through; post() never waits or throws', async () => {
    reset();
    answers = [502, 503];
    const p = poster();
    const t0 = Date.now();
    p.post(target, SHA, [{ context: 'sless', state: 'success', description: 'ok' }]);
    assert.ok(Date.now() - t0 < 50);
    await p.idle();
    assert.equal(received.length, 3);
    assert.equal(logs.filter((l) => l.startsWith('warn') && /HTTP 50[23].*retrying in \d+ ms/.test(l)).length, 2);
    assert.ok(logs.at(-1)?.startsWith('info commit status gitea acme/functions@bbbbbbbbbbbb sless=success posted'));
    await p.close();
  });

  it('a newer status for the same context replaces one still waiting for its retry', async () => {
    reset();
    answers = [500];
    const p = new CommitStatusPoster({ logger, targets: TargetPolicy.anyTarget(), retry: { baseMs: 200, maxMs: 200, attempts: 4 } });
    p.post(target, SHA, [{ context: 'sless', state: 'pending', description: 'building' }]);
    await new Promise((r) => setTimeout(r, 50));
    p.post(target, SHA, [{ context: 'sless', state: 'success', description: 'done' }]);
    await p.idle();
    assert.deepEqual(received.map((r) => r.body.state), ['pending', 'success']);
    await p.close();
  });

  it('a refusal retrying cannot fix (403) is logged once with a hint and dropped; so is a server that never answers, after the last attempt', async () => {
    reset();
    answers = [403];
    const p = poster();
    p.post(target, SHA, [{ context: 'sless', state: 'success', description: 'ok' }]);
    await p.idle();
    assert.equal(received.length, 1);
    assert.match(logs.join('\n'), /not posted: HTTP 403 .*may not write commit statuses/);
    const down = statusTarget({ url: 'http://127.0.0.1:9/acme/functions.git', token: 'tok' });
    assert.ok(!('error' in down));
    p.post(down, SHA, [{ context: 'sless', state: 'success', description: 'ok' }]);
    await p.idle();
    assert.match(logs.join('\n'), /gave up after 4 attempts/);
    await p.close();
  });

  // The pinned resolution the git fetches use (test/integration/source-targets.test.ts): a resolver
  // the test controls stands for DNS, so a name can answer a public address at sync time and
  // loopback at post time (DNS rebinding).
  const forge = (answers: string[]): typeof import('node:dns').lookup =>
    ((host: string, _o: unknown, cb: (e: Error | null, a: LookupAddress[]) => void) => {
      if (host !== 'forge.test') return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
      cb(null, [{ address: answers.length > 1 ? answers.shift()! : answers[0]!, family: 4 }]);
    }) as never;
  const forgeTarget = (): StatusTarget => {
    const t = statusTarget({ url: `http://forge.test:${(server.address() as AddressInfo).port}/acme/functions.git`, token: 'tok' });
    assert.ok(!('error' in t));
    return t;
  };

  it('posts through the policy\'s pinned resolution: an allowed name only the policy resolves is reached', async () => {
    reset();
    const p = new CommitStatusPoster({ logger, targets: TargetPolicy.publicOnly({ allow: ['forge.test'], lookup: forge(['127.0.0.1']) }), retry: { baseMs: 10, maxMs: 20, attempts: 2 } });
    p.post(forgeTarget(), SHA, [{ context: 'sless', state: 'success', description: 'ok' }]);
    await p.idle();
    assert.equal(received.length, 1, logs.join('\n'));
    assert.equal(received[0]?.auth, 'token tok');
    await p.close();
  });

  it('a name that resolved public at sync time and resolves to 127.0.0.1 at post time gets no POST (no token): refused, not retried', async () => {
    reset();
    const targets = TargetPolicy.publicOnly({ lookup: forge(['203.0.113.7', '127.0.0.1']) });
    // The sync's check: public.
    const atSync = await new Promise<string>((resolve, reject) => targets.lookup('forge.test', { all: true }, (e, a) => (e ? reject(e) : resolve((a as unknown as LookupAddress[])[0]!.address))));
    assert.equal(atSync, '203.0.113.7');
    const p = new CommitStatusPoster({ logger, targets, retry: { baseMs: 10, maxMs: 20, attempts: 4 } });
    p.post(forgeTarget(), SHA, [{ context: 'sless', state: 'success', description: 'ok' }]);
    await p.idle();
    assert.equal(received.length, 0, 'the loopback server got nothing');
    assert.match(logs.join('\n'), /not posted: .*forge\.test resolves to a loopback address/);
    assert.equal(logs.filter((l) => /retrying/.test(l)).length, 0, 'a refusal is not retried');
    await p.close();
  });
});
