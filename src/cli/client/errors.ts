// The one kind of error a client command reports: a single line that says what failed and how to fix
// it. run-client.ts prints it as `sless <command>: <message>` and exits 1 (no stack trace).
export class CliError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** An error's message on one line (a server's or the system's text may hold newlines). */
export function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
