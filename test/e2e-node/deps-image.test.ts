// A Python function with a requirements.txt on the real node, built as a dependencies image and the
// code appended onto it (src/build/build-kind.ts, `dependencies`): the first build runs pip in kaniko
// for the dependencies image only; a code-only change finds that image in the registry, kaniko has
// nothing to build and the code is one layer on it; a requirements change builds it again. The image is
// the one kaniko builds from the whole Dockerfile (a second controller with SLESS_LAYER_BUILDS=0 builds
// the same function): same config, same files.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { baseImageOf } from '../../src/build/runtime-catalog.ts';
import { requireNode, startWheelIndex } from './node-kit.ts';
import { layerFiles, readImage } from './registry-image.ts';
import { podLogs, setupNodeKit, type NodeKit } from './sless-kit.ts';

const handler = (version: string): string =>
  `import humanize\n\n\ndef handle(event, context):\n    return {"size": humanize.naturalsize(1000000), "version": "${version}"}\n`;

describe('a Python function with requirements.txt: dependencies built once, the code appended', { timeout: 1_200_000 }, () => {
  let kit: NodeKit;
  let whole: NodeKit;
  let wheels: { url: string; stop(): Promise<void> };
  let requirements: string;

  /** Each build Job's logs (every step), oldest first. */
  const buildLogs = async (k: NodeKit): Promise<string[]> => {
    const jobs = (await k.buildJobs('pyfn')).sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
    return Promise.all(jobs.map((j) => podLogs(k.kc, k.buildNs, `job-name=${j.metadata!.name}`, 100_000)));
  };
  const step = (log: string, container: string): string => log.split(/^--- /m).find((s) => s.split('\n')[0]!.endsWith(`/${container}`)) ?? '';
  const dependenciesImage = (log: string): string => /dependencies image (\S+): /.exec(step(log, 'fetch'))?.[1] ?? '';
  const served = async (k: NodeKit, version: string): Promise<number> => {
    const start = Date.now();
    let body: unknown;
    for (let i = 0; i < 600; i++) {
      const res = await k.callFn('pyfn');
      body = await res.json().catch(() => undefined);
      if ((body as { version?: string } | undefined)?.version === version) return Date.now() - start;
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.fail(`version ${version} never served; last answer ${JSON.stringify(body)}`);
  };

  before(async () => {
    const { hostAddress } = requireNode();
    wheels = await startWheelIndex();
    requirements = `--no-index\n--find-links ${wheels.url}\n--trusted-host ${hostAddress}\nhumanize==4.9.0\n`;
    kit = await setupNodeKit('e2e-node-deps');
    whole = await setupNodeKit('e2e-node-depsk', { env: { SLESS_LAYER_BUILDS: '0' } });
    for (const k of [kit, whole]) {
      await k.startController();
      await k.push(
        {
          'functions/pyfn/function.yaml': 'runtime: python3.11\nentrypoint: handler.handle\n',
          'functions/pyfn/requirements.txt': requirements,
          'functions/pyfn/handler.py': handler('v1'),
        },
        'v1',
      );
      await k.createRepository('fns');
    }
  });
  after(async () => {
    await kit?.dispose();
    await whole?.dispose();
    await wheels?.stop();
  });

  it('builds the dependencies image in kaniko, appends the code, and the image is the one kaniko builds whole', async () => {
    const [fn, wholeFn] = await Promise.all([kit, whole].map((k) => k.waitFunction('pyfn', (f) => f.status?.phase === 'Ready')));
    for (const k of [kit, whole]) assert.deepEqual(await (await k.callFn('pyfn')).json(), { size: '1.0 MB', version: 'v1' });
    const [log = ''] = await buildLogs(kit);
    const why = `build log:\n${log.slice(-6000)}`;
    assert.match(step(log, 'fetch'), /dependencies image \S+\/deps:[0-9a-f]{40}: not in the registry, kaniko builds it/, why);
    assert.match(step(log, 'kaniko'), /Successfully installed humanize-4\.9\.0/, why);
    assert.match(step(log, 'push'), /code layer: \d+ entries under \/app\/function\/\n(.*\n)*pushed dependencies image \S+\/deps:[0-9a-f]{40}@sha256:[0-9a-f]{64}\n(.*\n)*pushed \S+\/e2e-node-deps-/, why);
    const [wholeLog = ''] = await buildLogs(whole);
    assert.match(step(wholeLog, 'kaniko'), /COPY function\/ \/app\/function\//, 'the other controller built the whole Dockerfile with kaniko');

    const image = fn!.status!.imageRef!;
    const wholeImage = wholeFn!.status!.imageRef!;
    const [a, b] = await Promise.all([readImage(image), readImage(wholeImage)]);
    const pick = (c: Record<string, unknown> | undefined) => ({ Env: c?.Env, User: c?.User, WorkingDir: c?.WorkingDir, Entrypoint: c?.Entrypoint, Cmd: c?.Cmd, ExposedPorts: c?.ExposedPorts });
    assert.deepEqual(pick(a.config.config), pick(b.config.config), 'the same config');
    assert.ok((a.config.config?.Env as string[]).includes('SLESS_ENTRYPOINT=handler.handle'));
    assert.equal(a.config.config?.User, '10001');
    const base = await readImage(baseImageOf('python3.11', kit.images.runtimeImagePrefix));
    const n = base.manifest.layers.length;
    assert.deepEqual(a.manifest.layers.slice(0, n).map((l) => l.digest), base.manifest.layers.map((l) => l.digest), 'the base image layers, untouched');
    const [files, wholeFiles] = await Promise.all([layerFiles(image, n), layerFiles(wholeImage, n)]);
    const list = (m: Map<string, string>) => [...m].map(([p, e]) => `${p} ${e}`).sort();
    assert.ok(files.get('app/function/handler.py')?.startsWith('0 644 0:0'), `the code, root-owned: ${files.get('app/function/handler.py')}`);
    assert.ok([...files.keys()].some((p) => p.startsWith('app/python-deps/humanize/')), 'the dependency');
    assert.deepEqual(list(files), list(wholeFiles), 'the same files over the base image');
  });

  it('builds a code-only change without kaniko building anything: the code appended onto the same dependencies image', async () => {
    await kit.push({ 'functions/pyfn/handler.py': handler('v2') }, 'v2');
    assert.equal((await kit.webhook('fns')).status, 202);
    const ms = await served(kit, 'v2');
    const logs = await buildLogs(kit);
    assert.equal(logs.length, 2, 'a second build for the code change');
    const log = logs[1]!;
    const why = `second build's log:\n${log.slice(-6000)}`;
    assert.match(step(log, 'fetch'), /dependencies image \S+: in the registry, nothing for kaniko to build/, why);
    assert.equal(dependenciesImage(log), dependenciesImage(logs[0]!), 'the same dependencies image');
    assert.doesNotMatch(step(log, 'kaniko'), /pip|RUN|Collecting|COPY/, why);
    assert.doesNotMatch(step(log, 'fetch'), /layer cache/, `no cache pulled for a build with nothing to build\n${why}`);
    assert.match(step(log, 'push'), /dependencies image \S+: from the registry\n(.*\n)*pushed /, why);
    process.stdout.write(`# code-only change: push → v2 served in ${(ms / 1000).toFixed(1)} s (webhook sent)\n`);
  });

  it('builds the dependencies image again when the requirements change', async () => {
    await kit.push({ 'functions/pyfn/requirements.txt': `${requirements}# pinned again\n`, 'functions/pyfn/handler.py': handler('v3') }, 'v3 requirements');
    assert.equal((await kit.webhook('fns')).status, 202);
    await served(kit, 'v3');
    const logs = await buildLogs(kit);
    assert.equal(logs.length, 3);
    const log = logs[2]!;
    const why = `third build's log:\n${log.slice(-6000)}`;
    assert.match(step(log, 'fetch'), /not in the registry, kaniko builds it/, why);
    assert.notEqual(dependenciesImage(log), dependenciesImage(logs[0]!), 'a new dependencies image');
    assert.match(step(log, 'kaniko'), /RUN .*pip/, why);
    assert.match(step(log, 'push'), /pushed dependencies image/, why);
  });
});
