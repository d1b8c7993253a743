// What /hooks does with a verified (or refused) delivery, decided without I/O.
import type { WebhookVerdict } from '../webhook/parse-webhook.ts';

export type WebhookOutcome = 'accepted' | 'ignored' | 'unauthorized' | 'bad_request';

export interface WebhookDecision {
  readonly provider: string;
  readonly outcome: WebhookOutcome;
  /** For the response body and the log line. */
  readonly message: string;
  /** Handed to requestSync for its log line (provider and delivery). */
  readonly reason: string;
}

export function decideWebhook(verdict: WebhookVerdict, watchedBranch: string): WebhookDecision {
  const provider = verdict.provider;
  const reason = `webhook ${provider}${verdict.deliveryId ? ` delivery ${verdict.deliveryId}` : ''}`;
  const decision = (outcome: WebhookOutcome, message: string): WebhookDecision => ({ provider, outcome, message, reason });
  if (verdict.status === 'rejected') return decision('unauthorized', verdict.error);
  if (verdict.status === 'malformed') return decision('bad_request', verdict.error);
  const event = verdict.event;
  switch (event.kind) {
    case 'ping':
      return decision('ignored', 'ping received; webhook works');
    case 'other':
      return decision('ignored', `event "${event.name}" is not a push; nothing to do`);
    case 'push':
      if (event.branch === undefined) return decision('ignored', `push to ${event.ref} is not a branch push; nothing to do`);
      if (event.branch !== watchedBranch) {
        return decision('ignored', `push to branch ${event.branch}; this repository watches ${watchedBranch}`);
      }
      return decision('accepted', `push to ${event.branch}${event.deleted ? ' (branch deleted)' : ` at ${event.after.slice(0, 12)}`}; sync requested`);
  }
}
