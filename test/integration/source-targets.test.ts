// No SSRF through repository URLs (issue 11 item 2), against the real git server of the tests (on
// loopback) and small node:http servers that stand for internal services: what the controller's policy
// refuses gets no request at all, or no request after a refused redirect, and the error says why
// without echoing anything the target answered. Sizes past the fetch limit stop the sync.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GitSource } from '../../src/source/git-source.ts';
import { GitSourceError } from '../../src/source/git-source-error.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';
import { createRepo, sharedGitServer, WorkClone, type TestRepo } from '../helpers/git-server.ts';

const SECRET_ANSWER = 'internal-service-says-hunter2';

/** An "internal service": counts requests, answers a secret, or redirects where it is told. */
async function internalServer(redirectTo?: (req: http.IncomingMessage) => string) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (redirectTo) {
      res.writeHead(302, { location: redirectTo(req) }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-advertisement' }).end(SECRET_ANSWER);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    get requests() {
      return requests;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A resolver that maps test names to loopback, as an attacker's DNS name pointing inside would. */
const names: typeof import('node:dns').lookup = ((
  host: string,
  _o: unknown,
  cb: (e: Error | null, a: LookupAddress[]) => void,
) => {
  if (host.endsWith('.test')) return cb(null, [{ address: '127.0.0.1', family: 4 }]);
  cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
}) as never;

describe('git sources: only targets the policy admits', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  let repo: TestRepo;
  let cacheRoot = '';
  const source = (url: string, targets: TargetPolicy, extra: { maxResponseBytes?: number } = {}) => {
    const s = new GitSource({
      url,
      cacheDir: path.join(cacheRoot, String(cleanups.length)),
      targets,
      ...(extra.maxResponseBytes ? { http: extra } : {}),
    });
    cleanups.push(() => s.close());
    return s;
  };
  const refused = async (work: Promise<unknown>, pattern: RegExp): Promise<GitSourceError> => {
    const err = await work.then(
      () => assert.fail('the sync must be refused'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof GitSourceError, String(err));
    assert.equal(err.reason, 'refused', err.message);
    assert.equal(err.retryable, false);
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes(SECRET_ANSWER), err.message);
    return err;
  };

  before(async () => {
    cacheRoot = await mkdtemp(path.join(os.tmpdir(), 'sless-targets-'));
    repo = await createRepo(sharedGitServer(), 'targets');
    const clone = await WorkClone.create(repo);
    await clone.write({
      'a/function.yaml': 'runtime: nodejs20\n',
      'a/big.txt': randomBytes(20_000).toString('hex'),
    });
    await clone.commitAndPush('one function');
    await clone.dispose();
  });
  after(async () => {
    for (const c of cleanups.reverse()) await c();
    await rm(cacheRoot, { recursive: true, force: true });
  });

  it('refuses loopback and metadata addresses before sending anything', async () => {
    const internal = await internalServer();
    cleanups.push(() => internal.close());
    const policy = TargetPolicy.publicOnly();
    await refused(
      source(`http://127.0.0.1:${internal.port}/x.git`, policy).sync(),
      /127\.0\.0\.1:\d+ is a loopback address.*SLESS_GIT_ALLOWED_HOSTS/,
    );
    await refused(
      source('http://169.254.169.254/latest/meta-data.git', policy).sync(),
      /link-local \(cloud metadata\)/,
    );
    await refused(source(`http://localhost:${internal.port}/x.git`, policy).sync(), /loopback name/);
    assert.equal(internal.requests, 0);
  });

  it('refuses a name that resolves to an internal address (checked after DNS resolution)', async () => {
    const internal = await internalServer();
    cleanups.push(() => internal.close());
    const err = await refused(
      source(
        `http://innocent.test:${internal.port}/x.git`,
        TargetPolicy.publicOnly({ lookup: names }),
      ).sync(),
      /innocent\.test resolves to a loopback address/,
    );
    assert.ok(!err.message.includes('127.0.0.1'), 'the message names the category, not the internal address');
    assert.equal(internal.requests, 0);
  });

  it('syncs from an allowlisted host (an in-cluster Gitea) by name', async () => {
    const port = new URL(repo.url).port;
    const policy = TargetPolicy.publicOnly({ allow: ['gitea.test'], lookup: names });
    const result = await source(repo.url.replace('127.0.0.1', 'gitea.test'), policy).sync();
    assert.match(result.revision, /^[0-9a-f]{40}$/);
    assert.ok(port);
  });

  it('refuses a redirect to another host, and an allowed host redirecting inside does not reach the target', async () => {
    const target = await internalServer();
    cleanups.push(() => target.close());
    const redirector = await internalServer(
      () => `http://127.0.0.1:${target.port}/x.git/info/refs?service=git-upload-pack`,
    );
    cleanups.push(() => redirector.close());
    const sameHostOnly = TargetPolicy.publicOnly({ allow: ['gitea.test'], lookup: names });
    await refused(
      source(`http://gitea.test:${redirector.port}/x.git`, sameHostOnly).sync(),
      /redirected to another host/,
    );
    const crossHost = TargetPolicy.publicOnly({
      allow: ['gitea.test'],
      lookup: names,
      crossHostRedirects: true,
    });
    await refused(
      source(`http://gitea.test:${redirector.port}/x.git`, crossHost).sync(),
      /127\.0\.0\.1:\d+ is a loopback address/,
    );
    assert.equal(redirector.requests, 2);
    assert.equal(target.requests, 0);
  });

  it('sless dev (anyTarget) reaches the local git server', async () => {
    const result = await source(repo.url, TargetPolicy.anyTarget()).sync();
    assert.match(result.revision, /^[0-9a-f]{40}$/);
  });

  it('stops a fetch past the size limit: too-large, not retried', async () => {
    const err = await source(repo.url, TargetPolicy.anyTarget(), { maxResponseBytes: 4_000 })
      .sync()
      .then(
        () => assert.fail('the fetch must stop'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof GitSourceError, String(err));
    assert.equal(err.reason, 'too-large', err.message);
    assert.equal(err.retryable, false);
    assert.match(err.message, /more than 4000 bytes.*SLESS_GIT_MAX_FETCH_BYTES/);
  });
  it('the git command line (a hinted head skips ls-remote, so git fetches first) is held to the same policy', async () => {
    const hint = { head: 'd'.repeat(40) };
    const internal = await internalServer();
    cleanups.push(() => internal.close());
    await refused(
      source(`http://127.0.0.1:${internal.port}/x.git`, TargetPolicy.publicOnly()).sync(hint),
      /loopback address/,
    );
    await refused(
      source(`http://innocent.test:${internal.port}/x.git`, TargetPolicy.publicOnly({ lookup: names })).sync(
        hint,
      ),
      /resolves to a loopback address/,
    );
    assert.equal(internal.requests, 0);
    // git connects to the address the policy checked (gitea.test is no name the system resolver knows).
    const allowed = source(
      repo.url.replace('127.0.0.1', 'gitea.test'),
      TargetPolicy.publicOnly({ allow: ['gitea.test'], lookup: names }),
    );
    assert.equal(await allowed.cli(), true, 'git is installed on test machines');
    assert.match((await allowed.sync(hint)).revision, /^[0-9a-f]{40}$/);
    const target = await internalServer();
    cleanups.push(() => target.close());
    const redirector = await internalServer(
      () => `http://127.0.0.1:${target.port}/x.git/info/refs?service=git-upload-pack`,
    );
    cleanups.push(() => redirector.close());
    const viaRedirect = source(
      `http://gitea.test:${redirector.port}/x.git`,
      TargetPolicy.publicOnly({ allow: ['gitea.test'], lookup: names, crossHostRedirects: true }),
    );
    await viaRedirect.sync(hint).then(
      () => assert.fail('a redirect must not be followed'),
      (e: unknown) => assert.ok(e instanceof GitSourceError && !e.message.includes(SECRET_ANSWER), String(e)),
    );
    assert.equal(target.requests, 0);
    const err = await source(repo.url, TargetPolicy.anyTarget(), { maxResponseBytes: 4_000 })
      .sync(hint)
      .then(
        () => assert.fail('the fetch must stop'),
        (e: unknown) => e,
      );
    assert.ok(err instanceof GitSourceError && err.reason === 'too-large', String(err));
  });
});
