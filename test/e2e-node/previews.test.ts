// Issue 32 on the real node: one pull request's preview end to end, through a real `sless controller`
// (host process, sless-kit.ts) and the real Gitea (its own webhook deliveries, push and pull_request).
// Three functions on main; a PR changing one of them: the changed function serves its new code at
// /fn/<ns>-pr-<N>/<name> while production serves the old, the two others answer at the preview URL
// from production (no Function of theirs in the preview namespace); merging the PR removes the
// preview (404, its namespace gone, its image's tags gone from the node's registry) and production
// serves the new code.
// Needs SLESS_TEST_SERVICES=node,git,s3,gitea.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { GiteaApi, giteaFromEnv, WorkingCopy } from '../helpers/gitea-api.ts';
import { eventually } from '../helpers/kube.ts';
import { requireNode } from './node-kit.ts';
import { setupNodeKit, WEBHOOK_SECRET, type NodeKit } from './sless-kit.ts';

const env = giteaFromEnv();
if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=node,git,s3,gitea');
const api = new GiteaApi(env);
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
// The kit's controllers take unsigned tokens (SLESS_AUTH_INSECURE=1).
const TOKEN = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'e2e-previews', sless_admin: true, exp: Math.floor(Date.now() / 1000) + 7200 })}.`;

const fn = (name: string, version: string) => ({
  [`functions/${name}/function.yaml`]: 'runtime: nodejs20\n',
  [`functions/${name}/handler.js`]: `exports.handle = async () => ({ fn: '${name}', version: '${version}' });\n`,
});

describe('a pull request preview on the real node', () => {
  let kit: NodeKit;
  let repo: { cloneUrl: string; fullName: string };
  let wc: WorkingCopy;
  let pr: number;
  let preview: string;
  const t0 = { opened: 0 };

  /** The tags of `<registry>/fn/<repository>` (the kit's SLESS_REGISTRY) in the node's registry: none once it is unknown or emptied. */
  const tags = async (repository: string): Promise<string[]> => {
    const res = await fetch(`http://${kit.registry}/v2/fn/${repository}/tags/list`, { signal: AbortSignal.timeout(10_000) });
    if (res.status === 404) return [];
    if (res.status !== 200) throw new Error(`GET /v2/fn/${repository}/tags/list: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { tags?: string[] | null }).tags ?? [];
  };

  let lastBody = '';
  /** What /fn/<namespace>/<name> answers: `<fn> <version>`, or the status code (its body in lastBody). */
  const answer = async (namespace: string, name: string): Promise<string | number> => {
    const res = await fetch(`${kit.url()}/fn/${namespace}/${name}`, { signal: AbortSignal.timeout(30_000) });
    if (res.status !== 200) {
      lastBody = (await res.text()).slice(0, 300);
      return res.status;
    }
    const body = (await res.json()) as { fn: string; version: string };
    return `${body.fn} ${body.version}`;
  };
  const answers = (namespace: string, name: string, want: string | number, timeoutMs = 240_000) =>
    eventually(
      async () => {
        const got = await answer(namespace, name);
        if (got !== want) throw new Error(`/fn/${namespace}/${name} answers ${got} ${typeof got === 'number' ? lastBody : ''}, waiting for ${want}`);
      },
      { timeoutMs, intervalMs: 250 },
    ).catch(async (err: unknown) => {
      const repoStatus = (await kit.getRepository('fns'))?.status;
      const lines = (kit.controllers[0]?.output() ?? '').split('\n').filter((l) => /preview|pull request|pr #/i.test(l));
      throw new Error(`${(err as Error).message}\nstatus.previews: ${JSON.stringify(repoStatus?.previews)}\ncontroller, preview lines:\n${lines.slice(-30).join('\n')}`, { cause: err });
    });

  before(async () => {
    const { hostAddress } = requireNode();
    repo = await api.createRepo(`e2e-previews-${randomBytes(4).toString('hex')}`, { private: false });
    kit = await setupNodeKit('e2e-previews', { env: { SLESS_GIT_ALLOWED_HOSTS: `${hostAddress},${new URL(repo.cloneUrl).host}` } });
    wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
    await wc.commit({ ...fn('alpha', 'v1'), ...fn('beta', 'v1'), ...fn('gamma', 'v1') }, 'three functions', 'main');
    // Gitea numbers a new repository's first pull request 1: the controller watches its preview namespace too.
    const controller = await kit.startController('c1', { SLESS_TEST_WATCH_NAMESPACE: `${kit.ns},${kit.ns}-pr-1` });
    await kit.createRepository('fns', { url: repo.cloneUrl, path: 'functions', interval: '1m', previews: { enabled: true } });
    await api.createHook(repo.fullName, { url: `${controller.url}/hooks/${kit.ns}/fns`, secret: WEBHOOK_SECRET, events: ['push', 'pull_request'] });
    for (const name of ['alpha', 'beta', 'gamma']) await answers(kit.ns, name, `${name} v1`);
  });

  after(async () => {
    if (preview) await kit?.kc.makeApiClient(CoreV1Api).deleteNamespace({ name: preview }).catch(() => undefined);
    await kit?.dispose();
    await wc?.remove();
  });

  it('a PR changing alpha: alpha v2 at the preview URL, v1 in production; beta and gamma answer there from production', async () => {
    await wc.git('checkout', '-q', '-b', 'change-alpha');
    await wc.commit(fn('alpha', 'v2'), 'alpha v2', 'change-alpha');
    t0.opened = Date.now();
    pr = (await api.call<{ number: number }>('POST', `/repos/${repo.fullName}/pulls`, { head: 'change-alpha', base: 'main', title: 'alpha v2' })).number;
    preview = `${kit.ns}-pr-${pr}`;
    assert.equal(pr, 1, 'the first pull request of a new Gitea repository');
    await answers(preview, 'alpha', 'alpha v2');
    console.log(`PR opened → preview served: ${Date.now() - t0.opened} ms`);
    assert.equal(await answer(kit.ns, 'alpha'), 'alpha v1', 'production keeps the old code');
    assert.equal(await answer(preview, 'beta'), 'beta v1');
    assert.equal(await answer(preview, 'gamma'), 'gamma v1');
    const custom = kit.kc.makeApiClient(CustomObjectsApi);
    const built = (await custom.listNamespacedCustomObject({ group: 'sless.kube5s.ru', version: 'v1alpha1', namespace: preview, plural: 'functions' })) as { items: { metadata?: { name?: string } }[] };
    assert.deepEqual(built.items.map((f) => f.metadata?.name), ['alpha'], 'only the changed function is built in the preview');
    const listed = (await (await fetch(`${kit.url()}/v1/namespaces/${kit.ns}/previews`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { number: number; functions: { name: string; state: string }[] }[];
    assert.deepEqual(listed.map((p) => [p.number, p.functions.map((f) => `${f.name}:${f.state}`)]), [[pr, ['alpha:built', 'beta:production', 'gamma:production']]]);
  });

  it("merging the PR removes the preview (its namespace and its image's tags) and production serves the new code", async () => {
    const previewImage = `${preview}-alpha`;
    assert.equal((await tags(previewImage)).length, 1, 'the preview built one image of alpha');
    const productionTags = await tags(`${kit.ns}-alpha`);
    assert.ok(productionTags.length > 0);
    const merged = Date.now();
    await api.call('POST', `/repos/${repo.fullName}/pulls/${pr}/merge`, { Do: 'merge' });
    await answers(kit.ns, 'alpha', 'alpha v2');
    console.log(`merged → production serves the new code: ${Date.now() - merged} ms`);
    await answers(preview, 'alpha', 404, 60_000);
    console.log(`merged → the preview URL answers 404: ${Date.now() - merged} ms`);
    assert.equal(await answer(preview, 'beta'), 404);
    await eventually(
      async () => {
        const ns = await kit.kc
          .makeApiClient(CoreV1Api)
          .readNamespace({ name: preview })
          .catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
        if (ns && !ns.metadata?.deletionTimestamp) throw new Error(`namespace ${preview} is still there`);
      },
      { timeoutMs: 60_000 },
    );
    await eventually(
      async () => {
        const left = await tags(previewImage);
        if (left.length > 0) throw new Error(`${previewImage} still has the tags ${left.join(', ')}`);
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    console.log(`merged → the preview's image tags are gone from the registry: ${Date.now() - merged} ms`);
    const after = await tags(`${kit.ns}-alpha`);
    for (const t of productionTags) assert.ok(after.includes(t), `production's image ${kit.ns}-alpha:${t} stays`);
  });
});
