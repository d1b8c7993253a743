// The console over the KubernetesPlatform (the real API server and S3): the same pages and actions
// as in `sless dev`, read from and written to Function, Trigger, FunctionJob and FunctionRepository
// objects. No controller runs here, so phases stay as the API server has them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { hs256Token, testApp } from '../helpers/http-test-kit.ts';
import { unpacked } from '../helpers/unpacked-code.ts';
import { GROUP, NODE_CODE, setupPlatformKit, VERSION, type PlatformKit } from './kube-platform-kit.ts';

describe('the console on Kubernetes', () => {
  let kit: PlatformKit;
  let app: FastifyInstance;
  let bearer: Record<string, string>;

  before(async () => {
    kit = await setupPlatformKit('console');
    ({ app } = await testApp({ platform: kit.platform }));
    bearer = { authorization: `Bearer ${await hs256Token({ sless_admin: true }, { sub: 'ops' })}` };
    await kit.platform.createFunction(kit.ns, { name: 'kfn', runtime: 'nodejs20' });
    await kit.platform.uploadCode(kit.ns, 'kfn', await unpacked(NODE_CODE));
    await kit.platform.createTrigger(kit.ns, { name: 'kfn-nightly', type: 'cron', functionRef: 'kfn', schedule: '0 3 * * *', timezone: 'Europe/Moscow' });
    await kit.platform.createJob(kit.ns, { name: 'kfn-once', functionRef: 'kfn', eventJson: '{"n":1}', runId: 1 });
    await kit.platform.createRepository(kit.ns, { name: 'team', url: 'https://git.example.com/team/functions.git' });
  });
  after(async () => {
    await app?.close();
    await kit?.dispose();
  });

  it('lists the namespace’s Functions for curl', async () => {
    const res = await app.inject({ url: `/funcs/${kit.ns}`, headers: bearer });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /^kfn\tnodejs20\t(Pending|Building)\t(https:\/\/fn\.example\.test\/fn\/\S+\/kfn|-)\n$/);
  });

  it('shows a function’s page with its source, schedule and job from the cluster', async () => {
    const res = await app.inject({ url: `/funcs/${kit.ns}/functions/kfn`, headers: { ...bearer, accept: 'text/html' } });
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /<th scope="row" data-label="Trigger">kfn-nightly<\/th>/);
    assert.match(res.body, /<th scope="row" data-label="Name">kfn-once<\/th>/);
    assert.match(res.body, /exports\.handle = async \(e\) =&gt;/, 'the source comes back from S3');
    const json = (await app.inject({ url: `/funcs/${kit.ns}/functions/kfn`, headers: { ...bearer, accept: 'application/json' } })).json();
    assert.deepEqual(
      json.jobs.map((j: { name: string; run_id: number }) => [j.name, j.run_id]),
      [['kfn-once', 1]],
    );
  });

  it('switches a Trigger off in the API server', async () => {
    const res = await app.inject({ method: 'PATCH', url: `/funcs/${kit.ns}/triggers/kfn-nightly`, headers: bearer, payload: { enabled: false } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().enabled, false);
    const t = (await kit.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'triggers', name: 'kfn-nightly' })) as TriggerResource;
    assert.equal(t.spec?.enabled, false);
  });

  it('shows the FunctionRepository and asks it to sync', async () => {
    const page = await app.inject({ url: `/funcs/${kit.ns}/repositories`, headers: { ...bearer, accept: 'text/html' } });
    assert.match(page.body, /<code>https:\/\/git\.example\.com\/team\/functions\.git<\/code>/);
    const res = await app.inject({ method: 'POST', url: `/funcs/${kit.ns}/repositories/team/sync`, headers: { ...bearer, accept: 'application/json' } });
    assert.equal(res.statusCode, 202);
  });
});
