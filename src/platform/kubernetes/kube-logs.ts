// /v1 .../logs on Kubernetes (issue 33, docs/logs.md): the log of every pod of a function's Deployment
// (label-selected like its Service), read through the pod log API with timestamps. Without `follow` the
// pods' lines are merged by time and the last `tail` kept. With `follow`, each pod's log streams into one
// bounded LogQueue (a full queue pauses the reads, so the API server holds the rest, not this process)
// and a pod watch adds the pods that start while the client reads (a rollout, a scale-out, a restart).
// The controller's ClusterRole grants pods/log in tenant namespaces (deploy/base/rbac.yaml).
import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';
import { asyncLines, DEFAULT_LOG_QUEUE_BYTES, LogQueue } from '../log-queue.ts';
import type { LogLine, LogQuery } from '../types.ts';
import { authenticate, clusterServer } from './api-client/authenticated.ts';
import { JsonApi } from './api-client/json-api.ts';
import { JsonWatch } from './api-client/json-watch.ts';
import { LABELS } from './objects/meta.ts';

/** The function's container in its pods (function-workload.ts). */
const CONTAINER = 'function';
/** How long a pod watch may stay silent before it is opened again (the server ends it sooner). */
const WATCH_SILENCE_MS = 5 * 60_000;
const WATCH_SERVER_TIMEOUT_SEC = 240;
/** Between a watch that ended with an error and the next list. */
const REWATCH_DELAY_MS = 1000;

interface PodSummary {
  readonly name: string;
  /** Its container has started (running, or ran): the log API has something to read. */
  readonly started: boolean;
  /** Its container's restart count: a new count is a new log to read. */
  readonly restarts: number;
}

interface PodJson {
  metadata?: { name?: string };
  status?: { containerStatuses?: Array<{ name?: string; restartCount?: number; state?: { running?: object; terminated?: object } }> };
}

export function podSummary(pod: PodJson): PodSummary | undefined {
  const name = pod.metadata?.name;
  if (!name) return undefined;
  const status = pod.status?.containerStatuses?.find((c) => c.name === CONTAINER);
  return { name, started: Boolean(status?.state?.running ?? status?.state?.terminated), restarts: status?.restartCount ?? 0 };
}

/** `2026-12-06T11:30:30.123456789Z text` (timestamps=true) → a LogLine; a line without one keeps `fallback`. */
export function parseKubeLogLine(raw: string, replica: string, fallback: string): LogLine {
  const space = raw.indexOf(' ');
  const stamp = space > 0 ? raw.slice(0, space) : '';
  const ms = /^\d{4}-\d\d-\d\dT/.test(stamp) ? Date.parse(stamp) : NaN;
  if (Number.isNaN(ms)) return { time: fallback, replica, stream: 'output', line: raw };
  return { time: new Date(ms).toISOString(), replica, stream: 'output', line: raw.slice(space + 1) };
}

/** Lines of several replicas, oldest first, the last `tail` of them. */
export function mergeByTime(perReplica: readonly (readonly LogLine[])[], tail?: number): LogLine[] {
  const all = perReplica.flat().sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  return tail === undefined ? all : all.slice(Math.max(0, all.length - tail));
}

