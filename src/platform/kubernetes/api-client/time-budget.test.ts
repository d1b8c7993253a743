import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import PQueue from 'p-queue';
import { FakeTimers } from './fake-timers.ts';
import { RunMeter, TimeBudget } from './time-budget.ts';
import { WorkQueue } from './work-queue.ts';

describe('TimeBudget: run time one group may use', () => {
  const budget = () => new TimeBudget({ share: 0.1, burstMs: 3_000, maxWaitMs: 60_000 });

  it('lets a quiet group spend its burst at once, then pays a debt back at its share', () => {
    const b = budget();
    assert.equal(b.waitMs('ns/a', 0), 0);
    b.charge('ns/a', 2_000, 2_000);
    assert.equal(b.waitMs('ns/a', 2_000), 0, '1 s of the burst left');
    b.charge('ns/a', 2_000, 4_000);
    // 3 s - 4 s + 0.2 s earned meanwhile = -0.8 s: 8 s at a tenth.
    assert.equal(b.waitMs('ns/a', 4_000), 8_000);
    assert.equal(b.waitMs('ns/a', 8_000), 4_000);
    assert.equal(b.waitMs('ns/a', 12_000), 0);
    assert.equal(b.waitMs('ns/other', 4_000), 0, 'another group does not pay for it');
  });

  it('never makes a group wait longer than maxWaitMs, and forgets a group whose burst is whole again', () => {
    const b = budget();
    b.charge('ns/a', 600_000, 600_000);
    assert.equal(b.waitMs('ns/a', 600_000), 60_000);
    assert.equal(b.size, 1);
    assert.equal(b.waitMs('ns/a', 600_000 + 90_000), 0);
    assert.equal(b.size, 0);
  });

  it('makes nobody wait with a share of 1', () => {
    const b = new TimeBudget({ share: 1, burstMs: 0, maxWaitMs: 60_000 });
    b.charge('ns/a', 10_000, 10_000);
    assert.equal(b.waitMs('ns/a', 10_000), 0);
  });
});

