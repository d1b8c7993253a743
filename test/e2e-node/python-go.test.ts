// A Python function with a requirements.txt and a Go function on the real node. The Python
// dependency comes from a local wheel index the test serves on the node's host address (pods have
// no CA for this machine's HTTPS proxy); a code-only change builds again onto the dependencies image
// the first build pushed (deps-image.test.ts has the details): pip does not run a second time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeServing, requireNode, startWheelIndex } from './node-kit.ts';
import { podLogs, setupNodeKit, type NodeKit } from './sless-kit.ts';

const pyHandler = (version: string): string =>
  `import humanize\n\n\ndef handle(event, context):\n    return {"size": humanize.naturalsize(1000000), "version": "${version}"}\n`;

const goHandler = `package hello

import (
	"context"
	"runtime"
)

type Event struct{}

func Handle(ctx context.Context, event Event) (map[string]string, error) {
	return map[string]string{"lang": "go", "go": runtime.Version()}, nil
}
`;

describe('Python and Go functions on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;
  let wheels: { url: string; stop(): Promise<void> };
  const buildLogs = async (fn: string): Promise<string[]> => {
    const jobs = (await kit.buildJobs(fn)).sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
    return Promise.all(jobs.map((j) => podLogs(kit.kc, kit.buildNs, `job-name=${j.metadata!.name}`, 100_000)));
  };

  before(async () => {
    const { hostAddress } = requireNode();
    kit = await setupNodeKit('e2e-node-py');
    wheels = await startWheelIndex();
    await kit.startController();
    await kit.push(
      {
        'functions/pyhello/function.yaml': 'runtime: python3.11\nentrypoint: handler.handle\n',
        'functions/pyhello/requirements.txt': `--no-index\n--find-links ${wheels.url}\n--trusted-host ${hostAddress}\nhumanize==4.9.0\n`,
        'functions/pyhello/handler.py': pyHandler('v1'),
        'functions/gohello/function.yaml': 'runtime: go1.23\n',
        'functions/gohello/go.mod': 'module example.com/hello\n\ngo 1.23\n',
        'functions/gohello/handler.go': goHandler,
      },
      'py + go',
    );
    await kit.createRepository('fns');
  });
  after(async () => {
    await kit?.dispose();
    await wheels?.stop();
  });

  it('installs requirements.txt into the image and serves the Python function', async () => {
    const fn = await kit.waitFunction('pyhello', (f) => f.status?.phase === 'Ready');
    const res = await kit.callFn('pyhello');
    const text = await res.text();
    const logs = await buildLogs('pyhello');
    const why = `Function status: ${JSON.stringify(fn.status)}\n${logs.length} build Job(s); the first one's log tail:\n${(logs[0] ?? '').slice(-4000)}`;
    if (res.status !== 200) assert.fail(`/fn answered ${res.status} ${text}\n${await describeServing(kit, 'pyhello', res)}\n${why}`);
    assert.deepEqual(JSON.parse(text), { size: '1.0 MB', version: 'v1' }, why);
    assert.match(logs[0] ?? '', /Successfully installed humanize-4\.9\.0/, `pip installed the dependency in the first build\n${why}`);
  });

  it('compiles and serves the Go function', async () => {
    await kit.waitFunction('gohello', (f) => f.status?.phase === 'Ready');
    const res = await kit.callFn('gohello');
    const text = await res.text();
    if (res.status !== 200) assert.fail(`/fn answered ${res.status} ${text}\n${await describeServing(kit, 'gohello', res)}`);
    const body = JSON.parse(text) as { lang: string; go: string };
    assert.equal(body.lang, 'go');
    assert.match(body.go, /^go1\.23/);
  });

  it('reuses the dependencies image on a code-only change', async () => {
    await kit.push({ 'functions/pyhello/handler.py': pyHandler('v2') }, 'py v2');
    assert.equal((await kit.webhook('fns')).status, 202);
    let body: unknown;
    for (let i = 0; i < 600; i++) {
      const res = await kit.callFn('pyhello');
      body = await res.json().catch(() => undefined);
      if ((body as { version?: string } | undefined)?.version === 'v2') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.deepEqual(body, { size: '1.0 MB', version: 'v2' });
    const logs = await buildLogs('pyhello');
    assert.equal(logs.length, 2, 'a second build for the code change');
    assert.doesNotMatch(logs[1]!, /Successfully installed humanize|Collecting humanize/, `pip did not run again; second build's log:\n${logs[1]!.slice(-6000)}`);
    assert.match(logs[1]!, /dependencies image \S+: in the registry, nothing for kaniko to build/, `second build's log:\n${logs[1]!.slice(-6000)}`);
  });
});
