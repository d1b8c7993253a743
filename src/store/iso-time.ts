// `new Date(ms).toISOString()` for the invocation log's startedAt, without its cost on every /fn call
// (~1–3 µs here, a share of the proxy's cost per request: docs/benchmarks.md). Calls come in time order,
// so the text up to the second is kept for the current second and only the milliseconds are formatted.

/** Epoch ms past which toISOString writes a six-digit year (+010000-01-01): not cached. */
const YEAR_10000_MS = 253_402_300_800_000;

let cachedSecond = Number.NaN;
/** `YYYY-MM-DDTHH:MM:SS.` of cachedSecond. */
let cachedPrefix = '';

/** The same text as `new Date(ms).toISOString()` (fractions of a millisecond dropped, as Date does). */
export function isoTime(ms: number): string {
  const whole = Math.trunc(ms);
  if (!(whole >= 0 && whole < YEAR_10000_MS)) return new Date(ms).toISOString();
  const second = Math.floor(whole / 1000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    cachedSecond = second;
  }
  const milli = whole - second * 1000;
  return `${cachedPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
