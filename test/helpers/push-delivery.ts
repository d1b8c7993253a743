// A signed GitHub-style push delivery, as a git host sends it to /hooks: for tests that post webhooks
// from more than one process (the fair-shares test and its flood child).
import { createHmac } from 'node:crypto';

/** The body and headers of a push of `after` to main, signed with `secret` (X-Hub-Signature-256). */
export function signedPushDelivery(secret: string, after: string): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after, commits: [] });
  const sig = createHmac('sha256', secret).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': after, 'x-hub-signature-256': `sha256=${sig}` } };
}
