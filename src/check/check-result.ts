// What `sless check` reports: one line per piece, ✔ or ✖, and for a ✖ the fix (naming the setting to
// change). Pure: the probes (cluster, S3, registry) produce these; the command prints them.

export interface CheckResult {
  /** The piece checked, e.g. `S3 s3://sless-contexts at http://seaweedfs:8333`. */
  readonly name: string;
  readonly ok: boolean;
  /** What was found (a version, a holder, an error). */
  readonly detail: string;
  /** For a failure: what to change, naming the setting or the command. */
  readonly fix?: string;
}

export const pass = (name: string, detail: string): CheckResult => ({ name, ok: true, detail });
export const fail = (name: string, detail: string, fix: string): CheckResult => ({ name, ok: false, detail, fix });

/** `✔ name: detail`, or `✖ name: detail` and an indented `fix: ...` line. */
export function formatResult(r: CheckResult): string {
  const head = `${r.ok ? '\u2714' : '\u2716'} ${r.name}: ${r.detail}`;
  return r.ok || !r.fix ? head : `${head}\n    fix: ${r.fix}`;
}

/** 0 only when every check passed. */
export function exitCodeOf(results: readonly CheckResult[]): number {
  return results.length > 0 && results.every((r) => r.ok) ? 0 : 1;
}

/** A probe's failure as text without a stack (for the detail of a ✖). */
export function messageOf(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error && !err.message.includes(err.cause.message) ? ` (${err.cause.message})` : '';
    return `${err.message}${cause}`.replace(/\s+/g, ' ').slice(0, 400);
  }
  return String(err).slice(0, 400);
}
