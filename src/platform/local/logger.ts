// The few log calls the local platform makes. `sless dev` passes a console-backed one; tests pass
// one that records lines so they can assert what a user would read. One line format for all of
// `sless dev`'s output, `HH:MM:SS.mmm <level> <message>`: the HTTP server's JSON lines are rewritten
// into it (readableJsonLine) so none reads differently from the rest.
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** One line of `sless dev`'s log, without its newline. */
export function logLine(at: Date, level: string, message: string): string {
  return `${at.toISOString().slice(11, 23)} ${level} ${message}`;
}

/** Writes `HH:MM:SS.mmm level message` lines to a stream (stdout for `sless dev`). */
export function streamLogger(write: (line: string) => void): Logger {
  const at = (level: string) => (message: string) => write(`${logLine(new Date(), level, message)}\n`);
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

/** pino's numeric levels, named as streamLogger names them. */
const LEVELS: Readonly<Record<number, string>> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
/** Fields every pino line carries that a reader of one process's log does not need. */
const DROPPED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId']);

/**
 * A JSON line of the HTTP server's logger (pino) in the format above: its message, then its fields as
 * `key=value` (quoted when they hold spaces), then the request id; an error's stack on indented lines
 * below it. A line that is not a JSON object is returned as it is.
 */
export function readableJsonLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
    entry = parsed as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof entry.level === 'number' ? (LEVELS[entry.level] ?? String(entry.level)) : 'info';
  const at = typeof entry.time === 'number' ? new Date(entry.time) : new Date();
  const fields = Object.entries(entry).filter(([k]) => !DROPPED.has(k) && k !== 'err');
  if (entry.reqId !== undefined) fields.push(['request_id', entry.reqId]);
  const err = errorOf(entry.err);
  if (err) fields.push(['err', err.text]);
  const message = [String(entry.msg ?? ''), ...fields.map(([k, v]) => `${k}=${valueText(v)}`)].filter(Boolean).join(' ');
  const stack = err?.stack ? `\n${err.stack.replace(/^/gm, '    ')}` : '';
  return `${logLine(at, level, message)}${stack}\n`;
}

function valueText(v: unknown): string {
  if (typeof v !== 'string') return JSON.stringify(v);
  return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
}

/** pino's serialized error ({type, message, stack}): "Type: message" and the stack's frames. */
function errorOf(err: unknown): { text: string; stack?: string } | undefined {
  if (err === undefined || err === null) return undefined;
  if (typeof err !== 'object') return { text: String(err) };
  const e = err as { type?: unknown; message?: unknown; stack?: unknown };
  const text = `${typeof e.type === 'string' ? `${e.type}: ` : ''}${String(e.message ?? '')}`;
  const frames = typeof e.stack === 'string' ? e.stack.split('\n').filter((l) => /^\s+at /.test(l)).map((l) => l.trim()) : [];
  return frames.length > 0 ? { text, stack: frames.join('\n') } : { text };
}
