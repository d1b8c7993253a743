// Git credentials go only to the host they were given for (issue 31 item 4): a repository URL with a
// token whose host answers a redirect to another host (followed by `sless dev`, which reaches any
// host, and by the controller with SLESS_GIT_CROSS_HOST_REDIRECTS=1) must not hand the token to that
// host. Two node:http servers on loopback, on different ports, are the two hosts (another port is
// another origin: the browser rule, and the one git's own client follows).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GitSource } from '../../src/source/git-source.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';

interface Seen {
  readonly path: string;
  readonly authorization: string | undefined;
}

/** A server that records each request's Authorization and answers `answer(path)` (a redirect or 404). */
async function recordingServer(answer: (url: string) => string | undefined) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    const location = answer(req.url ?? '');
    if (location) res.writeHead(302, { location }).end();
    else res.writeHead(404).end('no such repository');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('git credentials never follow a redirect to another host', () => {
  let cacheRoot = '';
  const closers: Array<() => Promise<unknown>> = [];
  before(async () => {
    cacheRoot = await mkdtemp(path.join(os.tmpdir(), 'sless-redirect-auth-'));
  });
  after(async () => {
    for (const c of closers.reverse()) await c();
    await rm(cacheRoot, { recursive: true, force: true });
  });

  const cases: Array<[string, () => TargetPolicy]> = [
    ['sless dev (any target)', () => TargetPolicy.anyTarget()],
    ['the controller with SLESS_GIT_CROSS_HOST_REDIRECTS=1', () => TargetPolicy.publicOnly({ allow: ['127.0.0.1'], crossHostRedirects: true })],
  ];
  for (const [who, policy] of cases) {
    it(`${who}: host B gets the redirected request without Authorization; host A got it`, async () => {
      const hostB = await recordingServer(() => undefined);
      closers.push(hostB.close);
      const hostA = await recordingServer((url) => `http://127.0.0.1:${hostB.port}${url}`);
      closers.push(hostA.close);
      const source = new GitSource({
        url: `http://alice:token@127.0.0.1:${hostA.port}/team/repo.git`,
        cacheDir: path.join(cacheRoot, String(closers.length)),
        targets: policy(),
      });
      closers.push(() => source.close());
      await source.sync().then(
        () => assert.fail('host B has no repository: the sync must fail'),
        () => undefined,
      );
      assert.ok(hostA.seen.length > 0, 'host A was asked');
      assert.ok(hostA.seen.every((s) => s.authorization === `Basic ${Buffer.from('alice:token').toString('base64')}`), 'host A gets the credentials it was given for');
      assert.ok(hostB.seen.length > 0, 'the redirect was followed');
      assert.deepEqual(
        hostB.seen.filter((s) => s.authorization !== undefined),
        [],
        'host B must never receive the credentials',
      );
    });
  }

  it('a redirect on the same host keeps the credentials (a moved path)', async () => {
    const host = await recordingServer((url) => (url.startsWith('/old/') ? url.replace('/old/', '/new/') : undefined));
    closers.push(host.close);
    const source = new GitSource({ url: `http://alice:token@127.0.0.1:${host.port}/old/repo.git`, cacheDir: path.join(cacheRoot, 'same'), targets: TargetPolicy.anyTarget() });
    closers.push(() => source.close());
    await source.sync().catch(() => undefined);
    const moved = host.seen.filter((s) => s.path.startsWith('/new/'));
    assert.ok(moved.length > 0, 'the redirect was followed');
    assert.ok(moved.every((s) => s.authorization !== undefined), 'the same host gets the credentials again');
  });
});
