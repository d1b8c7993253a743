// /fn's activator (issue 29): a call for a function scaled to zero is held, not refused, while the
// platform wakes one replica, then forwarded. Platform-agnostic: it needs only FunctionScaling.
// - One wake per function however many calls arrive together: they all wait on the same promise.
// - The wait is bounded by the function's timeout_sec and SLESS_COLD_START_TIMEOUT, whichever is
//   shorter; past it the caller gets 503 with Retry-After (cold_start_timeout).
// - A caller that goes away stops waiting at once (its in-flight slot is released by the proxy).
// - The body is not read while the call waits: it stays in the socket's buffers (TCP pushes back on
//   the sender), and the existing body limit applies when it is forwarded.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Endpoint, FunctionScaling, Platform } from '../platform/types.ts';
import { HttpError } from './errors.ts';

export interface ActivatorOptions {
  readonly platform: Platform;
  readonly scaling: FunctionScaling;
  /** SLESS_COLD_START_TIMEOUT in milliseconds. */
  readonly coldStartTimeoutMs: number;
}

/** Retry-After of a cold start that took too long: the replica may well be up by then. */
const RETRY_AFTER_SEC = 5;

export type Held =
  | { readonly kind: 'ready'; readonly endpoint: Endpoint & { kind: 'ready' } }
  /** The caller went away while it waited. */
  | { readonly kind: 'gone' }
  /** The function changed meanwhile (removed, disabled, a new version starting): answer as for that. */
  | { readonly kind: 'other'; readonly endpoint: Endpoint };

export class Activator {
  readonly #opts: ActivatorOptions;
  /** The wake under way per function. */
  readonly #waking = new Map<string, Promise<void>>();

  constructor(opts: ActivatorOptions) {
    this.#opts = opts;
  }

  /** Wakes under way (for tests and the console). */
  get waking(): number {
    return this.#waking.size;
  }

  /** Holds a call for an idle function until a replica serves; throws the 503 past the bound. */
  async hold(namespace: string, name: string, timeoutSec: number, signal: AbortSignal): Promise<Held> {
    const boundMs = Math.min(timeoutSec * 1000, this.#opts.coldStartTimeoutMs);
    const deadline = AbortSignal.timeout(boundMs);
    const both = AbortSignal.any([signal, deadline]);
    for (;;) {
      try {
        await abortable(this.#wake(namespace, name), both);
      } catch (err) {
        if (signal.aborted) return { kind: 'gone' };
        if (deadline.aborted) {
          throw new HttpError('cold_start_timeout', `function ${namespace}/${name} did not start within ${Math.round(boundMs / 1000)} s; retry`, {
            retryAfterSec: RETRY_AFTER_SEC,
          });
        }
        throw new HttpError('function_not_ready', `function ${namespace}/${name} could not start: ${(err as Error).message}`, { cause: err });
      }
      const endpoint = await this.#opts.platform.resolveEndpoint(namespace, name);
      if (endpoint.kind === 'ready') return { kind: 'ready', endpoint };
      if (endpoint.kind !== 'idle') return { kind: 'other', endpoint };
      // Scaled in again between the wake and this call: wake it again, after a breath so that a
      // platform that keeps answering idle cannot spin this loop until the deadline.
      await sleep(50, undefined, { signal: both }).catch(() => undefined);
    }
  }

  #wake(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    let p = this.#waking.get(key);
    if (!p) {
      // The wake goes on for the calls still waiting even when the one that began it leaves.
      p = this.#opts.scaling.wake(namespace, name).finally(() => this.#waking.delete(key));
      this.#waking.set(key, p);
    }
    return p;
  }
}

/** `p`, or a rejection as soon as `signal` aborts (`p` itself goes on). */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err as Error);
      },
    );
  });
}
