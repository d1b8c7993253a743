// Every runtime server (runtimes/), run as a real process: job mode (SLESS_MODE=job: one run, the
// result as JSON on stdout, exit 0 or 1), startup errors, and a graceful SIGTERM.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { TARGETS, runOnce, startServer } from './runtimes-support.ts';

const jobEnv = { SLESS_MODE: 'job', SLESS_FUNCTION_NAME: 'seeder', SLESS_NAMESPACE: 'team-b' };

for (const target of TARGETS) {
  describe(`${target.runtime} runtime in job mode and at start and stop`, { timeout: 360_000 }, () => {
    before(() => target.prepare());

    it('runs the handler once with SLESS_EVENT, prints only the result as JSON on stdout and exits 0', async () => {
      const launch = target.contextHandler();
      const run = await runOnce(launch.argv, {
        ...launch.env,
        ...jobEnv,
        SLESS_EVENT: '{"input":[100,200,300]}',
      });
      assert.equal(run.code, 0, run.stderr);
      const lines = run.stdout.trim().split('\n');
      assert.equal(lines.length, 1, `one line of JSON on stdout, got ${JSON.stringify(run.stdout)}`);
      assert.match(run.stderr, /log line from the handler/, "the function's own stdout goes to stderr");
      const out = JSON.parse(lines[0]!) as { event: unknown; context: Record<string, unknown> };
      assert.deepEqual(out.event, { input: [100, 200, 300] });
      assert.equal(out.context.function, 'seeder');
      assert.equal(out.context.namespace, 'team-b');
      assert.equal(typeof out.context.deadline, 'string');
    });

    it('hands a SLESS_EVENT that is not JSON to the handler as a string, and none as {}', async () => {
      const launch = target.contextHandler();
      const text = await runOnce(launch.argv, { ...launch.env, ...jobEnv, SLESS_EVENT: 'plain words' });
      assert.equal(text.code, 0, text.stderr);
      assert.equal((JSON.parse(text.stdout) as { event: unknown }).event, 'plain words');
      const none = await runOnce(launch.argv, { ...launch.env, ...jobEnv });
      assert.equal(none.code, 0, none.stderr);
      assert.deepEqual((JSON.parse(none.stdout) as { event: unknown }).event, {});
    });

    it('calls a handler that takes only the event with the event alone', async () => {
      const launch = target.eventHandler();
      const run = await runOnce(launch.argv, { ...launch.env, ...jobEnv, SLESS_EVENT: '{"a":[1]}' });
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(JSON.parse(run.stdout), { args: 1, event: { a: [1] } });
    });

    it('exits 1 with the error on stderr and nothing on stdout when the handler fails', async () => {
      const launch = target.contextHandler();
      const run = await runOnce(launch.argv, { ...launch.env, ...jobEnv, SLESS_EVENT: '{"fail":true}' });
      assert.equal(run.code, 1);
      assert.match(run.stderr, /job failed on purpose/);
      assert.equal(run.stdout, '');
    });

    it('on SIGTERM finishes the request in flight, closes idle keep-alive connections and exits 0 at once', async () => {
      const server = await startServer(target.contextHandler());
      // An idle keep-alive connection (fetch pools them), as a proxy in front would hold.
      assert.equal((await fetch(`${server.url}/text`)).status, 200);
      const inFlight = fetch(`${server.url}/slow`).then(async (r) => ({
        status: r.status,
        body: await r.json(),
      }));
      await new Promise((r) => setTimeout(r, 250));
      const t0 = Date.now();
      const code = await server.stop();
      assert.deepEqual(await inFlight, { status: 200, body: { slept: true } });
      assert.equal(code, 0, server.stderr());
      assert.ok(Date.now() - t0 < 3000, `exited ${Date.now() - t0} ms after SIGTERM`);
    });

    if (target.nestedHandler) {
      const nested = target.nestedHandler;
      it('loads an entrypoint in a sub-folder that imports its sibling modules', async () => {
        const launch = nested();
        const run = await runOnce(launch.argv, { ...launch.env, ...jobEnv, SLESS_EVENT: '[1]' });
        assert.equal(run.code, 0, run.stderr);
        const out = JSON.parse(run.stdout) as { nested: string; event: unknown };
        assert.deepEqual(out.event, [1]);
        assert.match(out.nested, /^(pkg\.nested|lib\/nested)$/);
      });
    }

    if (target.missingHandler) {
      const missing = target.missingHandler;
      it('refuses to start, naming the entrypoint, when the entrypoint does not exist', async () => {
        const launch = missing();
        const run = await runOnce(launch.argv, { ...launch.env, PORT: '0' });
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /handler\.nothing_here/);
      });
      it('refuses to start when the entrypoint is not "<module>.<function>"', async () => {
        const launch = missing();
        const run = await runOnce(launch.argv, { ...launch.env, PORT: '0', SLESS_ENTRYPOINT: 'handler' });
        assert.notEqual(run.code, 0);
        assert.match(run.stderr, /must look like/);
      });
    }
  });
}

describe('go1.23 build', { timeout: 300_000 }, () => {
  it("passes the Go runtime's own unit tests and go vet (signature checks, result mapping)", async () => {
    const run = await runOnce(['go', '-C', 'runtimes/go/runtime', 'test', '-vet=all', './...'], {}, 240_000);
    assert.equal(run.code, 0, run.stdout + run.stderr);
  });

  it('refuses a function folder without func Handle, saying what it looks for', async () => {
    const run = await runOnce(
      ['sh', 'runtimes/go/build.sh', 'test/fixtures/runtimes/python', '/tmp/never-built'],
      {},
    );
    assert.equal(run.code, 1);
    assert.match(run.stderr, /no 'func Handle\(ctx context.Context, event E\[, c C\]\) \(R, error\)'/);
  });
});

describe('node module formats', { timeout: 60_000 }, () => {
  const node = [process.execPath, 'runtimes/nodejs20/server.js'];
  const jobIn = (fixture: string) => ({
    ...jobEnv,
    SLESS_FUNCTION_DIR: `test/fixtures/runtimes/${fixture}`,
    SLESS_EVENT: '{"n":1}',
  });

  it('loads handler.js as an ES module when the function folder\'s package.json says "type": "module"', async () => {
    const run = await runOnce(node, jobIn('node-esm'));
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { esm: true, event: { n: 1 }, path: '' });
  });

  // Node >= 20.19 / 22.12 load ES module syntax through require() (require(esm)); older ones cannot.
  const requireEsm = (process.features as { require_module?: boolean }).require_module === true;
  it(
    requireEsm
      ? 'runs ES module syntax in handler.js without "type": "module" (this Node has require(esm))'
      : 'explains what to do when a CommonJS handler uses ES module syntax (this Node has no require(esm))',
    async () => {
      const run = await runOnce(node, jobIn('node-esm-syntax'));
      if (requireEsm) {
        assert.equal(run.code, 0, run.stderr);
        assert.equal(JSON.parse(run.stdout), 'never-mind: loaded');
      } else {
        assert.equal(run.code, 1);
        assert.match(
          run.stderr,
          /add "type": "module" to the function's package\.json or name the file \.mjs/,
        );
      }
    },
  );
});
