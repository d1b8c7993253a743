// Issue 11 item 5: a namespace runs at most SLESS_MAX_BUILDS_PER_NAMESPACE builds at once, also when many
// of its Functions reconcile side by side (SLESS_BUILD_CONCURRENCY of them) and each decides before the
// Job cache shows the Jobs the others have just created (kube-fair-shares once saw 14 of a share of 10).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { conditionOf, DIGEST_A, nodeFunction, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';

const CAP = 3;
const NAMES = Array.from({ length: 12 }, (_, i) => `share-${String(i).padStart(2, '0')}`);
const unfinished = (kit: Kit) =>
  kit.buildJobs().then((jobs) => jobs.filter((j) => !(j.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')));

describe("a namespace's share of builds, with reconciles side by side", () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-share', sharedS3(), { limits: { buildsPerNamespace: CAP }, concurrency: { builds: 16 } });
    await kit.clone.write(Object.assign({}, ...NAMES.map((n) => nodeFunction(n))));
    await kit.clone.commitAndPush('twelve functions');
    await kit.startController();
    await kit.createRepository('many');
  });
  after(() => kit?.dispose());

  it(`never has more than ${CAP} unfinished build Jobs; the rest wait as BuildQueued, then all are built`, async () => {
    let most = 0;
    const deadline = Date.now() + 120_000;
    let built = 0;
    while (built < NAMES.length && Date.now() < deadline) {
      const running = await unfinished(kit);
      most = Math.max(most, running.length);
      assert.ok(running.length <= CAP, `${running.length} build Jobs at once: ${running.map((j) => j.metadata?.name).join(', ')}`);
      if (running.length === CAP) {
        // Hold the full share a moment, so that reconciles of waiting Functions see it full, then finish them.
        await new Promise((r) => setTimeout(r, 1_500));
        const queued = (await kit.listFunctions()).filter((f) => conditionOf(f, 'Reconciling')?.reason === 'BuildQueued');
        assert.ok(queued.length > 0 || built + CAP >= NAMES.length, 'the others wait as BuildQueued');
        for (const job of running) await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
        built += running.length;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(most, CAP, 'the share was used in full');
    assert.equal((await kit.buildJobs()).length, NAMES.length, 'every function was built once');
  });
});

describe('a queued build starts when a slot of its namespace frees', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-slot', sharedS3(), { limits: { buildsPerNamespace: 1 } });
    await kit.clone.write(Object.assign({}, ...['slot-a', 'slot-b', 'slot-c'].map((n) => nodeFunction(n))));
    await kit.clone.commitAndPush('three functions, one build slot');
    await kit.startController();
    await kit.createRepository('slots');
  });
  after(() => kit?.dispose());

  it('within moments of the build before it ending, not at its next look (30 s later)', async () => {
    const waits: number[] = [];
    for (let built = 0; built < 3; built++) {
      const running = await eventuallyOne(kit);
      const ended = Date.now();
      await markJobSucceeded(kit.kc, kit.buildNs, running, { terminationMessage: DIGEST_A });
      if (built < 2) {
        await eventuallyOne(kit, running);
        waits.push(Date.now() - ended);
      }
    }
    assert.ok(waits.every((ms) => ms < 5_000), `the next build started ${waits.join(' ms, ')} ms after the one before it ended`);
  });
});

/** The one unfinished build Job (other than `not`), once there is one. */
async function eventuallyOne(kit: Kit, not?: string): Promise<string> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const names = (await unfinished(kit)).map((j) => j.metadata?.name ?? '').filter((n) => n !== not);
    assert.ok(names.length <= 1, `one build slot, yet ${names.length} unfinished build Jobs: ${names.join(', ')}`);
    if (names.length === 1) return names[0]!;
    assert.ok(Date.now() < deadline, 'no build Job started within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}
