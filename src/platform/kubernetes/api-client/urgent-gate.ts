// Routine syncs step aside while an urgent one (a push webhook's: sync-hint.ts announcesNewHead) runs. The
// urgent sync already starts at once (work-queue.ts urgentPool), but on 2 cores it then shared the machine
// with the ~4 routine syncs beside it (their ls-refs, status writes and the git server and API server work
// they cause): 100 repositories, push 65 ms alone, 169 ms busy. So a routine sync, at each phase boundary
// (before its git round trip, before its uploads and applies, before its status write), waits here while an
// urgent sync runs, and goes on when none does. What is in flight at a boundary finishes; nothing is
// cancelled. Two bounds keep routine syncs from starving: one routine sync waits at most `maxWaitMs` over
// all its boundaries together, and the gate holds nobody once urgent syncs have run back to back (gaps
// shorter than `quietMs`) for `maxHoldMs`: a tenant pushing all the time does not stop everyone's resyncs.
import { realTimers, type Timers } from './timers.ts';

export interface UrgentGateOptions {
  readonly timers?: Timers;
  /** Longest one routine run waits, over all its boundaries together. */
  readonly maxWaitMs: number;
  /** Longest one stretch of urgent runs (back to back) holds routine runs back. */
  readonly maxHoldMs: number;
  /** A pause this long between urgent runs ends their stretch. */
  readonly quietMs: number;
}

export interface GateState {
  /** Urgent runs running now. */
  readonly urgent: number;
  /** When the current stretch of urgent runs began. */
  readonly stretchStart?: number;
}

/** A routine run's account at the gate: one per run, passed to each of its boundaries. */
export interface RoutineTurn {
  waitedMs: number;
}

/** How long a routine run that has waited `waitedMs` so far waits at a boundary now, at most (0: it goes on). */
export function holdMs(state: GateState, now: number, waitedMs: number, opts: Pick<UrgentGateOptions, 'maxWaitMs' | 'maxHoldMs'>): number {
  if (state.urgent <= 0 || state.stretchStart === undefined) return 0;
  return Math.max(0, Math.min(opts.maxWaitMs - waitedMs, state.stretchStart + opts.maxHoldMs - now));
}

interface Waiter {
  release(): void;
}

export class UrgentGate {
  private urgent = 0;
  private stretchStart: number | undefined;
  private lastEnd: number | undefined;
  private readonly waiters = new Set<Waiter>();
  private readonly timers: Timers;

  constructor(private readonly opts: UrgentGateOptions) {
    this.timers = opts.timers ?? realTimers;
  }

  /** An urgent run starts; call the function returned when it ends (calling it again does nothing). */
  begin(): () => void {
    const now = this.timers.now();
    if (this.urgent === 0 && (this.lastEnd === undefined || now - this.lastEnd >= this.opts.quietMs)) this.stretchStart = now;
    this.urgent++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--this.urgent > 0) return;
      this.lastEnd = this.timers.now();
      for (const w of [...this.waiters]) w.release();
    };
  }

  /** A routine run's account: its waits at every boundary count against one `maxWaitMs`. */
  routine(): RoutineTurn {
    return { waitedMs: 0 };
  }

  state(): GateState {
    return { urgent: this.urgent, ...(this.stretchStart === undefined ? {} : { stretchStart: this.stretchStart }) };
  }

  /** A routine run at a phase boundary: resolves at once, or when the urgent runs end, or at its bound. */
  boundary(turn: RoutineTurn): Promise<void> {
    const started = this.timers.now();
    const ms = holdMs(this.state(), started, turn.waitedMs, this.opts);
    if (ms <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let cancel = () => {};
      const waiter: Waiter = {
        release: () => {
          if (!this.waiters.delete(waiter)) return;
          cancel();
          turn.waitedMs += this.timers.now() - started;
          resolve();
        },
      };
      this.waiters.add(waiter);
      cancel = this.timers.after(ms, () => waiter.release());
    });
  }
}
