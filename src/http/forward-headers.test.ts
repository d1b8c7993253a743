import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endToEndHeaders, upstreamRequestHeaders } from './forward-headers.ts';

describe('endToEndHeaders', () => {
  it('drops the hop-by-hop headers of RFC 9110 and every header Connection names', () => {
    assert.deepEqual(
      endToEndHeaders({
        connection: 'close, X-Private',
        'x-private': '1',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        trailer: 'x-sum',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        'proxy-authorization': 'Basic x',
        'proxy-connection': 'keep-alive',
        'content-type': 'text/plain',
        'content-length': '3',
        'x-kept': ['a', 'b'],
      }),
      { 'content-type': 'text/plain', 'content-length': '3', 'x-kept': ['a', 'b'] },
    );
  });
});

describe('upstreamRequestHeaders', () => {
  it('moves Host to X-Forwarded-Host and appends the client to X-Forwarded-For', () => {
    assert.deepEqual(upstreamRequestHeaders({ host: 'sless.example', 'x-forwarded-for': '10.0.0.1', accept: '*/*' }, { clientIp: '192.0.2.7', proto: 'https', prefix: '/fn/dev/hello' }), {
      accept: '*/*',
      'x-forwarded-for': '10.0.0.1, 192.0.2.7',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'sless.example',
      'x-forwarded-prefix': '/fn/dev/hello',
    });
  });

  it('never passes Expect on (the proxy answers it), nor Content-Length beside Transfer-Encoding (RFC 9112 §6.3)', () => {
    const fwd = { clientIp: undefined, proto: 'http', prefix: '/fn/dev/f' };
    assert.deepEqual(upstreamRequestHeaders({ expect: '100-continue', 'content-length': '5' }, fwd), {
      'content-length': '5',
      'x-forwarded-proto': 'http',
      'x-forwarded-prefix': '/fn/dev/f',
    });
    assert.deepEqual(upstreamRequestHeaders({ 'transfer-encoding': 'chunked', 'content-length': '5' }, fwd), {
      'x-forwarded-proto': 'http',
      'x-forwarded-prefix': '/fn/dev/f',
    });
  });
});
