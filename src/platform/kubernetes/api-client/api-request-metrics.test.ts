import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Counter, Registry } from 'prom-client';
import { boundedRequestCounter } from './api-request-metrics.ts';

describe('boundedRequestCounter', () => {
  it('counts by verb and resource, and folds label pairs past the bound into `other`', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 't_requests_total', help: 't', labelNames: ['verb', 'resource'], registers: [registry] });
    const count = boundedRequestCounter(counter, 2);
    count('PATCH', 'functions/status');
    count('PATCH', 'functions/status');
    count('LIST', 'functions');
    count('GET', 'pods');
    count('GET', 'secrets');
    count('LIST', 'functions');
    const values = (await counter.get()).values.map((v) => `${v.labels.verb} ${v.labels.resource} ${v.value}`).sort();
    assert.deepEqual(values, ['GET other 2', 'LIST functions 2', 'PATCH functions/status 2']);
  });
});
