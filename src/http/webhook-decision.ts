// What /hooks does with a verified (or refused) delivery, decided without I/O.
import type { PullRequestEvent, WebhookVerdict } from '../webhook/parse-webhook.ts';

/** `pull_request`: a verified pull-request delivery, for the platform's previews to decide on. */
export type WebhookOutcome = 'accepted' | 'ignored' | 'unauthorized' | 'bad_request' | 'pull_request';

export interface WebhookDecision {
  readonly provider: string;
  readonly outcome: WebhookOutcome;
  /** For the response body and the log line. */
  readonly message: string;
  /** Handed to requestSync for its log line (provider and delivery). */
  readonly reason: string;
  /** An accepted push's new head (40 hex digits): requestSync's hint. */
  readonly head?: string;
  /** Set with the outcome `pull_request`. */
  readonly pullRequest?: PullRequestEvent;
}

const COMMIT = /^[0-9a-f]{40}$/;

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
    case 'pull_request':
      return { ...decision('pull_request', `pull request event (${event.providerAction})`), pullRequest: event };
    case 'delete':
      if (event.refType !== 'branch' || event.name !== watchedBranch) {
        return decision('ignored', `${event.refType} ${event.name} deleted; this repository watches branch ${watchedBranch}`);
      }
      // The sync then reports the missing branch and prunes nothing: what runs keeps running.
      return decision('accepted', `the watched branch ${event.name} was deleted; sync requested`);
    case 'push': {
      // Gitea's test delivery (POST .../hooks/{id}/tests?ref=main) names the branch unqualified.
      const branch = event.branch ?? (event.ref === watchedBranch ? watchedBranch : undefined);
      if (branch === undefined) return decision('ignored', `push to ${event.ref} is not a branch push; nothing to do`);
      if (branch !== watchedBranch) {
        return decision('ignored', `push to branch ${branch}; this repository watches ${watchedBranch}`);
      }
      const what = event.branch === undefined ? `test delivery for ${branch}` : `push to ${branch}`;
      const accepted = decision('accepted', `${what}${event.deleted ? ' (branch deleted)' : ` at ${event.after.slice(0, 12)}`}; sync requested`);
      // A deleted branch's "after" is all zeros; a test delivery's may be anything: only a commit id is a hint.
      return !event.deleted && COMMIT.test(event.after) && !/^0+$/.test(event.after) ? { ...accepted, head: event.after } : accepted;
    }
  }
}
