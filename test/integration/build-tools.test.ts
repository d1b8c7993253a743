// runtimes/build-tools (the fetch and push steps of a Kubernetes build) passes its Go tests: against a
// registry in memory, fetch brings the context by URL and the function's layer cache (into a folder
// the install user cannot write), push sends the image tarball, writes its digest and pushes only the
// cache entries kaniko added; the context URL's signature never reaches an error message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runOnce } from './runtimes-support.ts';

describe('sless-build-tools', { timeout: 300_000 }, () => {
  it('passes its own tests and go vet', async () => {
    const run = await runOnce(['go', '-C', 'runtimes/build-tools', 'test', '-vet=all', './...'], {}, 240_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  });
});
