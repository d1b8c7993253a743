import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { toPlatformError } from './api-errors.ts';
import { envProblem, functionRecord, httpEnabledFrom, jobRecord, managedByOf, replicasOfDeployment, repositoryRecord } from './records.ts';
import { envOf } from './objects/stored-env.ts';

describe('records from sless objects', () => {
  it('reads who manages an object from the repository label', () => {
    assert.equal(managedByOf({ metadata: { labels: { 'sless.kube5s.ru/repository': 'shop' } } }), 'git:shop');
    assert.equal(managedByOf({ metadata: { labels: {} } }), 'api');
  });

  it('fills what the CRDs default and links the public URL', () => {
    const rec = functionRecord({ metadata: { name: 'f', namespace: 'ns' }, spec: { runtime: 'go1.23' } }, { httpEnabled: true, publicBaseUrl: 'https://x.test/' });
    assert.deepEqual(
      [rec.entrypoint, rec.memoryMb, rec.timeoutSec, rec.phase, rec.url, rec.managedBy],
      ['handler.handle', 128, 30, 'Pending', 'https://x.test/fn/ns/f', 'api'],
    );
  });

  it('reads spec.scale as written and status.replicas; a Function without them has neither (old Functions behave as before)', () => {
    const rec = functionRecord(
      { metadata: { name: 'f', namespace: 'ns' }, spec: { runtime: 'go1.23', scale: { min: 0, idle: '30s' } }, status: { replicas: { desired: 0, ready: 0 } } },
      { httpEnabled: true },
    );
    assert.deepEqual([rec.scale, rec.replicas], [{ min: 0, idle: '30s' }, { desired: 0, ready: 0 }]);
    const old = functionRecord({ metadata: { name: 'f', namespace: 'ns' }, spec: { runtime: 'go1.23' } }, { httpEnabled: true });
    assert.deepEqual([old.scale, old.replicas], [undefined, undefined]);
  });
  it('takes replicas from the Deployment when the watches know it, before status.replicas', () => {
    assert.deepEqual(replicasOfDeployment({ spec: { replicas: 3 }, status: { availableReplicas: 2 } }), { desired: 3, ready: 2 });
    assert.deepEqual(replicasOfDeployment({ spec: { replicas: 0 }, status: {} }), { desired: 0, ready: 0 });
    assert.equal(replicasOfDeployment(undefined), undefined);
    const fn = { metadata: { name: 'f', namespace: 'ns' }, spec: { runtime: 'go1.23' as const }, status: { replicas: { desired: 5, ready: 5 } } };
    assert.deepEqual(functionRecord(fn, { httpEnabled: true, replicas: { desired: 2, ready: 1 } }).replicas, { desired: 2, ready: 1 });
    assert.deepEqual(functionRecord(fn, { httpEnabled: true }).replicas, { desired: 5, ready: 5 });
  });
  it('serves a function unless every http Trigger of it is disabled', () => {
    const t = (fn: string, enabled: boolean) => ({ spec: { type: 'http' as const, functionRef: fn, enabled } });
    assert.equal(httpEnabledFrom([], 'f'), true);
    assert.equal(httpEnabledFrom([t('f', false)], 'f'), false);
    assert.equal(httpEnabledFrom([t('f', false), t('f', true)], 'f'), true);
    assert.equal(httpEnabledFrom([t('g', false)], 'f'), true);
  });

  it('does not report the status of an older run as the current one', () => {
    const job = jobRecord({ metadata: { name: 'j', namespace: 'ns' }, spec: { functionRef: 'f', runID: 2 }, status: { runID: 1, phase: 'Succeeded', message: 'old' } });
    assert.deepEqual([job.runId, job.phase, job.message], [2, 'Pending', undefined]);
    const skipped = jobRecord({ metadata: { name: 'j', namespace: 'ns' }, spec: { functionRef: 'f', runID: 0 } });
    assert.equal(skipped.phase, 'Skipped');
  });

  it('gives a repository its defaults, webhook path and Ready condition', () => {
    const rec = repositoryRecord({
      metadata: { name: 'r', namespace: 'ns' },
      spec: { url: 'https://g.test/r.git' },
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'SyncFailed', message: 'boom', lastTransitionTime: '2026-01-01T00:00:00Z' }] },
    });
    assert.deepEqual([rec.branch, rec.path, rec.interval, rec.prune, rec.webhookPath], ['main', '', '1m', true, '/hooks/ns/r']);
    assert.deepEqual(rec.ready, { status: 'False', reason: 'SyncFailed', message: 'boom' });
  });
});

describe('API server errors as platform errors', () => {
  const api = (code: number, status: object) => new ApiException(code, 'x', JSON.stringify(status), {});
  it('maps status codes and reasons', () => {
    assert.equal(toPlatformError(api(404, {}), 'function a/b').code, 'not_found');
    assert.equal(toPlatformError(api(409, { reason: 'AlreadyExists' }), 'function a/b').code, 'already_exists');
    assert.equal(toPlatformError(api(409, { reason: 'Conflict' }), 'function a/b').code, 'unavailable');
    const invalid = toPlatformError(api(422, { message: 'spec.memoryMB: Invalid value: 10' }), 'function a/b');
    assert.equal(invalid.code, 'invalid');
    assert.match(invalid.message, /spec\.memoryMB/);
    assert.equal(toPlatformError(api(403, {}), 'x').code, 'unavailable');
    assert.equal(toPlatformError(new Error('connect ECONNREFUSED'), 'x').code, 'unavailable');
  });
});

describe('env of a Function, in either shape', () => {
  it('reads a map and the old list of {name, value} the same way', () => {
    assert.deepEqual(envOf({ A: '1' }), { A: '1' });
    assert.deepEqual(envOf([{ name: 'A', value: '1' }, { name: 'EMPTY' }]), { A: '1', EMPTY: '' });
    assert.deepEqual(envOf(undefined), {});
  });

  it('says what is wrong with an env the untyped schema let through', () => {
    assert.equal(envProblem({ A: '1' }), undefined);
    assert.equal(envProblem([{ name: 'A', value: '1' }]), undefined);
    assert.match(envProblem({ 'MY-VAR': 'x' }) ?? '', /"MY-VAR" is not a variable name/);
    assert.match(envProblem([{ value: 'x' }]) ?? '', /undefined is not a variable name/);
    assert.match(envProblem({ A: 1 }) ?? '', /spec\.env\.A must be a string/);
    assert.match(envProblem('A=1') ?? '', /must be a map/);
    assert.match(envProblem({ A: 'x\0y' }) ?? '', /spec\.env\.A contains a NUL byte/);
  });

  it('refuses an old entry with valueFrom, pointing to envFromSecrets (issue 31)', () => {
    const env = [{ name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: 'db', key: 'password' } } }];
    assert.match(envProblem(env) ?? '', /spec\.env\.DB_PASSWORD takes its value from a Secret \(valueFrom\), which sless does not read: put the Secret's keys in envFromSecrets: \[db\]/);
  });
});
