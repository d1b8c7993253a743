import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig, type KubernetesObject, type makeInformer } from '@kubernetes/client-node';
import { FakeTimers } from './fake-timers.ts';
import { ResilientInformer } from './resilient-informer.ts';

/** Plays client-node's ListWatch: start() may fail, 'error' stops it until start() is called again. */
class FakeListWatch {
  starts = 0;
  failStarts = 0;
  readonly handlers = new Map<string, Array<(x: unknown) => void>>();
  objects: KubernetesObject[] = [];
  on(verb: string, cb: (x: unknown) => void) {
    this.handlers.set(verb, [...(this.handlers.get(verb) ?? []), cb]);
  }
  off() {}
  emit(verb: string, x?: unknown) {
    for (const cb of this.handlers.get(verb) ?? []) cb(x);
  }
  /** Like ListWatch.doneHandler: 'connect', then the list; a failed list is reported through 'error'. */
  async start() {
    this.starts++;
    this.emit('connect');
    try {
      await this.listFn();
    } catch (err) {
      this.emit('error', err);
    }
  }
  listFn: () => Promise<unknown> = async () => undefined;
  async stop() {}
  get() {
    return undefined;
  }
  list() {
    return this.objects;
  }
}

function setup(fake: FakeListWatch, resyncMs?: number) {
  const timers = new FakeTimers();
  const events: string[] = [];
  const errors: number[] = [];
  const informer = new ResilientInformer<KubernetesObject>({
    kubeConfig: new KubeConfig(),
    name: 'test',
    path: '/x',
    list: async () => ({ items: [], metadata: {} }),
    timers,
    resyncMs,
    backoff: { baseMs: 100, maxMs: 1_000 },
    onEvent: (e, o) => events.push(`${e}:${o.metadata?.name}`),
    onError: (_n, _e, delay) => errors.push(delay),
    makeInformer: ((_kc: unknown, _path: string, listFn: () => Promise<unknown>) => {
      fake.listFn = async () => {
        if (fake.failStarts > 0) {
          fake.failStarts--;
          throw new Error('connection refused');
        }
        return listFn();
      };
      return fake;
    }) as unknown as typeof makeInformer,
  });
  return { informer, timers, events, errors };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ResilientInformer', () => {
  it('restarts the watch with growing backoff after any error, and resets the backoff once connected', async () => {
    const fake = new FakeListWatch();
    const { informer, timers, errors } = setup(fake);
    await informer.start();
    assert.equal(fake.starts, 1);
    fake.failStarts = 1;
    fake.emit('error', new Error('socket hang up'));
    timers.advance(100);
    await tick();
    assert.equal(fake.starts, 2); // failed: another restart is scheduled with a longer delay
    timers.advance(200);
    await tick();
    assert.equal(fake.starts, 3);
    assert.deepEqual(errors, [100, 200]);
    fake.emit('error', new Error('again'));
    assert.deepEqual(errors, [100, 200, 100]);
    await informer.stop();
  });

  it('keeps retrying the first list until it succeeds', async () => {
    const fake = new FakeListWatch();
    fake.failStarts = 2;
    const { informer, timers } = setup(fake);
    const started = informer.start();
    await tick();
    timers.advance(100);
    await tick();
    timers.advance(200);
    await started;
    assert.equal(fake.starts, 3);
  });

  it('replays every cached object each resync period', async () => {
    const fake = new FakeListWatch();
    fake.objects = [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }];
    const { informer, timers, events } = setup(fake, 1_000);
    await informer.start();
    fake.emit('add', { metadata: { name: 'a' } });
    timers.advance(1_000);
    timers.advance(1_000);
    assert.deepEqual(events, ['add:a', 'resync:a', 'resync:b', 'resync:a', 'resync:b']);
    await informer.stop();
  });

  it('stop() also closes a watch that was still connecting, and nothing restarts it afterwards', async () => {
    // Like ListWatch: the watch request is held (and so abortable by stop()) only once it has connected.
    class SlowListWatch extends FakeListWatch {
      watching = false;
      connect!: () => void;
      override async start() {
        await super.start();
        await new Promise<void>((resolve) => (this.connect = resolve));
        this.watching = true;
      }
      override async stop() {
        this.watching = false;
      }
    }
    const fake = new SlowListWatch();
    const { informer, timers } = setup(fake);
    await informer.start(); // listed; the watch is still connecting
    const stopped = informer.stop();
    await tick();
    fake.connect();
    await stopped;
    assert.equal(fake.watching, false);
    fake.emit('error', new Error('aborted'));
    timers.advance(60_000);
    await tick();
    assert.equal(fake.starts, 1);
  });
});
