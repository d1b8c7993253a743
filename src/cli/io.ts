import type { Writable } from 'node:stream';

/** Where a command writes; tests pass their own streams. */
export interface CommandIo {
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** Every command module exports `run`; the exit code is its result. */
export type CommandRun = (argv: string[], io: CommandIo) => Promise<number>;
