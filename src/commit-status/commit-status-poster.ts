// Posts commit statuses without ever holding up a deploy: post() returns at once, each status goes
// out in the background, a status already posted is not posted again, a failed post is logged and
// retried with backoff (a newer status for the same commit and context replaces the retry), and a
// refusal that retrying cannot fix (401, 403, 404, 422, an address the TargetPolicy refuses) is logged
// once and dropped. Posts go out through the policy's pinned resolution (pinned-send.ts).
import type { TargetPolicy } from '../source/target-policy.ts';
import { pinnedSend, refusalIn } from './pinned-send.ts';
import { decideRetry } from './retry-policy.ts';
import type { CommitStatus } from './decide-commit-status.ts';
import { describeTarget, statusRequest, type StatusRequest, type StatusTarget } from './status-target.ts';

export interface StatusLogger {
  info(msg: string): void;
  warn(msg: string): void;
}

/** One HTTP POST; resolves with the status code and (a bounded piece of) the answer's body. */
export type SendStatus = (request: StatusRequest) => Promise<{ status: number; body: string }>;

export interface CommitStatusPosterOptions {
  readonly logger: StatusLogger;
  /** Which addresses a status may go to: the repository syncs' policy. */
  readonly targets: TargetPolicy;
  /** Instead of the POST through `targets` (tests). */
  readonly send?: SendStatus;
  readonly retry?: { readonly baseMs: number; readonly maxMs: number; readonly attempts: number };
}

interface Slot {
  /** What was last posted successfully. */
  posted?: string;
  /** What is wanted (posted or still to post). */
  wanted: { key: string; status: CommitStatus };
  timer?: NodeJS.Timeout;
  inFlight?: Promise<void>;
  attempts: number;
}

const MAX_SLOTS = 2000;

export class CommitStatusPoster {
  readonly #opts: CommitStatusPosterOptions;
  readonly #send: SendStatus;
  readonly #closeSend: () => Promise<void>;
  readonly #slots = new Map<string, Slot>();
  #closed = false;

  constructor(opts: CommitStatusPosterOptions) {
    this.#opts = opts;
    const pinned = opts.send ? undefined : pinnedSend(opts.targets);
    this.#send = opts.send ?? pinned!;
    this.#closeSend = pinned ? pinned.close : () => Promise.resolve();
  }

  /** Queues the statuses for one commit; never throws, never waits. */
  post(target: StatusTarget, sha: string, statuses: readonly CommitStatus[]): void {
    if (this.#closed) return;
    for (const status of statuses) {
      const id = `${target.apiUrl}|${target.repository}|${sha}|${status.context}`;
      const key = dedupeKey(target, status);
      let slot = this.#slots.get(id);
      if (slot?.wanted.key === key) continue;
      if (!slot) {
        slot = { wanted: { key, status }, attempts: 0 };
        this.#slots.set(id, slot);
        this.#evict();
      }
      slot.wanted = { key, status };
      slot.attempts = 0;
      if (slot.timer) clearTimeout(slot.timer);
      slot.timer = undefined;
      if (!slot.inFlight) void this.#attempt(target, sha, slot);
    }
  }

  /** The contexts posted (or being posted) on a commit. */
  contexts(target: StatusTarget, sha: string): string[] {
    const prefix = `${target.apiUrl}|${target.repository}|${sha}|`;
    return [...this.#slots.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  /** Resolves when nothing is in flight or waiting for a retry (tests). */
  async idle(): Promise<void> {
    for (;;) {
      const busy = [...this.#slots.values()].filter((s) => s.inFlight || s.timer);
      if (busy.length === 0) return;
      await Promise.all(busy.map((s) => s.inFlight ?? new Promise((r) => setTimeout(r, 20))));
    }
  }

  /** Stops retries; what is in flight finishes. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const s of this.#slots.values()) if (s.timer) clearTimeout(s.timer);
    await Promise.all([...this.#slots.values()].map((s) => s.inFlight));
    await this.#closeSend();
  }

  #attempt(target: StatusTarget, sha: string, slot: Slot): Promise<void> {
    const { key, status } = slot.wanted;
    const where = `${describeTarget(target)}@${sha.slice(0, 12)} ${status.context}=${status.state}`;
    const run = (async () => {
      let outcome: { status: number; body: string } | Error;
      try {
        outcome = await this.#send(statusRequest(target, sha, status));
      } catch (err) {
        outcome = err instanceof Error ? err : new Error(String(err));
      }
      if (!(outcome instanceof Error) && outcome.status >= 200 && outcome.status < 300) {
        slot.posted = key;
        this.#opts.logger.info(`commit status ${where} posted`);
        return;
      }
      slot.attempts += 1;
      const why = outcome instanceof Error ? outcome.message : `HTTP ${outcome.status} ${outcome.body.slice(0, 200)}`;
      const refused = outcome instanceof Error && refusalIn(outcome);
      const decision = refused
        ? { kind: 'drop' as const, hint: 'the address is one the repository syncs may not reach either (SLESS_GIT_ALLOWED_HOSTS)' }
        : decideRetry(outcome instanceof Error ? undefined : outcome.status, slot.attempts, this.#opts.retry);
      if (decision.kind === 'drop') {
        this.#opts.logger.warn(`commit status ${where} not posted: ${why}; ${decision.hint}`);
        return;
      }
      this.#opts.logger.warn(`commit status ${where} not posted (${why}); retrying in ${decision.delayMs} ms`);
      if (this.#closed) return;
      slot.timer = setTimeout(() => {
        slot.timer = undefined;
        void this.#attempt(target, sha, slot);
      }, decision.delayMs);
      slot.timer.unref();
    })();
    slot.inFlight = run;
    return run.finally(() => {
      slot.inFlight = undefined;
      // Superseded while in flight: post the newer one now.
      if (slot.wanted.key !== key && slot.posted !== slot.wanted.key && !slot.timer && !this.#closed) void this.#attempt(target, sha, slot);
    });
  }

  #evict(): void {
    for (const [id, slot] of this.#slots) {
      if (this.#slots.size <= MAX_SLOTS) return;
      if (!slot.inFlight && !slot.timer) this.#slots.delete(id);
    }
  }
}

/**
 * GitLab refuses to "transition" a status to the state it already has (400), so for GitLab only a
 * change of state is posted; elsewhere a new description or link is posted too.
 */
function dedupeKey(target: StatusTarget, status: CommitStatus): string {
  return target.provider === 'gitlab' ? status.state : `${status.state}|${status.description}|${status.targetUrl ?? ''}`;
}
