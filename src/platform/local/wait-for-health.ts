// Polls `GET <baseUrl>/health` until it answers 200, the process exits, or time runs out.
import type { ExitStatus } from './child-group.ts';

export async function waitForHealth(
  baseUrl: string,
  opts: { timeoutMs: number; exited: Promise<ExitStatus>; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let exit: ExitStatus | undefined;
  void opts.exited.then((s) => (exit = s));
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    if (exit) throw new Error(`exited before it was healthy (code ${exit.code ?? exit.signal})`);
    try {
      const res = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return;
      lastError = `GET /health answered ${res.status}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
  throw new Error(`not healthy after ${opts.timeoutMs} ms (${lastError})`);
}
