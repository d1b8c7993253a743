// Keeps each function's live process matching what it should be: prepares the folder for its build
// key (reused when present), starts a new process when the build or the deploy settings changed,
// switches the endpoint once the new process is healthy and only then stops the old one (after a
// short drain), so a code or config change never fails a request. One change per function at a time.
import { createHash } from 'node:crypto';
import type { Runtime } from '../../manifest/types.ts';
import { childBaseEnv, type ChildGroup, type CommandSpec } from './child-group.ts';
import type { Logger } from './logger.ts';
import type { LocalRuntimes } from './ports.ts';
import { buildKeyOf, type CodeSource, type FunctionPreparer } from './prepare-function.ts';
import type { FunctionLogs } from './function-logs.ts';
import { ReplicaSet } from './replica-set.ts';
import type { ProcessOutput } from './supervised-process.ts';
import type { Scale } from '../../manifest/scale-spec.ts';

/** Everything a running version depends on. */
export interface DeploySpec {
  readonly namespace: string;
  readonly name: string;
  readonly runtime: Runtime;
  readonly entrypoint: string;
  readonly timeoutSec: number;
  readonly memoryMb: number;
  readonly env: Readonly<Record<string, string>>;
  /** Whether the function's server runs: while it serves http, or has queue triggers to deliver to. */
  readonly serverRuns: boolean;
  readonly codeHash: string;
  /** The function's folder in the repository ('' for an uploaded one): failure messages name its files there. */
  readonly shownPath?: string;
  /** How many processes (scale-spec.ts); a change applies without a restart. */
  readonly scale: Scale;
}

export type DeployOutcome =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'started'; readonly built: boolean; readonly buildKey: string }
  | { readonly kind: 'disabled'; readonly buildKey: string }
  | {
      readonly kind: 'failed';
      readonly buildKey?: string;
      readonly message: string;
      readonly stillServing: boolean;
      /** True when this is the remembered result of a recent identical attempt (nothing was retried). */
      readonly repeated?: boolean;
    };

interface Live {
  readonly deployKey: string;
  readonly buildKey: string;
  /** Absent while http is disabled. */
  readonly replicas?: ReplicaSet;
  readonly scale: Scale;
}

/** A running version as the local scaler (local-scaler.ts) sees it. */
export interface LiveFunction {
  readonly namespace: string;
  readonly name: string;
  readonly scale: Scale;
  readonly replicas: ReplicaSet;
}

export interface FunctionRunnerOptions {
  readonly runtimes: LocalRuntimes;
  readonly preparer: FunctionPreparer;
  readonly children: ChildGroup;
  readonly logger: Logger;
  /** The environment children start from (ours minus secrets). */
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** How long the old process keeps running after the switch, for requests already sent to it. */
  readonly drainMs?: number;
  readonly healthTimeoutMs?: number;
  /** A version that failed to build or start is not tried again for this long (unless it changes). */
  readonly retryFailedAfterMs?: number;
  /** Called whenever a prepared folder may have stopped being used (a switch, a drain, a removal). */
  readonly onFolderReleased?: () => void;
  /** Where every process's output is kept for /v1 .../logs. */
  readonly logs?: FunctionLogs;
}

function deployKeyOf(spec: DeploySpec, buildKey: string): string {
  const env = Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([buildKey, spec.entrypoint, spec.timeoutSec, spec.memoryMb, spec.serverRuns, env]))
    .digest('hex');
}

export class FunctionRunner {
  readonly #opts: FunctionRunnerOptions;
  readonly #live = new Map<string, Live>();
  readonly #locks = new Map<string, Promise<unknown>>();
  readonly #draining = new Map<Promise<void>, string>();
  /** Build keys of deploys under way (their folder is built or starting, not yet live). */
  readonly #deploying = new Map<string, string>();
  /** Recent failures by deploy key, so a poll does not rebuild or restart a broken version every time. */
  readonly #failures = new Map<string, { at: number; outcome: DeployOutcome & { kind: 'failed' } }>();
  readonly #baseEnv: Readonly<Record<string, string>>;

  constructor(opts: FunctionRunnerOptions) {
    this.#opts = opts;
    this.#baseEnv = opts.baseEnv ?? childBaseEnv(process.env);
  }

