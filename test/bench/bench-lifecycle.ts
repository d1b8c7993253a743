// A benchmark, like a test, stops everything it started, on success, failure and SIGTERM/SIGINT alike,
// and then exits by itself (a leaked socket or timer in a client library must not keep it running
// after its summary). Register each stop as soon as the thing it stops exists; they run in reverse.
export interface BenchLifecycle {
  /** Registers a stop; they run last-registered first. */
  onStop(stop: () => Promise<unknown> | void): void;
}

const STOP_BUDGET_MS = 60_000;

/** Runs `main`, then every registered stop, then exits: 0 on success, 1 on failure, 128+n on signal n. */
export function runBench(main: (life: BenchLifecycle) => Promise<void>): void {
  const stops: Array<() => Promise<unknown> | void> = [];
  let stopping: Promise<void> | undefined;
  const stopAll = (code: number): Promise<void> => {
    stopping ??= (async () => {
      // Never hang on a stop: past the budget, exit anyway (the services' own exit hooks kill their process groups).
      const deadline = setTimeout(() => {
        console.error(`[bench] stopping took longer than ${STOP_BUDGET_MS / 1000} s; exiting`);
        process.exit(code || 1);
      }, STOP_BUDGET_MS);
      deadline.unref();
      for (const stop of stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          console.error(`[bench] a stop failed: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      clearTimeout(deadline);
      process.exit(code);
    })();
    return stopping;
  };
  for (const [signal, n] of [['SIGTERM', 15], ['SIGINT', 2]] as const) {
    process.once(signal, () => {
      console.error(`[bench] ${signal}: stopping what the benchmark started`);
      void stopAll(128 + n);
    });
  }
  main({ onStop: (stop) => void stops.push(stop) }).then(
    () => stopAll(0),
    (err: unknown) => {
      console.error('[bench] failed:', err);
      return stopAll(1);
    },
  );
}
