import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readableJsonLine } from './logger.ts';

const time = Date.UTC(2026, 11, 6, 8, 30, 1, 234);

describe("the HTTP server's JSON lines in sless dev's format", () => {
  it('puts the message first, then the fields (quoted when they hold spaces), then the request id', () => {
    const line = JSON.stringify({ level: 40, time, pid: 1, hostname: 'vm', reqId: 'r-1', provider: 'gitea', reason: 'bad signature', status: 401, msg: 'webhook refused' });
    assert.equal(readableJsonLine(`${line}\n`), '08:30:01.234 warn webhook refused provider=gitea reason="bad signature" status=401 request_id=r-1\n');
  });
  it("shows an error as its type and message, with the stack's frames on indented lines", () => {
    const err = { type: 'TypeError', message: 'x is not a function', stack: 'TypeError: x is not a function\n    at f (/a.js:1:2)\n    at g (/b.js:3:4)' };
    assert.equal(
      readableJsonLine(JSON.stringify({ level: 50, time, err, msg: 'proxying failed' })),
      '08:30:01.234 error proxying failed err="TypeError: x is not a function"\n    at f (/a.js:1:2)\n    at g (/b.js:3:4)\n',
    );
  });
  it('leaves a line that is not a JSON object as it is', () => {
    assert.equal(readableJsonLine('plain text\n'), 'plain text\n');
    assert.equal(readableJsonLine('[1]\n'), '[1]\n');
  });
});