  buildKeyOf(spec: Pick<DeploySpec, 'runtime' | 'codeHash'>): string {
    return buildKeyOf({ runtime: spec.runtime, codeHash: spec.codeHash, runtimeVersion: this.#opts.runtimes.versionOf(spec.runtime) });
  }

  /** Every build key a process runs from, drains from, or is being deployed from. */
  buildKeysInUse(): Set<string> {
    return new Set([...[...this.#live.values()].map((l) => l.buildKey), ...this.#draining.values(), ...this.#deploying.values()]);
  }

  /** The base URL of a healthy process serving this function (in turn), if any. */
  baseUrl(namespace: string, name: string): string | undefined {
    return this.#live.get(`${namespace}/${name}`)?.replicas?.pick();
  }

  /** A short word on why there is no base URL (for 503 answers). */
  processState(namespace: string, name: string): string {
    const live = this.#live.get(`${namespace}/${name}`);
    if (!live) return 'not started';
    if (!live.replicas) return 'http disabled';
    return live.replicas.state();
  }

  /** The function's running version, when it serves http. */
  liveFunction(namespace: string, name: string): LiveFunction | undefined {
    const live = this.#live.get(`${namespace}/${name}`);
    return live?.replicas ? { namespace, name, scale: live.scale, replicas: live.replicas } : undefined;
  }

  /** Every running version that serves http. */
  liveFunctions(): LiveFunction[] {
    return [...this.#live.keys()].flatMap((key) => {
      const [namespace = '', name = ''] = key.split('/');
      const live = this.liveFunction(namespace, name);
      return live ? [live] : [];
    });
  }

  /** Serialises work per function: a second change waits for the first. */
  #locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#locks.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.catch(() => undefined);
    this.#locks.set(key, settled);
    void settled.then(() => {
      if (this.#locks.get(key) === settled) this.#locks.delete(key);
    });
    return next;
  }

  /** The command that runs this version: serve on `port`, or once with SLESS_MODE=job. */
  commandFor(spec: DeploySpec, appDir: string, port: number): CommandSpec {
    const env: Record<string, string> = {
      ...this.#baseEnv,
      ...spec.env,
      PORT: String(port),
      // Loopback only: every call goes through the proxy (its limits, timeouts and invocation log).
      SLESS_BIND_ADDRESS: '127.0.0.1',
      SLESS_FUNCTION_DIR: appDir,
      SLESS_ENTRYPOINT: spec.entrypoint,
      SLESS_FUNCTION_NAME: spec.name,
      SLESS_NAMESPACE: spec.namespace,
      SLESS_TIMEOUT_SEC: String(spec.timeoutSec),
    };
    return this.#opts.runtimes.command(spec.runtime, appDir, { port, entrypoint: spec.entrypoint, env });
  }

  appDirOf(buildKey: string): string {
    return this.#opts.preparer.dirOf(buildKey).appDir;
  }

  /**
   * Makes the function run `spec`. `files` is only read when the folder for its build key must be built.
   * `onBuilding` is called before a real build starts (not for a reused folder).
   */
  deploy(
    spec: DeploySpec,
    files: CodeSource,
    onBuilding?: () => void,
  ): Promise<DeployOutcome> {
    const key = `${spec.namespace}/${spec.name}`;
    return this.#locked(key, async () => {
      const buildKey = this.buildKeyOf(spec);
      this.#deploying.set(key, buildKey);
      try {
        return await this.#deploy(key, buildKey, spec, files, onBuilding);
      } finally {
        this.#deploying.delete(key);
        this.#opts.onFolderReleased?.();
      }
    });
  }

  async #deploy(
    key: string,
    buildKey: string,
    spec: DeploySpec,
    files: CodeSource,
    onBuilding?: () => void,
  ): Promise<DeployOutcome> {
    {
      const deployKey = deployKeyOf(spec, buildKey);
      const current = this.#live.get(key);
      if (current?.deployKey === deployKey) {
        // Scale changes take effect without a restart: the scaler reads it on its next tick.
        this.#live.set(key, { ...current, scale: spec.scale });
        return { kind: 'unchanged' };
      }
      const stillServing = (current?.replicas?.ready ?? 0) > 0;
      const failedBefore = this.#failures.get(deployKey);
      if (failedBefore && Date.now() - failedBefore.at < (this.#opts.retryFailedAfterMs ?? 60_000)) {
        return { ...failedBefore.outcome, stillServing, repeated: true };
      }
      const fail = (message: string): DeployOutcome => {
        const outcome = { kind: 'failed' as const, buildKey, message, stillServing };
        this.#failures.set(deployKey, { at: Date.now(), outcome });
        return outcome;
      };
      let built = false;
      try {
        if (!(await this.#opts.preparer.isPrepared(buildKey))) onBuilding?.();
        built = (await this.#prepareFolder(key, buildKey, spec, files)).built;
      } catch (err) {
        return fail(`build failed: ${(err as Error).message}`);
      }
      if (!spec.serverRuns) {
        this.#live.set(key, { deployKey, buildKey, scale: spec.scale });
        this.#retire(current);
        return { kind: 'disabled', buildKey };
      }
      const appDir = this.appDirOf(buildKey);
      const replicas = new ReplicaSet({
        label: key,
        command: (port) => this.commandFor(spec, appDir, port),
        children: this.#opts.children,
        logger: this.#opts.logger,
        healthTimeoutMs: this.#opts.healthTimeoutMs,
        outputPlace: { appDir, shownAs: spec.shownPath ?? '' },
        ...(this.#opts.logs ? { output: processOutput(this.#opts.logs, spec.namespace, spec.name) } : {}),
        drainMs: this.#opts.drainMs ?? 1000,
        stopGraceMs: spec.timeoutSec * 1000 + 1000,
      });
      // One process proves the version starts (even with scale.min 0: it then idles down to zero).
      try {
        await replicas.add();
      } catch (err) {
        return fail((err as Error).message);
      }
      if (this.#opts.children.closed) {
        // Stopping began while it started: close() did not see it, so it goes here.
        await replicas.stop(false);
        return fail('sless dev is shutting down');
      }
      this.#failures.delete(deployKey);
      // A new version of a function under load starts as wide as the old one ran.
      const before = current?.replicas?.size ?? 0;
      if (before > 1) replicas.scaleTo(Math.min(before, spec.scale.max));
      this.#live.set(key, { deployKey, buildKey, replicas, scale: spec.scale });
      this.#retire(current);
      return { kind: 'started', built, buildKey };
    }
  }

  /**
   * Prepares the folder of `spec`'s build key without starting it (a pinned function's new code: built so
   * the fix is ready, live only once the pin goes). `onPrepared` runs before the folder stops counting as
   * in use, so the caller records it before a prune could take it.
   */
  prepare(
    spec: DeploySpec,
    files: CodeSource,
    onBuilding: () => void,
    onPrepared: (buildKey: string, built: boolean) => void,
  ): Promise<{ readonly ok: true; readonly buildKey: string } | { readonly ok: false; readonly message: string }> {
    const key = `${spec.namespace}/${spec.name}`;
    return this.#locked(key, async () => {
      const buildKey = this.buildKeyOf(spec);
      this.#deploying.set(key, buildKey);
      try {
        if (!(await this.#opts.preparer.isPrepared(buildKey))) onBuilding();
        onPrepared(buildKey, (await this.#prepareFolder(key, buildKey, spec, files)).built);
        return { ok: true as const, buildKey };
      } catch (err) {
        return { ok: false as const, message: `build failed: ${(err as Error).message}` };
      } finally {
        this.#deploying.delete(key);
        this.#opts.onFolderReleased?.();
      }
    });
  }

  #prepareFolder(key: string, buildKey: string, spec: DeploySpec, files: CodeSource) {
    return this.#opts.preparer.prepare({
      buildKey,
      files,
      label: key,
      installSteps: (appDir, names) => this.#opts.runtimes.installSteps(spec.runtime, appDir, names),
    });
  }

  /** Stops the function's process (it then answers 404 or 503, as the caller's records say). */
  remove(namespace: string, name: string): Promise<void> {
    const key = `${namespace}/${name}`;
    return this.#locked(key, async () => {
      const current = this.#live.get(key);
      this.#live.delete(key);
      await current?.replicas?.stop(false);
      this.#opts.onFolderReleased?.();
    });
  }

  #retire(old: Live | undefined): void {
    if (!old?.replicas) return;
    // Out of the rotation at once, stopped after the drain.
    const p: Promise<void> = old.replicas
      .stop()
      .finally(() => {
        this.#draining.delete(p);
        this.#opts.onFolderReleased?.();
      });
    this.#draining.set(p, old.buildKey);
  }

  /** Stops every process, including those still draining. */
  async close(): Promise<void> {
    const sets = [...this.#live.values()].flatMap((l) => (l.replicas ? [l.replicas] : []));
    this.#live.clear();
    await Promise.all([...sets.map((r) => r.stop(false)), ...this.#draining.keys()]);
    await this.#opts.children.stopAll();
  }
}

function processOutput(logs: FunctionLogs, namespace: string, name: string): ProcessOutput {
  return {
    write: (replica, stream, text) => logs.write(namespace, name, replica, stream, text),
    ended: (replica) => logs.flush(namespace, name, replica),
  };
}
