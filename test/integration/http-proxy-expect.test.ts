// `Expect: 100-continue` through /fn: curl sends it for bodies from 1 MB. The proxy answers the
// expectation itself (100 once the function is known and the declared size fits, else the final
// status without reading the body) and never passes it on, so the call reaches the function.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { listen, testApp, upstream } from '../helpers/http-test-kit.ts';

const run = promisify(execFile);

describe('/fn and Expect: 100-continue', async () => {
  const seen: Array<{ bytes: number; expect: string | undefined; length: string | undefined }> = [];
  const echo = await upstream((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      seen.push({ bytes, expect: req.headers.expect, length: req.headers['content-length'] });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`got ${bytes} bytes`);
    });
  });
  const { app, platform } = await testApp({ limits: { proxyBodyBytes: 6 * 1024 * 1024 } });
  platform.serve('dev', 'echo', echo.url);
  const base = await listen(app);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-expect-'));
  const twoMb = path.join(dir, 'body.bin');
  await writeFile(twoMb, Buffer.alloc(2 * 1024 * 1024, 7));
  const eightMb = path.join(dir, 'big.bin');
  await writeFile(eightMb, Buffer.alloc(8 * 1024 * 1024, 7));
  after(async () => {
    await app.close();
    await echo.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** curl exactly as a user runs it: it sends Expect: 100-continue itself for a body this size. */
  const curl = async (url: string, file: string) => {
    const { stdout, stderr } = await run('curl', ['-sS', '-v', '--data-binary', `@${file}`, '-o', '-', '-w', '\n%{http_code}', url], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const lines = stdout.trimEnd().split('\n');
    return { status: Number(lines.at(-1)), body: lines.slice(0, -1).join('\n'), verbose: stderr };
  };

  it('a 2 MB body with curl’s own Expect header round-trips', async () => {
    const res = await curl(`${base}/fn/dev/echo`, twoMb);
    assert.match(res.verbose, /> Expect: 100-continue/i, 'curl sent the expectation');
    assert.match(res.verbose, /< HTTP\/1.1 100 Continue/i, 'the proxy answered it');
    assert.equal(res.status, 200, res.body);
    assert.equal(res.body, `got ${2 * 1024 * 1024} bytes`);
    assert.deepEqual(seen.at(-1), { bytes: 2 * 1024 * 1024, expect: undefined, length: String(2 * 1024 * 1024) });
  });

  it('answers 413 and 404 without asking for the body', async () => {
    const big = await curl(`${base}/fn/dev/echo`, eightMb);
    assert.equal(big.status, 413);
    assert.doesNotMatch(big.verbose, /100 Continue/);
    const missing = await curl(`${base}/fn/dev/nope`, twoMb);
    assert.equal(missing.status, 404);
    assert.doesNotMatch(missing.verbose, /100 Continue/);
  });
});
