// client-node's Watch (what its ListWatch informers stream events through), on undici's request() instead
// of WHATWG fetch: client-node turns the fetch body into a Node stream (Readable.fromWeb) and splits it with
// readline, so each event chunk passed web streams, an adapter and readline's string decoding before its
// JSON.parse. Here the body is a Node stream from the start and lines are cut from its Buffers. The rest is
// client-node's behaviour, kept so ListWatch works as before: `watch=true` and the query on the path, the
// KubeConfig's authentication and dispatcher, a timeout that first bounds the connect and then any silence
// of `requestTimeoutMs`, `done` called once (with null when the server ends the watch, or the error), and
// the AbortController handed back so ListWatch can stop it. Lines that are not JSON are skipped, as there.
import { STATUS_CODES } from 'node:http';
import {
  ListWatch,
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  type ObjectCache,
  type Watch,
} from '@kubernetes/client-node';
import { request } from 'undici';
import { authenticate, clusterServer } from './authenticated.ts';

export type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
export type WatchDone = (err: unknown) => void;

const NEWLINE = 0x0a;

export class JsonWatch {
  requestTimeoutMs = 30_000;

  constructor(private readonly config: KubeConfig) {}

  async watch(path: string, queryParams: Record<string, unknown>, callback: WatchCallback, done: WatchDone): Promise<AbortController> {
    const url = new URL(clusterServer(this.config, `watch ${path}`) + path);
    url.searchParams.set('watch', 'true');
    for (const [key, val] of Object.entries(queryParams ?? {})) if (val !== undefined) url.searchParams.set(key, String(val));

    const controller = new AbortController();
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const clearTimer = () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
    const resetTimer = () => {
      clearTimer();
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      }, this.requestTimeoutMs);
      timer.unref();
    };
    let doneCalled = false;
    const doneOnce = (err: unknown) => {
      if (doneCalled) return;
      doneCalled = true;
      clearTimer();
      controller.abort();
      done(err && timedOut ? new DOMException('The operation was aborted due to timeout', 'TimeoutError') : err);
    };

    const { headers, dispatcher } = await authenticate(this.config, url.toString(), 'GET');
    try {
      resetTimer();
      const res = await request(url, {
        method: 'GET',
        headers,
        signal: controller.signal,
        ...(dispatcher ? { dispatcher } : {}),
      });
      if (res.statusCode !== 200) {
        res.body.dump().catch(() => undefined);
        const error = new Error(STATUS_CODES[res.statusCode] ?? 'Internal Server Error') as Error & { statusCode: number };
        error.statusCode = res.statusCode;
        throw error;
      }
      // The connect timeout is over; from here on it bounds silence.
      resetTimer();
      const lines = new LineSplitter((line) => {
        try {
          const data = JSON.parse(line) as { type: string; object: unknown };
          callback(data.type, data.object, data);
        } catch {
          // not JSON: skipped, as client-node does
        }
      });
      res.body.on('data', (chunk: Buffer) => {
        resetTimer();
        lines.push(chunk);
      });
      res.body.on('error', doneOnce);
      res.body.on('end', () => doneOnce(null));
      res.body.on('close', () => doneOnce(null));
    } catch (err) {
      doneOnce(err);
    }
    return controller;
  }
}

/** client-node's makeInformer, its events streamed through JsonWatch. */
export function makeJsonInformer<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  path: string,
  listFn: ListPromise<T>,
  labelSelector?: string,
): Informer<T> & ObjectCache<T> {
  return new ListWatch<T>(path, new JsonWatch(kubeConfig) as unknown as Watch, listFn, false, labelSelector);
}

/** Cuts a byte stream into lines at '\n' (UTF-8 decoded whole, so a character split across chunks stays one). */
export class LineSplitter {
  private pending: Buffer[] = [];

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      const head = chunk.subarray(start, nl);
      const line = this.pending.length ? Buffer.concat([...this.pending, head]) : head;
      this.pending = [];
      start = nl + 1;
      if (line.length > 0) this.onLine(line.toString('utf8'));
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }
}
