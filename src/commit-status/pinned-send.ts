// The HTTP POST of a commit status, held to the same TargetPolicy as the repository's git fetches
// (issue 31 item 6): the URL is checked, the host is resolved through the policy and the socket connects
// to exactly the checked address (a name that answered a public address at sync time and loopback now,
// DNS rebinding, is refused before anything is sent), and redirects are not followed. The token travels
// only to an address the policy admits.
import { Agent, request } from 'undici';
import { TargetRefusedError, type TargetPolicy } from '../source/target-policy.ts';
import type { StatusRequest } from './status-target.ts';

const TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 1000;

export interface PinnedSend {
  (req: StatusRequest): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

export function pinnedSend(policy: TargetPolicy): PinnedSend {
  const dispatcher = new Agent({ connect: { timeout: TIMEOUT_MS, lookup: policy.lookup }, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  const send = async (req: StatusRequest) => {
    policy.checkUrl(new URL(req.url));
    try {
      const res = await request(req.url, { method: 'POST', headers: req.headers, body: req.body, dispatcher, signal: AbortSignal.timeout(TIMEOUT_MS) });
      const body = await res.body.text().catch(() => '');
      return { status: res.statusCode, body: body.slice(0, MAX_ANSWER_BYTES) };
    } catch (err) {
      // The policy's refusal from the resolver comes wrapped by the HTTP client: hand it over as itself.
      throw refusalIn(err) ?? err;
    }
  };
  return Object.assign(send, { close: () => dispatcher.close() });
}

/** The TargetRefusedError in `err` or its causes, if any. */
export function refusalIn(err: unknown): TargetRefusedError | undefined {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof TargetRefusedError) return e;
  }
  return undefined;
}
