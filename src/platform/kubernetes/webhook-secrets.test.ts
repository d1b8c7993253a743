import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GIT_CREDENTIALS_SECRET_TYPE } from './objects/meta.ts';
import { WebhookSecrets, webhookSecretOf } from './webhook-secrets.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('webhook secrets', () => {
  it('a Secret counts only when made for sless', () => {
    assert.deepEqual(webhookSecretOf(undefined), { kind: 'missing' });
    assert.deepEqual(webhookSecretOf({ type: 'Opaque', data: { webhookSecret: b64('x') } }), { kind: 'not-sless' });
    assert.deepEqual(webhookSecretOf({ type: GIT_CREDENTIALS_SECRET_TYPE, data: { webhookSecret: b64('x') } }), { kind: 'found', secret: 'x' });
    assert.deepEqual(webhookSecretOf({ type: GIT_CREDENTIALS_SECRET_TYPE, data: {} }), { kind: 'found' });
  });

  it('reads once per TTL, a refresh at most once per refresh period, and serves the last value when a read fails', async () => {
    let now = 0;
    let reads = 0;
    let value = 'one';
    let failing = false;
    const secrets = new WebhookSecrets({
      ttlMs: 60_000,
      refreshMs: 5_000,
      now: () => now,
      read: async () => {
        reads++;
        if (failing) throw new Error('API server down');
        return { type: GIT_CREDENTIALS_SECRET_TYPE, data: { webhookSecret: b64(value) } };
      },
    });
    await Promise.all(Array.from({ length: 10 }, () => secrets.get('ns', 's')));
    assert.equal(reads, 1);
    value = 'two';
    now = 1_000;
    assert.deepEqual(await secrets.get('ns', 's', { refresh: true }), { kind: 'found', secret: 'one' });
    assert.equal(reads, 1);
    now = 6_000;
    for (let i = 0; i < 10; i++) assert.deepEqual(await secrets.get('ns', 's', { refresh: true }), { kind: 'found', secret: 'two' });
    assert.equal(reads, 2);
    failing = true;
    now = 100_000;
    assert.deepEqual(await secrets.get('ns', 's'), { kind: 'found', secret: 'two' });
    await assert.rejects(secrets.get('ns', 'other'), /API server down/);
  });
});
