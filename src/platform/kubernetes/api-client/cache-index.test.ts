import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig, type KubernetesObject, type makeInformer } from '@kubernetes/client-node';
import { select, type IndexName } from './cache-index.ts';
import { FakeTimers } from './fake-timers.ts';
import { ResilientInformer } from './resilient-informer.ts';

/** Plays client-node's ListWatch cache: objects by namespace and name, events to the handlers. */
class FakeCache {
  readonly handlers = new Map<string, Array<(x: KubernetesObject) => void>>();
  readonly objects = new Map<string, KubernetesObject>();
  on(verb: string, cb: (x: KubernetesObject) => void) {
    this.handlers.set(verb, [...(this.handlers.get(verb) ?? []), cb]);
  }
  off() {}
  async start() {}
  async stop() {}
  get(name: string, namespace?: string) {
    return this.objects.get(`${namespace ?? ''}/${name}`);
  }
  list(namespace?: string) {
    return [...this.objects.values()].filter((o) => !namespace || o.metadata?.namespace === namespace);
  }
  /** As ListWatch does: store, then tell the handlers. */
  put(o: KubernetesObject) {
    const key = `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
    const verb = this.objects.has(key) ? 'update' : 'add';
    this.objects.set(key, o);
    for (const cb of this.handlers.get(verb) ?? []) cb(o);
  }
  delete(o: KubernetesObject) {
    this.objects.delete(`${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`);
    for (const cb of this.handlers.get('delete') ?? []) cb(o);
  }
}

const trigger = (namespace: string, name: string, functionRef: string): KubernetesObject =>
  ({ apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Trigger', metadata: { namespace, name }, spec: { functionRef } }) as KubernetesObject;

function informer(fake: FakeCache, indexes: IndexName[] = ['functionRef']) {
  const seen: string[][] = [];
  const i: ResilientInformer<KubernetesObject> = new ResilientInformer<KubernetesObject>({
    kubeConfig: new KubeConfig(),
    name: 'triggers',
    path: '/x',
    list: async () => ({ items: [], metadata: {} }),
    timers: new FakeTimers(),
    indexes,
    // What a handler finds by index while it handles the event (the controller enqueues from it).
    onEvent: () => seen.push(i.byIndex('functionRef', 'a/hello').map((o) => o.metadata?.name ?? '')),
    makeInformer: (() => fake) as unknown as typeof makeInformer,
  });
  return { i, seen };
}

const names = (xs: readonly KubernetesObject[]) => xs.map((o) => o.metadata?.name).sort();

describe('cache indexes (lookups by field without scanning the namespace)', () => {
  it('answers the Triggers of one Function, following adds, a changed functionRef and deletes', () => {
    const fake = new FakeCache();
    const { i } = informer(fake);
    fake.put(trigger('a', 'hello-http', 'hello'));
    fake.put(trigger('a', 'hello-cron', 'hello'));
    fake.put(trigger('a', 'other-http', 'other'));
    fake.put(trigger('b', 'hello-http', 'hello')); // same Function name, another namespace
    assert.deepEqual(names(i.byIndex('functionRef', 'a/hello')), ['hello-cron', 'hello-http']);
    assert.deepEqual(names(i.byIndex('functionRef', 'b/hello')), ['hello-http']);

    fake.put(trigger('a', 'hello-cron', 'other')); // moved to another Function
    assert.deepEqual(names(i.byIndex('functionRef', 'a/hello')), ['hello-http']);
    assert.deepEqual(names(i.byIndex('functionRef', 'a/other')), ['hello-cron', 'other-http']);

    fake.delete(trigger('a', 'hello-http', 'hello'));
    assert.deepEqual(names(i.byIndex('functionRef', 'a/hello')), []);
    assert.deepEqual(names(i.byIndex('functionRef', 'nope/x')), []);
  });

  it('is current when the event handler runs', () => {
    const fake = new FakeCache();
    const { seen } = informer(fake);
    fake.put(trigger('a', 'hello-http', 'hello'));
    fake.put(trigger('a', 'hello-http', 'renamed'));
    assert.deepEqual(seen, [['hello-http'], []]);
  });

  it('answers from the cache, not from what the index last saw: an object the cache no longer holds is left out', () => {
    const fake = new FakeCache();
    const { i } = informer(fake);
    fake.put(trigger('a', 'hello-http', 'hello'));
    fake.objects.clear(); // a relist dropped it before its delete event
    assert.deepEqual(i.byIndex('functionRef', 'a/hello'), []);
  });

  it('scans when the informer keeps no such index, with the same answer', () => {
    const fake = new FakeCache();
    const { i } = informer(fake, []);
    fake.put(trigger('a', 'hello-http', 'hello'));
    fake.put(trigger('a', 'other-http', 'other'));
    assert.deepEqual(names(i.byIndex('functionRef', 'a/hello')), ['hello-http']);
  });

  it('select() keeps to the namespace asked for, from an index or by scanning a plain cache', () => {
    const fake = new FakeCache();
    const { i } = informer(fake);
    fake.put(trigger('a', 'hello-http', 'hello'));
    fake.put(trigger('b', 'hello-http', 'hello'));
    assert.deepEqual(names(select(i, 'a', 'functionRef', 'a/hello')), ['hello-http']);
    const plain = { list: (ns?: string) => fake.list(ns) };
    assert.deepEqual(names(select(plain, 'a', 'functionRef', 'a/hello')), ['hello-http']);
    assert.deepEqual(names(select(plain, 'b', 'functionRef', 'a/hello')), []);
  });

  it('keeps the running build Jobs of each Function namespace apart: a Job leaves it when it finishes', () => {
    const fake = new FakeCache();
    const { i } = informer(fake, ['runningBuildsOf']);
    const build = (name: string, fnNs: string, finished?: 'Complete' | 'Failed'): KubernetesObject =>
      ({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { namespace: 'sless-builds', name, labels: { 'sless.kube5s.ru/component': 'build', 'sless.kube5s.ru/function-namespace': fnNs } },
        status: finished ? { conditions: [{ type: finished, status: 'True' }] } : {},
      }) as KubernetesObject;
    fake.put(build('b1', 'team'));
    fake.put(build('b2', 'team'));
    fake.put(build('b3', 'other'));
    fake.put({ apiVersion: 'batch/v1', kind: 'Job', metadata: { namespace: 'team', name: 'run-1' } } as KubernetesObject);
    assert.deepEqual(names(select(i, 'sless-builds', 'runningBuildsOf', 'team')), ['b1', 'b2']);
    fake.put(build('b1', 'team', 'Complete'));
    fake.put(build('b2', 'team', 'Failed'));
    assert.deepEqual(names(select(i, 'sless-builds', 'runningBuildsOf', 'team')), []);
    assert.deepEqual(names(select(i, 'sless-builds', 'runningBuildsOf', 'other')), ['b3']);
  });
});
