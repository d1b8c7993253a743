import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseManifest, parsePlainManifest, parseYamlManifest } from './parse-manifest.ts';
import { checkQueueUrl } from './queue-schema.ts';

const opts = { file: 'fn/function.yaml', dirName: 'fn' };

describe('function.yaml queues', () => {
  it('fills the defaults: declare false, prefetch 10, retries 5, dead_letter <queue>.dlq', () => {
    const text = 'runtime: nodejs22\nqueues:\n  - name: orders\n    url: amqp://mq:5672/%2f\n    queue: orders\n';
    const want = [{ name: 'orders', url: 'amqp://mq:5672/%2f', queue: 'orders', declare: false, prefetch: 10, retries: 5, deadLetter: 'orders.dlq' }];
    assert.deepEqual(parseManifest(text, opts).manifest?.queues, want);
    // the fast reader and the full parser agree
    assert.deepEqual(parsePlainManifest(text, opts)?.manifest?.queues, want);
    assert.deepEqual(parseYamlManifest(text, opts).manifest?.queues, want);
  });

  it('leaves a manifest without queues as it was (no queues key)', () => {
    const m = parseManifest('runtime: nodejs22\n', opts).manifest;
    assert.ok(m);
    assert.equal('queues' in m, false);
  });

  it('refuses credentials in the URL without repeating the password', () => {
    const why = checkQueueUrl('amqp://user:hunter2@mq/%2f');
    assert.match(why ?? '', /carries credentials/);
    assert.doesNotMatch(why ?? '', /hunter2/);
    assert.match(checkQueueUrl('amqp://user@mq') ?? '', /carries credentials/);
    assert.equal(checkQueueUrl('amqps://mq.example.com:5671/prod'), undefined);
    assert.match(checkQueueUrl('amqp://mq/%2f?heartbeat=5') ?? '', /query/);
    assert.match(checkQueueUrl('not a url') ?? '', /not a URL/);
  });

  it('reports a problem with its line through the full parser', () => {
    const text = 'runtime: nodejs22\nqueues:\n  - name: q\n    url: amqp://mq\n    queue: jobs\n    prefetch: 0\n';
    const { problems, manifest } = parseManifest(text, opts);
    assert.equal(manifest, undefined);
    assert.deepEqual(problems.map((p) => `${p.line} ${p.key}`), ['6 queues[0].prefetch']);
  });
});
