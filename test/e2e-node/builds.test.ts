// Builds interrupted on the real node: a Function deleted mid-build leaves no kaniko pod and
// nothing is pushed after; a leader killed mid-build is replaced by the other replica, which adopts
// the running build instead of starting a second one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoordinationV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

// The build must still be running when it is interrupted: a Node.js function without dependencies
// is built in a second or two by the layer-append step (SLESS_LAYER_BUILDS), which once finished and
// pushed before the Function was deleted (seen on the real node at load 15). Its package.json's
// postinstall holds the dependency step inside kaniko for `installMs`.
const fn = (name: string, word: string, installMs: number) => ({
  [`functions/${name}/function.yaml`]: 'runtime: nodejs20\nentrypoint: handler.handle\n',
  [`functions/${name}/handler.js`]: `exports.handle = async () => ({ word: '${word}' });\n`,
  [`functions/${name}/package.json`]: `${JSON.stringify({ name, version: '1.0.0', private: true, scripts: { postinstall: `node -e "setTimeout(() => {}, ${installMs})"` } }, null, 2)}\n`,
});

describe('interrupted builds on the real node', { timeout: 1_800_000 }, () => {
  let kit: NodeKit;
  let core: CoreV1Api;

  before(async () => {
    kit = await setupNodeKit('e2e-node-builds');
    core = kit.kc.makeApiClient(CoreV1Api);
    // A folder that stays when `doomed` goes: a sync that finds no function folder at all prunes
    // nothing (the safety rule against an emptied tree or a wrong spec.path). Its manifest is
    // broken, so it never builds: the repository keeps it as an error.
    await kit.push({ 'README.md': 'interrupted builds\n', 'functions/keeper/function.yaml': 'runtime: none\n' }, 'init');
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  const buildPods = async (name: string) =>
    (await core.listNamespacedPod({ namespace: kit.buildNs, labelSelector: `sless.kube5s.ru/function-namespace=${kit.ns},sless.kube5s.ru/function=${name}` })).items;
  const tags = async (name: string): Promise<string[]> => {
    const catalog = (await (await fetch(`http://${kit.registry}/v2/_catalog?n=1000`)).json()) as { repositories?: string[] };
    const repos = (catalog.repositories ?? []).filter((r) => r.includes(kit.ns) && r.includes(name));
    const out: string[] = [];
    for (const r of repos) {
      const list = (await (await fetch(`http://${kit.registry}/v2/${r}/tags/list`)).json()) as { tags?: string[] | null };
      out.push(...(list.tags ?? []).map((t) => `${r}:${t}`));
    }
    return out;
  };

  it('leaves no kaniko pod and pushes nothing when the Function is deleted mid-build', async () => {
    await kit.startController('c1');
    await kit.push(fn('doomed', 'never', 600_000), 'doomed');
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(
      async () => {
        const running = (await buildPods('doomed')).filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending');
        assert.ok(running.length > 0, 'a build pod runs');
      },
      { timeoutMs: 300_000, intervalMs: 200 },
    );
    await kit.clone.remove('functions/doomed');
    await kit.clone.commit('remove doomed');
    await kit.clone.push();
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(
      async () => {
        const f = await kit.getFunction('doomed');
        assert.equal(f, undefined, `Function doomed still there: ${JSON.stringify(f?.status)}; repository: ${JSON.stringify((await kit.getRepository('fns'))?.status)}`);
      },
      { timeoutMs: 180_000, intervalMs: 500 },
    );
    await eventually(
      async () => {
        assert.deepEqual(await kit.buildJobs('doomed'), []);
        assert.deepEqual((await buildPods('doomed')).map((p) => p.metadata?.name), []);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    // Whatever a killed push step could have sent would be there by now.
    await new Promise((r) => setTimeout(r, 15_000));
    assert.deepEqual(await tags('doomed'), [], 'nothing was pushed for the deleted Function');
    await kit.controllers[0]!.stop();
  });

  it('has the new leader adopt the build of a killed leader, with no second build', async () => {
    for (const c of [...kit.controllers]) await c.stop();
    const first = await kit.startController('c1');
    const leases = kit.kc.makeApiClient(CoordinationV1Api);
    await eventually(
      async () => assert.equal((await leases.readNamespacedLease({ namespace: kit.ns, name: 'sless-controller' })).spec?.holderIdentity, 'c1'),
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    const second = await kit.startController('c2');
    await kit.push(fn('adopted', 'once', 30_000), 'adopted');
    assert.equal((await kit.webhook('fns')).status, 202);
    await eventually(async () => assert.equal((await kit.buildJobs('adopted')).length, 1), { timeoutMs: 300_000, intervalMs: 200 });
    assert.equal((await kit.buildJobs('adopted'))[0]?.status?.succeeded ?? 0, 0, 'the build still runs when its leader dies');
    await first.kill();
    await eventually(
      async () => assert.equal((await leases.readNamespacedLease({ namespace: kit.ns, name: 'sless-controller' })).spec?.holderIdentity, 'c2'),
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    const done = await kit.waitFunction('adopted', (f) => f.status?.phase === 'Ready');
    const jobs = await kit.buildJobs('adopted');
    assert.equal(jobs.length, 1, 'the running build was adopted, not started again');
    assert.match(done.status?.imageRef ?? '', /@sha256:[0-9a-f]{64}$/);
    const res = await fetch(`${second.url}/fn/${kit.ns}/adopted`);
    assert.deepEqual(await res.json(), { word: 'once' });
  });
});
