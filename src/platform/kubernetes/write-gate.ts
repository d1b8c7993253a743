// One writer at a time (issue 11 item 11): the leader's API writes pass a gate that the leader elector
// keeps open only until renewDeadline after the start of its last successful renewal, well before the
// Lease can expire for anyone else (leaseDuration after they saw that renewal). Closing it (stepping
// down, or the deadline passing while a renewal hangs) refuses every later write and aborts the writes
// still in flight, so reconciles still running while the old leader stops cannot write after the new
// leader took over. Reads pass: they change nothing. The gate sits in the KubeConfig's authentication
// hook, which every API client made from it calls per request (gatedKubeConfig).
import type { KubeConfig } from '@kubernetes/client-node';
import type { Timers } from './api-client/timers.ts';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

export class WriteRefusedError extends Error {
  constructor(why: string) {
    super(`write refused: ${why}`);
    this.name = 'WriteRefusedError';
  }
}

export class WriteGate {
  private until = 0;
  private why = 'this replica does not lead';
  private epoch = new AbortController();
  private cancelExpiry?: () => void;

  /**
   * `timers.after` arms the deadline: writes in flight are aborted when it passes without a renewal.
   * (A per-request timeout fixed at admission would also abort writes whose Lease was renewed meanwhile:
   * under load, when a write takes longer than what was left of the window, every such write failed.)
   */
  constructor(private readonly timers: Pick<Timers, 'now' | 'after'>) {}

  /** Writes may start until `deadline` (this replica's clock); in-flight ones are aborted then unless it is moved on. */
  openUntil(deadline: number): void {
    if (this.epoch.signal.aborted) this.epoch = new AbortController();
    this.until = deadline;
    this.cancelExpiry?.();
    this.cancelExpiry = this.timers.after(Math.max(0, deadline - this.timers.now()), () => {
      if (this.timers.now() >= this.until) this.epoch.abort(new WriteRefusedError('the leader Lease was not renewed in time'));
    });
  }

  /** Refuses writes from now on and aborts those in flight. */
  close(why: string): void {
    this.until = 0;
    this.why = why;
    this.cancelExpiry?.();
    this.epoch.abort(new WriteRefusedError(why));
  }

  get open(): boolean {
    return this.timers.now() < this.until;
  }

  /** For one request: throws when a write may not start; else the signal that aborts it when the gate closes or its deadline passes unrenewed. */
  admit(method: string): AbortSignal | undefined {
    if (READS.has(method.toUpperCase())) return undefined;
    const left = this.until - this.timers.now();
    if (left <= 0) throw new WriteRefusedError(this.until === 0 ? this.why : 'the leader Lease was not renewed in time');
    return this.epoch.signal;
  }
}

interface GatedContext {
  getHttpMethod(): string;
  setSignal(signal: AbortSignal): void;
}

/**
 * The same KubeConfig, but every write its API clients send must pass `gate`. (Watches do not go through
 * this hook; they only read.)
 */
export function gatedKubeConfig(kc: KubeConfig, gate: WriteGate): KubeConfig {
  const gated = Object.create(kc) as KubeConfig;
  gated.applySecurityAuthentication = async (context) => {
    const ctx = context as unknown as GatedContext;
    const signal = gate.admit(ctx.getHttpMethod());
    if (signal) ctx.setSignal(signal);
    await kc.applySecurityAuthentication(context);
  };
  return gated;
}
