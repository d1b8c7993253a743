// /fn's own probe of a pod: GET <pod>/health, as the kubelet's probes ask (objects/function-workload.ts).
// Its own connection pool, with no keep-alive: a probe must see a listening process, never reuse a
// socket that outlived one, and probes must not sit in the pools /fn's calls use.
import { Agent, request } from 'undici';
import { HEALTH_PATH } from '../objects/function-workload.ts';
import type { Probe } from './pod-table.ts';

export function httpProbe(): { probe: Probe; close(): Promise<void> } {
  const agent = new Agent({ pipelining: 0 });
  const probe: Probe = async (baseUrl, timeoutMs) => {
    try {
      const res = await request(`${baseUrl}${HEALTH_PATH}`, {
        dispatcher: agent,
        method: 'GET',
        headers: { 'user-agent': 'sless-fn-probe' },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.dump();
      return res.statusCode >= 200 && res.statusCode < 300;
    } catch {
      // Refused, reset, timed out: not answering yet, which is what a probe is for.
      return false;
    }
  };
  return { probe, close: () => agent.close() };
}
