// Cron schedules for `sless dev`: one croner job per enabled cron trigger, in the trigger's IANA time
// zone. A tick that comes while the previous run of the same trigger is still going is skipped (like
// a CronJob with concurrencyPolicy Forbid).
import { Cron } from 'croner';

export interface ScheduleEntry {
  /** Unique key, e.g. `namespace/trigger`. */
  readonly key: string;
  readonly cron: string;
  readonly timezone?: string;
  readonly run: () => Promise<void>;
}

export class LocalScheduler {
  readonly #jobs = new Map<string, { cron: Cron }>();

  /** Adds or replaces the schedule under `entry.key`. */
  set(entry: ScheduleEntry): void {
    this.#jobs.get(entry.key)?.cron.stop();
    const cron = new Cron(entry.cron, { timezone: entry.timezone, protect: true, catch: true }, async () => {
      await entry.run();
    });
    this.#jobs.set(entry.key, { cron });
  }

  delete(key: string): void {
    this.#jobs.get(key)?.cron.stop();
    this.#jobs.delete(key);
  }

  keys(): string[] {
    return [...this.#jobs.keys()];
  }

  nextRun(key: string): Date | null {
    return this.#jobs.get(key)?.cron.nextRun() ?? null;
  }

  stopAll(): void {
    for (const { cron } of this.#jobs.values()) cron.stop();
    this.#jobs.clear();
  }
}
