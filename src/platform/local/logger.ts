// The few log calls the local platform makes. `sless dev` passes a console-backed one; tests pass
// one that records lines so they can assert what a user would read.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** Writes `[sless] message` lines to a stream (stdout for `sless dev`). */
export function streamLogger(write: (line: string) => void): Logger {
  const at = (level: string) => (message: string) =>
    write(`${new Date().toISOString().slice(11, 23)} ${level} ${message}\n`);
  return { info: at('info'), warn: at('warn'), error: at('error') };
}
