import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cronTriggerName, dnsLabel, functionJobName, httpTriggerName, queueTriggerName } from './generated-names.ts';

describe('names of what schedules and jobs become', () => {
  it('are <fn>-http, <fn>-cron-<schedule>, <fn>-queue-<trigger> and <fn>-<job>', () => {
    assert.equal(httpTriggerName('hello'), 'hello-http');
    assert.equal(queueTriggerName('hello', 'orders'), 'hello-queue-orders');
    assert.equal(cronTriggerName('hello', 'nightly'), 'hello-cron-nightly');
    assert.equal(functionJobName('hello', 'seed'), 'hello-seed');
  });

  it('stay DNS labels when the parts are long, distinct for distinct inputs', () => {
    const fn = 'f'.repeat(53);
    const a = cronTriggerName(fn, 'a'.repeat(40));
    const b = cronTriggerName(fn, `${'a'.repeat(39)}b`);
    assert.ok(a.length <= 63 && b.length <= 63);
    assert.notEqual(a, b);
    assert.equal(dnsLabel(['x', 'y']), 'x-y');
  });
});
