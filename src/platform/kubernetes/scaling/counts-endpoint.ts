// This replica's calls in flight (replica-counts.ts), served as JSON on the metrics listener
// (SLESS_METRICS_PORT, http/metrics-server.ts) for the leader, and fetched by the leader from the others.
// The metrics listener is internal (its series already name every tenant's functions), so no token.
import { request } from 'undici';
import type { CountsReport } from './replica-counts.ts';

export const COUNTS_PATH = '/scaling/in-flight';
/** A replica that takes longer than this to answer counts as not answering this time. */
const FETCH_TIMEOUT_MS = 1_500;

export async function fetchCountsReport(url: string): Promise<CountsReport> {
  const res = await request(url, { headersTimeout: FETCH_TIMEOUT_MS, bodyTimeout: FETCH_TIMEOUT_MS, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
  const body = JSON.parse(text) as Partial<CountsReport>;
  if (typeof body.atMs !== 'number' || typeof body.functions !== 'object' || body.functions === null) throw new Error(`${url} answered no counts report`);
  return body as CountsReport;
}
