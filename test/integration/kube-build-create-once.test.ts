// A build Job is created once even while the Job cache lags behind the create (a loaded API server
// delivers the watch event late, and the Function is reconciled again meanwhile): the controller knows
// the Jobs it just created, so the second reconcile waits for the cache instead of asking again (a 409).
// CI at load 8 once counted "create Job: 2" for one function. Real API server; the lag is made by hiding
// a new build Job from the controller's Job cache for its first 3 s.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { ControllerInformers } from '../../src/platform/kubernetes/controller-informers.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { DIGEST_A, nodeFunction, patchCustom, setupKit, type Kit } from './kube-controller-kit.ts';

describe('a build Job while the Job cache lags', () => {
  let kit: Kit;
  const creates: string[] = [];
  before(async () => {
    kit = await setupKit('kube-create-once');
    await kit.clone.write(nodeFunction('solo'));
    await kit.clone.commitAndPush('one function');
    const controller = await kit.startController();
    const hiddenUntil = new Map<string, number>();
    const { kube } = controller;
    const create = kube.createIfAbsent.bind(kube);
    kube.createIfAbsent = async (obj) => {
      const answer = await create(obj);
      if (obj.kind === 'Job') {
        creates.push(`${obj.metadata?.name ?? ''} ${answer}`);
        if (answer === 'created') hiddenUntil.set(obj.metadata?.name ?? '', Date.now() + 3_000);
      }
      return answer;
    };
    // The informers are the controller's own; reaching them is this test's business only.
    const jobs = (Reflect.get(controller, 'informers') as ControllerInformers).jobs;
    const get = jobs.get.bind(jobs);
    jobs.get = (name: string, namespace?: string): V1Job | undefined => ((hiddenUntil.get(name) ?? 0) > Date.now() ? undefined : get(name, namespace));
  });
  after(() => kit?.dispose());

  it('creates the Job once, and the build goes on when the cache shows it', async () => {
    await kit.createRepository('once');
    await eventually(async () => assert.equal((await kit.getFunction('solo'))?.status?.phase, 'Building'), { timeoutMs: 30_000 });
    // Reconciled again inside the lag: an annotation change is a new event for the Function.
    await patchCustom(kit, 'functions', 'solo', [{ op: 'add', path: '/metadata/labels/poke', value: '1' }]);
    await new Promise((r) => setTimeout(r, 500));
    await patchCustom(kit, 'functions', 'solo', [{ op: 'add', path: '/metadata/labels/poke', value: '2' }]);
    const [job] = await eventually(async () => {
      const list = await kit.buildJobs('solo');
      assert.equal(list.length, 1);
      return list;
    });
    await new Promise((r) => setTimeout(r, 3_500));
    await markJobSucceeded(kit.kc, kit.buildNs, job!.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serve('solo');
    await eventually(async () => assert.equal((await kit.getFunction('solo'))?.status?.phase, 'Ready'), { timeoutMs: 30_000 });
    assert.deepEqual(creates.filter((c) => c.includes('solo')).map((c) => c.split(' ')[1]), ['created']);
  });
});
