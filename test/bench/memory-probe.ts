// Where a controller process's resident memory is, sampled over time (issue 15: RSS < 200 MB at 1,000
// functions): the kernel's view (/proc/<pid>/status: VmRSS, VmHWM, RssAnon, RssFile) beside V8's
// (prom-client's default gauges on /metrics: heap committed and used, per heap space, external). What is
// anonymous and not V8's heap is native: malloc (glibc arenas, zlib and TLS state, undici and libuv
// buffers), thread stacks, V8's code range outside the heap spaces.
import { readFile } from 'node:fs/promises';
import type { ControllerProcess } from './controller-bench-kit.ts';

export interface MemorySample {
  /** Seconds since the trace started. */
  readonly t: number;
  readonly rssMb: number;
  readonly hwmMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  /** V8's heap: committed (heapTotal) and in use, live and garbage not yet collected (heapUsed). */
  readonly heapTotalMb?: number;
  readonly heapUsedMb?: number;
  readonly externalMb?: number;
  /** Committed size per V8 heap space (old_space, new_space, code_space, large_object_space, ...). */
  readonly spacesMb?: Readonly<Record<string, number>>;
  /** RssAnon less V8's committed heap: malloc, stacks, code range. */
  readonly nativeMb?: number;
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function statusOf(pid: number): Promise<{ rssMb: number; hwmMb: number; anonMb: number; fileMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMb: mb(kb('VmRSS') * 1024), hwmMb: mb(kb('VmHWM') * 1024), anonMb: mb(kb('RssAnon') * 1024), fileMb: mb(kb('RssFile') * 1024) };
}

/** prom-client's nodejs_heap_* and nodejs_external_memory_bytes from /metrics; undefined while it does not answer. */
async function v8Of(port: number): Promise<Pick<MemorySample, 'heapTotalMb' | 'heapUsedMb' | 'externalMb' | 'spacesMb'> | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5000) });
    const text = await res.text();
    const one = (name: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : mb(Number(line.slice(line.lastIndexOf(' ') + 1)));
    };
    const spacesMb: Record<string, number> = {};
    for (const m of text.matchAll(/^nodejs_heap_space_size_total_bytes\{space="([^"]+)"\} (\S+)$/gm)) spacesMb[m[1]!] = mb(Number(m[2]));
    const out: { heapTotalMb?: number; heapUsedMb?: number; externalMb?: number; spacesMb: Record<string, number> } = { spacesMb };
    const total = one('nodejs_heap_size_total_bytes');
    const used = one('nodejs_heap_size_used_bytes');
    const external = one('nodejs_external_memory_bytes');
    if (total !== undefined) out.heapTotalMb = total;
    if (used !== undefined) out.heapUsedMb = used;
    if (external !== undefined) out.externalMb = external;
    return out;
  } catch {
    return undefined;
  }
}

export async function sampleMemory(c: Pick<ControllerProcess, 'pid' | 'metricsPort'>, t = 0): Promise<MemorySample> {
  const [status, v8] = await Promise.all([statusOf(c.pid), v8Of(c.metricsPort)]);
  const nativeMb = v8?.heapTotalMb === undefined ? undefined : Math.round((status.anonMb - v8.heapTotalMb) * 10) / 10;
  return { t, ...status, ...v8, ...(nativeMb === undefined ? {} : { nativeMb }) };
}

/** One line for a log: RSS (peak), anonymous = V8 heap committed (used) + native, file-backed. */
export function describeSample(s: MemorySample): string {
  const spaces = s.spacesMb ? Object.entries(s.spacesMb).filter(([, v]) => v >= 1).map(([k, v]) => `${k.replace(/_space$/, '')} ${v}`).join(', ') : '';
  return `RSS ${s.rssMb} MB (peak ${s.hwmMb}): anon ${s.anonMb} = V8 heap ${s.heapTotalMb ?? '?'} (used ${s.heapUsedMb ?? '?'}; ${spaces}) + native ${s.nativeMb ?? '?'}; file ${s.fileMb}; external ${s.externalMb ?? '?'}`;
}

/** Samples `current()` every `everyMs` until stopped; a controller that is not running is skipped. */
export function traceMemory(current: () => Pick<ControllerProcess, 'pid' | 'metricsPort'> | undefined, everyMs = 2000) {
  const samples: MemorySample[] = [];
  const start = Date.now();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const c = current();
      if (c) {
        const s = await sampleMemory(c, Math.round((Date.now() - start) / 100) / 10).catch(() => undefined);
        if (s) samples.push(s);
      }
      await new Promise((r) => setTimeout(r, everyMs).unref());
    }
  })();
  return {
    samples,
    /** The sample with the most RSS so far. */
    peak: (): MemorySample | undefined => samples.reduce<MemorySample | undefined>((a, s) => (!a || s.rssMb > a.rssMb ? s : a), undefined),
    async stop(): Promise<void> {
      stopped = true;
      await loop;
    },
  };
}
