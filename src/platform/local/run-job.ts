// One run of a function in job mode (docs/contract.md §4): the runtime server started with SLESS_MODE=job
// and SLESS_EVENT runs the handler once, prints the result as JSON and exits 0 (1 on error). Used by
// FunctionJobs and cron schedules alike.
import type { ChildGroup, CommandSpec } from './child-group.ts';
import type { Logger } from './logger.ts';

export interface JobRunResult {
  readonly succeeded: boolean;
  /** The handler's JSON output on success, else the end of its error output. */
  readonly message: string;
  readonly startTime: string;
  readonly completionTime: string;
}

const MAX_MESSAGE = 8192;

export async function runJob(opts: {
  readonly command: CommandSpec;
  readonly event: unknown;
  readonly timeoutSec: number;
  readonly label: string;
  readonly children: ChildGroup;
  readonly logger: Logger;
}): Promise<JobRunResult> {
  const startTime = new Date().toISOString();
  const env = { ...opts.command.env, SLESS_MODE: 'job', SLESS_EVENT: JSON.stringify(opts.event ?? {}) };
  let child;
  try {
    child = opts.children.spawn({ ...opts.command, env }, { label: opts.label, logger: opts.logger, captureStdout: true });
  } catch (err) {
    return { succeeded: false, message: (err as Error).message, startTime, completionTime: new Date().toISOString() };
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), opts.timeoutSec * 1000)));
  const outcome = await Promise.race([child.exited, timedOut]);
  clearTimeout(timer);
  const completionTime = new Date().toISOString();
  if (outcome === 'timeout') {
    await child.stop(1000);
    return { succeeded: false, message: `timed out after ${opts.timeoutSec} s`, startTime, completionTime };
  }
  if (outcome.code === 0) {
    return { succeeded: true, message: child.stdout().trim().slice(-MAX_MESSAGE), startTime, completionTime };
  }
  const why = child.tail().trim().slice(-MAX_MESSAGE) || `exit ${outcome.code ?? outcome.signal}`;
  return { succeeded: false, message: why, startTime, completionTime };
}