export class KubeLogs {
  readonly #json: JsonApi;
  readonly #watch: JsonWatch;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly maxQueueBytes = DEFAULT_LOG_QUEUE_BYTES,
  ) {
    this.#json = new JsonApi(kubeConfig);
    this.#watch = new JsonWatch(kubeConfig);
    this.#watch.requestTimeoutMs = WATCH_SILENCE_MS;
  }

  async read(namespace: string, name: string, query: LogQuery): Promise<AsyncIterable<LogLine>> {
    const { pods, resourceVersion } = await this.#listPods(namespace, name);
    if (!query.follow) {
      const lines = await Promise.all(pods.filter((p) => p.started).map((p) => this.#readAll(namespace, p.name, query)));
      return asyncLines(mergeByTime(lines, query.tail));
    }
    return this.#follow(namespace, name, pods, resourceVersion, query);
  }

  #selector(name: string): string {
    return `${LABELS.function}=${name},${LABELS.component}=function`;
  }

  async #listPods(namespace: string, name: string): Promise<{ pods: PodSummary[]; resourceVersion: string }> {
    const list = await this.#json.send<{ items?: PodJson[]; metadata?: { resourceVersion?: string } }>(
      'GET',
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(this.#selector(name))}`,
    );
    const pods = (list.items ?? []).flatMap((p) => podSummary(p) ?? []);
    return { pods, resourceVersion: list.metadata?.resourceVersion ?? '' };
  }

  #logPath(namespace: string, pod: string, query: LogQuery, follow: boolean, sinceMs: number | undefined): string {
    const params = new URLSearchParams({ container: CONTAINER, timestamps: 'true' });
    if (follow) params.set('follow', 'true');
    if (sinceMs !== undefined) params.set('sinceTime', new Date(Math.floor(sinceMs / 1000) * 1000).toISOString().replace(/\.\d+Z$/, 'Z'));
    if (query.tail !== undefined) params.set('tailLines', String(query.tail));
    return `/api/v1/namespaces/${namespace}/pods/${pod}/log?${params}`;
  }

  /** One pod's log as it is now. */
  async #readAll(namespace: string, pod: string, query: LogQuery): Promise<LogLine[]> {
    const lines: LogLine[] = [];
    await this.#stream(this.#logPath(namespace, pod, query, false, query.sinceMs), pod, query, (line) => {
      lines.push(line);
      return Promise.resolve();
    });
    return lines;
  }

  /** Reads a pod log request line by line; a pod whose container is not there (any more) reads as empty. */
  async #stream(pathAndQuery: string, pod: string, query: LogQuery, onLine: (line: LogLine) => Promise<void>): Promise<void> {
    const { url, headers, dispatcher } = await authenticate(this.kubeConfig, clusterServer(this.kubeConfig, `logs of pod ${pod}`) + pathAndQuery, 'GET');
    const res = await request(url, { method: 'GET', headers, signal: query.signal, ...(dispatcher ? { dispatcher } : {}) });
    if (res.statusCode >= 300) {
      const text = await res.body.text();
      // 400 "waiting to start" or 404 (the pod went away between the list and the read): nothing to read yet.
      if (res.statusCode === 400 || res.statusCode === 404) return;
      throw new Error(`reading the log of pod ${pod} failed: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
    }
    let rest = '';
    const fallback = () => new Date().toISOString();
    // sinceTime has whole seconds: the lines of that second before `since` are left out here.
    const since = query.sinceMs;
    const keep = (line: LogLine) => (since !== undefined && Date.parse(line.time) < since ? Promise.resolve() : onLine(line));
    for await (const chunk of res.body) {
      const parts = (rest + (chunk as Buffer).toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const raw of parts) if (raw) await keep(parseKubeLogLine(raw, pod, fallback()));
    }
    if (rest) await keep(parseKubeLogLine(rest, pod, fallback()));
  }

  #follow(namespace: string, name: string, first: readonly PodSummary[], resourceVersion: string, query: LogQuery): AsyncIterable<LogLine> {
    const queue = new LogQueue(this.maxQueueBytes, query.signal);
    /** Pods read now, by name, with the restart count being read. */
    const reading = new Map<string, number>();
    /** The time of the last line read of each pod: a re-read (a restart) starts after it. */
    const lastTime = new Map<string, string>();
    const notice = (line: string) => queue.offer({ time: new Date().toISOString(), replica: 'sless', stream: 'output', line });

    const startPod = (pod: PodSummary, isNew: boolean): void => {
      if (!pod.started || queue.closed) return;
      const current = reading.get(pod.name);
      if (current !== undefined && current >= pod.restarts) return;
      reading.set(pod.name, pod.restarts);
      const seen = lastTime.get(pod.name);
      // A pod that starts while following is read from its start (within `since`); the first ones keep `tail`.
      const own: LogQuery = isNew || seen ? { ...query, tail: undefined } : query;
      const sinceMs = seen ? Date.parse(seen) : query.sinceMs;
      void this.#stream(this.#logPath(namespace, pod.name, own, true, sinceMs), pod.name, query, async (line) => {
        if (seen && line.time <= seen) return;
        lastTime.set(pod.name, line.time);
        await queue.put(line);
      })
        .catch((err: unknown) => {
          if (!query.signal.aborted) notice(`replica ${pod.name}: ${(err as Error).message}`);
        })
        .finally(() => {
          if (reading.get(pod.name) === pod.restarts) reading.delete(pod.name);
        });
    };

    const watchFrom = (version: string): void => {
      if (queue.closed) return;
      let stop: AbortController | undefined;
      const onAbort = () => stop?.abort();
      query.signal.addEventListener('abort', onAbort, { once: true });
      const again = (delayMs: number) => {
        query.signal.removeEventListener('abort', onAbort);
        if (queue.closed) return;
        setTimeout(() => {
          // Relist: pods that started while no watch ran are read too.
          this.#listPods(namespace, name).then(
            ({ pods, resourceVersion: v }) => {
              for (const p of pods) startPod(p, true);
              watchFrom(v);
            },
            () => again(REWATCH_DELAY_MS * 5),
          );
        }, delayMs).unref();
      };
      this.#watch
        .watch(
          `/api/v1/namespaces/${namespace}/pods`,
          { labelSelector: this.#selector(name), resourceVersion: version, allowWatchBookmarks: true, timeoutSeconds: WATCH_SERVER_TIMEOUT_SEC },
          (phase, obj) => {
            if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
            const pod = podSummary(obj as PodJson);
            if (pod) startPod(pod, true);
          },
          (err) => again(err ? REWATCH_DELAY_MS : 0),
        )
        .then(
          (controller) => {
            stop = controller;
            if (query.signal.aborted) controller.abort();
          },
          () => again(REWATCH_DELAY_MS),
        );
    };

    for (const pod of first) startPod(pod, false);
    watchFrom(resourceVersion);
    return queue;
  }
}
