import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeBrokerError, PreparedQueueError } from './broker-errors.ts';

// amqplib's errors as it builds them: a channel closed by the broker carries the reply code.
function channelClosed(code: number, text: string, op = 'QueueDeclare'): Error {
  return Object.assign(new Error(`Operation failed: ${op}; ${code} (${text.split(' ')[0]!.replace('_', '-')}) with message "${text}"`), { code });
}
function refused(port: number): Error {
  return Object.assign(new Error(`connect ECONNREFUSED 127.0.0.1:${port}`), { code: 'ECONNREFUSED' });
}

describe('broker errors in a Trigger status', () => {
  it('a missing queue names the broker and what to do', () => {
    const url = 'amqp://rabbit:5672/%2f';
    assert.equal(
      describeBrokerError(channelClosed(404, "NOT_FOUND - no queue 'orders' in vhost '/'"), { url }),
      'does not exist on amqp://rabbit:5672/%2f (create it, or set declare: true)',
    );
  });

  it('a broker whose port holds "404" or "403" is not taken for a missing queue or a refused login', () => {
    for (const port of [40471, 14040, 40312]) {
      const url = `amqp://127.0.0.1:${port}/%2f`;
      assert.equal(describeBrokerError(refused(port), { url }), `cannot reach ${url} (ECONNREFUSED)`);
      assert.equal(describeBrokerError(new Error(`socket closed on ${url}`), { url }), `socket closed on ${url}`);
    }
  });

  it('a step that already said what failed keeps its words when it reaches the connection loop', () => {
    const url = 'amqp://127.0.0.1:40471/%2f';
    const step = new PreparedQueueError('queue "orders" (declare: false)', channelClosed(404, "NOT_FOUND - no queue 'orders' in vhost '/'", 'QueueCheck'), { url });
    assert.equal(step.message, `queue "orders" (declare: false): does not exist on ${url} (create it, or set declare: true)`);
    assert.equal(describeBrokerError(step, { url }), step.message);
  });

  it('a refused login names the secret, or says the guest account logs in from localhost only', () => {
    const login = new Error('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN."');
    const url = 'amqp://rabbit/%2f';
    assert.equal(describeBrokerError(login, { url, secret: 'mq' }), 'the broker at amqp://rabbit/%2f refused the login of secret mq');
    assert.match(describeBrokerError(login, { url }), /no secret: the guest account logs in from localhost only/);
  });

  it('a permission the account lacks is not a refused login', () => {
    const url = 'amqp://rabbit/%2f';
    const perm = channelClosed(403, "ACCESS_REFUSED - access to queue 'orders' in vhost '/' refused for user 'app'");
    assert.match(describeBrokerError(perm, { url }), /access to queue 'orders' in vhost '\/' refused for user 'app'/);
  });
});