/** A minute in 100-ms steps: `each(t)` adds keys, then the handlers whose time is up finish. */
async function aMinute(timers: FakeTimers, running: Map<string, { until: number; done: () => void }>, each: (t: number) => void): Promise<void> {
  const tick = async () => {
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  for (let t = 0; t < 60_000; t += 100) {
    each(t);
    await tick();
    for (const [key, r] of running) {
      if (r.until <= timers.now()) {
        running.delete(key);
        r.done();
      }
    }
    await tick();
    timers.advance(100);
  }
}

describe('WorkQueue with a time budget', () => {
  /** A repository pushed every 200 ms for a minute; each of its syncs runs 500 ms. Answers its syncs and when another repository's ran. */
  async function pushEvery200ms(share: number) {
    const timers = new FakeTimers();
    const pool = new PQueue({ concurrency: 2 });
    const running = new Map<string, { until: number; done: () => void }>();
    const started: Array<[string, number]> = [];
    const q = new WorkQueue({
      name: 'budget',
      pool,
      timers,
      groupOf: (key) => key,
      budget: new TimeBudget({ share, burstMs: 3_000, maxWaitMs: 60_000 }),
      handler: (key) =>
        new Promise<void>((done) => {
          started.push([key, timers.now()]);
          running.set(key, { until: timers.now() + 500, done });
        }),
    });
    await aMinute(timers, running, (t) => {
      if (t % 200 === 0) q.add('abuser/noisy');
      if (t === 30_000) q.add('victim/app');
    });
    q.stop();
    return { noisy: started.filter(([k]) => k === 'abuser/noisy').length, victim: started.find(([k]) => k === 'victim/app')?.[1] };
  }

  it('folds pushes to one repository every 200 ms into at most 20 syncs a minute (a tenth of the time busy, after its burst)', async () => {
    const limited = await pushEvery200ms(0.1);
    const unlimited = await pushEvery200ms(1);
    assert.ok(unlimited.noisy >= 80, `without a budget it syncs back to back: ${unlimited.noisy}`);
    // 3 s of burst (6 syncs at once), then one 500-ms sync per 5 s: about 17.
    assert.ok(limited.noisy <= 20, `with a share of 0.1 it synced ${limited.noisy} times`);
    assert.ok(limited.noisy >= 10, `but it still syncs: ${limited.noisy}`);
  });

  it('never holds back another repository for the noisy one’s debt', async () => {
    const { victim } = await pushEvery200ms(0.1);
    assert.ok(victim !== undefined && victim <= 30_200, `the other repository's sync started at ${victim} ms, added at 30000`);
  });

  /** One repository's queue, a tenth of the time after a 3-s burst; its n-th sync (from 0) takes took(n) ms of fake time. */
  function oneRepository(took: (n: number) => number, onBudgetWait?: (key: string, waitMs: number) => void) {
    const timers = new FakeTimers();
    const started: number[] = [];
    const q = new WorkQueue({
      name: 'budget',
      pool: new PQueue({ concurrency: 1 }),
      timers,
      groupOf: (key) => key,
      budget: new TimeBudget({ share: 0.1, burstMs: 3_000, maxWaitMs: 30_000 }),
      ...(onBudgetWait ? { onBudgetWait } : {}),
      handler: async () => {
        started.push(timers.now());
        const ms = took(started.length - 1);
        // Not a real timer: a setTimeout(0) could still be pending after settle() on a busy machine.
        await Promise.resolve();
        timers.advance(ms);
      },
    });
    const settle = async () => {
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    return { timers, started, q, settle };
  }

  it('does not charge a repository’s first sync in this process (the cold or start-up sync), only those after it', async () => {
    const { timers, started, q, settle } = oneRepository((n) => [6_000, 6_000][n] ?? 100);
    q.add('tenant/repo');
    await settle();
    // A push right after a 6-s start-up sync: it runs at once (the burst is whole), not 30 s later.
    q.add('tenant/repo');
    await settle();
    assert.deepEqual(started, [0, 6_000]);
    // That second 6-s sync is charged: 3 - 6 = -3 s of debt, 30 s at a tenth.
    q.add('tenant/repo');
    await settle();
    assert.equal(started.length, 2, 'the third sync waits for the debt of the second');
    timers.advance(30_000);
    await settle();
    assert.equal(started.length, 3);
    q.stop();
  });

  it('reports a deferral once, with its wait, not again for every push while the key waits', async () => {
    const waits: Array<[string, number]> = [];
    const { timers, q, settle } = oneRepository(() => 6_000, (key, waitMs) => void waits.push([key, waitMs]));
    q.add('tenant/repo'); // the first sync in the process: not charged
    await settle();
    q.add('tenant/repo'); // charged 6 s: 3 s in debt
    await settle();
    for (let i = 0; i < 5; i++) q.add('tenant/repo');
    assert.deepEqual(waits, [['tenant/repo', 30_000]], 'one deferral, reported once');
    timers.advance(30_000);
    await settle();
    q.stop();
  });
});

describe('RunMeter: what a run costs its group', () => {
  it('charges a lone run its wall time, and a run beside another tenant’s two runs a third of it', () => {
    const m = new RunMeter();
    m.start('victim/app', 'victim', 0);
    assert.equal(m.end('victim/app', 1_000), 1_000);
    m.start('abuser/a', 'abuser', 1_000);
    m.start('abuser/b', 'abuser', 1_000);
    m.start('victim/app', 'victim', 1_000);
    assert.equal(m.end('victim/app', 4_000), 1_000, 'three times as long beside two runs of another tenant: charged as one lone second');
    // The abuser's runs side by side do not discount each other; the victim's beside them does, a little.
    assert.equal(m.end('abuser/a', 5_000), 3_000 / 2 + 1_000);
    assert.equal(m.end('abuser/b', 5_000), 3_000 / 2 + 1_000);
  });
});

describe('WorkQueue with a namespace budget', () => {
  /**
   * Namespace `abuser` pushes to 4 repositories every 200 ms each, for a minute (each sync runs 500 ms);
   * namespace `victim`, when present, pushes one repository every 2 s (its syncs run 100 ms). Answers how
   * many syncs each namespace ran.
   */
  async function fourRepositoriesPushed(opts: { victim: boolean; namespaceBudget: boolean }) {
    const timers = new FakeTimers();
    const pool = new PQueue({ concurrency: 8 });
    const running = new Map<string, { until: number; done: () => void }>();
    const started: string[] = [];
    const budget = () => new TimeBudget({ share: 0.1, burstMs: 3_000, maxWaitMs: 30_000 });
    const q = new WorkQueue({
      name: 'budget',
      pool,
      timers,
      groupOf: (key) => key,
      budget: budget(),
      ...(opts.namespaceBudget ? { namespaceBudget: { budget: budget(), contendedMs: 30_000 } } : {}),
      handler: (key) =>
        new Promise<void>((done) => {
          started.push(key);
          running.set(key, { until: timers.now() + (key.startsWith('victim/') ? 100 : 500), done });
        }),
    });
    await aMinute(timers, running, (t) => {
      if (t % 200 === 0) for (let r = 0; r < 4; r++) q.add(`abuser/repo-${r}`);
      if (opts.victim && t % 2_000 === 0) q.add('victim/app');
    });
    q.stop();
    return { abuser: started.filter((k) => k.startsWith('abuser/')).length, victim: started.filter((k) => k.startsWith('victim/')).length };
  }

  it('holds a namespace of many busy repositories to one share while a lighter namespace syncs', async () => {
    const perRepository = await fourRepositoriesPushed({ victim: true, namespaceBudget: false });
    const perNamespace = await fourRepositoriesPushed({ victim: true, namespaceBudget: true });
    // Each repository's own share: 4 x about 17 syncs. The namespace's: 3 s of burst, then 500 ms per 5 s.
    assert.ok(perRepository.abuser >= 50, `four repositories' shares: ${perRepository.abuser} syncs`);
    assert.ok(perNamespace.abuser <= 22, `one namespace's share: ${perNamespace.abuser} syncs`);
    assert.equal(perNamespace.victim, 30, 'the light namespace syncs every push');
  });

  it('does not hold back a namespace that is alone (nobody lighter is waiting for the controller)', async () => {
    const alone = await fourRepositoriesPushed({ victim: false, namespaceBudget: true });
    assert.ok(alone.abuser >= 50, `alone it keeps its repositories' shares: ${alone.abuser} syncs`);
  });
});
