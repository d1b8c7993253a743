import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { LABELS } from '../objects/meta.ts';
import { BuildReservations, BuildWaiters, buildShare, buildsInCache, CREATE_SEEN_WITHIN_MS, RESERVATION_TTL_MS } from './build-share.ts';

const BUILDS = 'sless-builds';

/** A Job cache of these Jobs (no index: select() scans it, as it would answer from the index). */
function cacheOf(jobs: readonly V1Job[]) {
  return {
    list: (ns?: string) => jobs.filter((j) => !ns || j.metadata?.namespace === ns),
    get: (name: string, ns?: string) => jobs.find((j) => j.metadata?.name === name && j.metadata?.namespace === ns),
  };
}
const inCache = (jobs: readonly V1Job[], namespace: string) => buildsInCache(cacheOf(jobs), BUILDS, namespace);

function buildJob(namespace: string, finished?: 'Complete' | 'Failed', name = ''): V1Job {
  return {
    metadata: { name, namespace: BUILDS, labels: { [LABELS.component]: 'build', [LABELS.functionNamespace]: namespace } },
    status: finished ? { conditions: [{ type: finished, status: 'True' }] } : {},
  };
}

describe('a namespace’s share of builds', () => {
  it('counts the running build Jobs of that namespace only, not finished ones nor run Jobs', () => {
    const jobs = [
      buildJob('abuser'),
      buildJob('abuser'),
      buildJob('abuser', 'Complete'),
      buildJob('abuser', 'Failed'),
      buildJob('victim'),
      { metadata: { namespace: BUILDS, labels: { [LABELS.functionNamespace]: 'abuser' } } },
    ];
    assert.equal(inCache(jobs, 'abuser').running, 2);
    assert.equal(inCache(jobs, 'victim').running, 1);
    assert.equal(inCache(jobs, 'other').running, 0);
  });

  it('starts a build below the cap and queues it at the cap, saying why and which setting', () => {
    assert.deepEqual(buildShare(9, 10, 'team-a'), { start: true });
    const queued = buildShare(10, 10, 'team-a');
    assert.equal(queued.start, false);
    assert.match(queued.start ? '' : queued.message, /namespace team-a runs 10 builds.*SLESS_MAX_BUILDS_PER_NAMESPACE=10/);
  });

  it('counts the builds just started here that the Job cache does not show yet, so side-by-side reconciles cannot share a slot', () => {
    const slots = new BuildReservations();
    const cache: V1Job[] = [buildJob('team', undefined, 'build-a')];
    assert.equal(slots.take(inCache(cache, 'team'), 'team', 'build-b', 3, 0).start, true);
    assert.equal(slots.take(inCache(cache, 'team'), 'team', 'build-c', 3, 0).start, true);
    const full = slots.take(inCache(cache, 'team'), 'team', 'build-d', 3, 0);
    assert.equal(full.start, false, 'the cache shows one, two more were just taken: the share of 3 is full');
    assert.equal(slots.take(inCache(cache, 'other'), 'other', 'build-x', 3, 0).start, true, 'another namespace has its own share');
  });

  it('lets the cache count a reserved build once it shows its Job, and frees slots released or never seen', () => {
    const slots = new BuildReservations();
    const none = inCache([], 'team');
    slots.take(none, 'team', 'build-a', 2, 0);
    slots.take(none, 'team', 'build-b', 2, 0);
    assert.equal(slots.running(inCache([buildJob('team', undefined, 'build-a')], 'team'), 'team', 1), 2, 'build-a counted once: by the cache');
    assert.equal(slots.running(inCache([buildJob('team', 'Complete', 'build-a')], 'team'), 'team', 1), 1, 'a finished Job frees its slot');
    slots.release('team', 'build-b');
    assert.equal(slots.running(none, 'team', 1), 0, 'a released slot (no context yet, an error) is free');
    slots.take(none, 'team', 'build-c', 2, 0);
    assert.equal(slots.running(none, 'team', RESERVATION_TTL_MS), 0, 'a Job the cache never shows stops counting after the TTL');
  });
});

describe('a build Job this controller just created', () => {
  it('is known as started until the cache shows it or released, and for CREATE_SEEN_WITHIN_MS at most', () => {
    const slots = new BuildReservations();
    assert.equal(slots.startedUnseen('team', 'build-a', 0), false);
    assert.equal(slots.take(inCache([], 'team'), 'team', 'build-a', 3, 0).start, true);
    assert.equal(slots.startedUnseen('team', 'build-a', 1_000), true, 'the next reconcile waits for the cache');
    assert.equal(slots.startedUnseen('other', 'build-a', 1_000), false);
    assert.equal(slots.startedUnseen('team', 'build-a', CREATE_SEEN_WITHIN_MS), false, 'a Job never seen is created again (409 if it exists)');
    slots.release('team', 'build-a'); // the cache shows it now
    assert.equal(slots.startedUnseen('team', 'build-a', 1_000), false);
  });
});

describe('Functions waiting for a build slot', () => {
  it('wakes the one that waited longest when a slot frees, and each waiter once until it looks again', () => {
    const waiters = new BuildWaiters();
    waiters.wait('team', 'team/a');
    waiters.wait('team', 'team/b');
    waiters.wait('other', 'other/x');
    waiters.wait('team', 'team/c');
    waiters.wait('team', 'team/a'); // looked again, still no slot: keeps its place
    assert.equal(waiters.wake('team'), 'team/a');
    // A second slot frees before team/a has looked: the next waiter, not team/a twice.
    assert.equal(waiters.wake('team'), 'team/b');
    assert.equal(waiters.wake('other'), 'other/x');
    assert.equal(waiters.wake('other'), undefined, 'nobody else waits there');
    // team/a looked and found the slot taken by a build started meanwhile: it waits on, first in line.
    waiters.wait('team', 'team/a');
    waiters.done('team', 'team/b'); // team/b took its slot
    assert.equal(waiters.wake('team'), 'team/a');
    assert.equal(waiters.wake('team'), 'team/c');
    assert.equal(waiters.wake('team'), undefined);
    assert.equal(waiters.size, 3, 'team/a, team/c and other/x are still waiting (woken, not yet looked again)');
  });

  it('forgets a waiter that no longer waits (its build started, or its Function went away)', () => {
    const waiters = new BuildWaiters();
    waiters.wait('team', 'team/a');
    waiters.done('team', 'team/a');
    waiters.done('team', 'team/never-waited');
    assert.equal(waiters.wake('team'), undefined);
    assert.equal(waiters.size, 0);
  });
});
