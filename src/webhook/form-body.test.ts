import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formField, webhookBody } from './form-body.ts';

describe('webhookBody / formField', () => {
  it('JSON bodies are the JSON', () => {
    const raw = Buffer.from('{"a":1}');
    assert.deepEqual(webhookBody('application/json', raw), { form: false, json: raw });
    assert.deepEqual(webhookBody(undefined, raw), { form: false, json: raw });
  });

  it('a form body yields the bytes of its payload field, + as space and %XX as bytes', () => {
    const body = webhookBody('application/x-www-form-urlencoded; charset=utf-8', Buffer.from('x=1&payload=%7B%22a%22%3A+%22%C3%A9%22%7D&payload=second'));
    assert.equal(body.form, true);
    assert.equal(body.json?.toString('utf8'), '{"a": "é"}');
  });

  it('bytes that are not valid UTF-8 come out exactly (they are hashed, not read as text)', () => {
    assert.deepEqual(formField(Buffer.from('payload=%FF%00%C3'), 'payload'), Buffer.from([0xff, 0x00, 0xc3]));
  });

  it('a stray % stays as it is; a missing field is undefined; an empty one is empty', () => {
    assert.equal(formField(Buffer.from('payload=50%25+off%'), 'payload')?.toString(), '50% off%');
    assert.equal(formField(Buffer.from('a=1&b=2'), 'payload'), undefined);
    assert.deepEqual(formField(Buffer.from('payload'), 'payload'), Buffer.alloc(0));
    assert.equal(formField(Buffer.alloc(0), 'payload'), undefined);
  });
});
