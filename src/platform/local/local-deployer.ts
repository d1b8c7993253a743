// Turns a stored function into a running one for `sless dev`: deploys its version through the
// FunctionRunner, records the build, applies the outcome to the record (phase, message, image) and logs
// it the way a user reads it.
import type { BuildLog } from '../../store/types.ts';
import type { FunctionRecord } from '../types.ts';
import type { CommandSpec } from './child-group.ts';
import type { FunctionRunner, DeployOutcome, DeploySpec } from './function-runner.ts';
import type { FunctionTable } from './function-table.ts';
import type { LocalState, StoredFunction } from './local-state.ts';
import type { Runtime } from '../../manifest/types.ts';
import type { Logger } from './logger.ts';
import { buildingLine, readyLine, versionMismatch } from './progress-lines.ts';
import { resolveScale } from '../../manifest/scale-spec.ts';
import type { CodeSource } from './prepare-function.ts';
import { missingPinMessage, pinnedMessage, recordLive, type LiveVersion } from '../revisions.ts';
import { liveVersionOf, localImage, specOfRevision, type LocalRevision, type LocalRevisionConfig } from './local-revisions.ts';

export interface LocalDeployerOptions {
  readonly runner: FunctionRunner;
  readonly table: FunctionTable;
  readonly state: LocalState;
  readonly logger: Logger;
  readonly buildLog?: BuildLog;
  readonly url: (namespace: string, name: string) => string;
  /** When a prepared folder was built (for last_built_at of a version that reused it). */
  readonly preparedAt: (buildKey: string) => Promise<string | undefined>;
  /** The interpreter that runs a runtime here and its version (ports.ts LocalRuntimes.interpreterOf). */
  readonly interpreterOf?: (runtime: Runtime) => { readonly program: string; readonly version: string | undefined } | undefined;
  /** The cap on scale.max (SLESS_MAX_REPLICAS). */
  readonly maxReplicas?: number;
  /**
   * The environment of a function's env_from_secrets (`--secrets-dir DIR/<secret>/<key>`), read at each
   * deploy; throws with a user's message when a secret is missing. Absent: env_from_secrets is ignored.
   */
  readonly secretEnv?: (namespace: string, secrets: readonly string[]) => Promise<Record<string, string>>;
}

/** Phases that say a change is under way: kept until the new version serves (or fails). */
const IN_PROGRESS = new Set(['Pending', 'Building']);

export class LocalDeployer {
  /** Functions (and the runtime) already warned about a version this machine does not run. */
  readonly #versionWarned = new Set<string>();

  /** Per function (ns/name): the env its env_from_secrets gave at its last deploy (kept for job mode). */
  readonly #secretEnvs = new Map<string, Readonly<Record<string, string>>>();

  constructor(private readonly o: LocalDeployerOptions) {}

  /** What the runner needs to run the record's version; undefined while it has no code. */
  specOf(record: FunctionRecord): DeploySpec | undefined {
    if (!record.codeHash) return undefined;
    return {
      namespace: record.namespace,
      name: record.name,
      runtime: record.runtime,
      entrypoint: record.entrypoint,
      timeoutSec: record.timeoutSec,
      memoryMb: record.memoryMb,
      // As on Kubernetes (envFrom beside env), a key of env: wins over the same key from a secret.
      env: { ...this.#secretEnvs.get(`${record.namespace}/${record.name}`), ...record.env },
      // A queue-only function (http.enabled: false beside queues:) runs for its deliveries; /fn still answers 503.
      serverRuns: record.httpEnabled || (this.o.table.get(record.namespace, record.name)?.manifest?.queues?.length ?? 0) > 0,
      codeHash: record.codeHash,
      scale: resolveScale(record.scale, record.runtime, this.o.maxReplicas),
    };
  }

  /** The job-mode command of a function's current version, or why there is none. */
  jobCommandOf(namespace: string, fn: string): { command: CommandSpec; timeoutSec: number } | { missing: string } {
    const f = this.o.table.get(namespace, fn);
    const spec = f && this.specOf(f.record);
    if (!f?.buildKey || !spec) return { missing: `function ${namespace}/${fn} has no built code yet` };
    // A pinned function's jobs and schedules run the revision that serves, not the code that waits.
    const pinned = f.pinned && this.#pinnedRevision(f);
    if (pinned) {
      const at = specOfRevision(spec, pinned);
      return { command: this.o.runner.commandFor(at, this.o.runner.appDirOf(pinned.config.buildKey), 0), timeoutSec: at.timeoutSec };
    }
    return { command: this.o.runner.commandFor(spec, this.o.runner.appDirOf(f.buildKey), 0), timeoutSec: f.record.timeoutSec };
  }

  #pinnedRevision(f: StoredFunction): LocalRevision | undefined {
    return f.revisions?.find((r) => r.revision === f.pinned?.revision);
  }

  /** `version` went live now: it is the live revision (a new one, or an earlier one live again). */
  #wentLive(namespace: string, name: string, version: LiveVersion<LocalRevisionConfig>): void {
    const f = this.o.table.get(namespace, name);
    if (f) this.o.table.put({ ...f, revisions: recordLive(f.revisions ?? [], version, new Date().toISOString()) });
  }

  /**
   * A pinned function: its new code is prepared (so the fix is ready) but not started; the pinned
   * revision runs from its kept folder, with its own settings, no build.
   */
  async #deployPinned(f: StoredFunction, spec: DeploySpec, files: CodeSource | undefined): Promise<DeployOutcome> {
    const { namespace, name } = f.record;
    const pin = f.pinned as NonNullable<StoredFunction['pinned']>;
    const rev = this.#pinnedRevision(f);
    if (!rev) {
      const message = missingPinMessage(pin);
      this.o.table.patch(namespace, name, { phase: 'Failed', message });
      await this.o.state.save();
      return { kind: 'failed', message, stillServing: this.o.runner.processState(namespace, name) !== 'not started' };
    }
    if (files) {
      // Every sync hands the files over; only a folder built now is news (a poll must not repeat it).
      let built = false;
      const head = await this.o.runner.prepare(
        spec,
        files,
        () => this.o.logger.info(buildingLine(name, spec.runtime)),
        (buildKey, fresh) => {
          built = fresh;
          this.o.table.patch(namespace, name, { imageRef: localImage(buildKey) }, { buildKey });
        },
      );
      if (!head.ok) this.o.logger.error(`${namespace}/${name} new version failed (revision ${rev.revision} stays pinned and serving): ${head.message}`);
      else if (built) this.o.logger.info(`${namespace}/${name}: new version built; not live while pinned to revision ${rev.revision} (sless rollback ${name} --undo)`);
    }
    const outcome = await this.o.runner.deploy(specOfRevision(spec, rev), () => {
      throw new Error(`the prepared folder of revision ${rev.revision} is missing; undo the rollback`);
    });
    if (outcome.kind === 'failed') {
      this.o.table.patch(namespace, name, { phase: 'Failed', message: `serving revision ${rev.revision} failed: ${outcome.message}` });
    } else {
      this.o.table.patch(namespace, name, { phase: 'Ready', message: pinnedMessage(rev, f.record.managedBy !== 'api') });
      this.#wentLive(namespace, name, rev);
      if (outcome.kind === 'started') this.o.logger.info(`${namespace}/${name}: serving revision ${rev.revision} (pinned by a rollback)`);
    }
    await this.o.state.save();
    return outcome;
  }

  /** Deploys the function's version (`files` when it must be prepared anew) and saves the outcome. */
  async deploy(f: StoredFunction, files?: CodeSource): Promise<DeployOutcome> {
    const refused = await this.#readSecretEnv(f.record);
    if (refused) return refused;
    const settings = this.specOf(f.record);
    if (!settings) return { kind: 'unchanged' };
    const spec: DeploySpec = { ...settings, shownPath: f.path ?? '' };
    const { namespace, name } = f.record;
    if (f.pinned) return this.#deployPinned(f, spec, files);
    const source =
      files ??
      (() => {
        // Only reached when the prepared folder is gone (data dir cleaned): nothing to rebuild from.
        throw new Error(`the prepared folder of ${namespace}/${name} is missing; push or upload its code again`);
      });
    this.#warnVersion(namespace, name, spec.runtime);
    let buildStarted: number | undefined;
    const outcome = await this.o.runner.deploy(spec, source, () => {
      buildStarted = Date.now();
      this.o.logger.info(buildingLine(name, spec.runtime));
      // Building even while the previous version still serves: Ready means the new version serves.
      this.o.table.patch(namespace, name, { phase: 'Building' });
    });
    if (buildStarted !== undefined && outcome.kind !== 'unchanged') {
      const failed = outcome.kind === 'failed' && outcome.message.startsWith('build failed');
      this.o.buildLog?.record({
        namespace,
        function: name,
        codeHash: spec.codeHash,
        outcome: failed ? 'failed' : 'succeeded',
        imageRef: outcome.buildKey ? `local:${outcome.buildKey}` : undefined,
        message: failed ? outcome.message : undefined,
        startedAt: new Date(buildStarted).toISOString(),
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - buildStarted,
      });
    }
    const builtAt =
      outcome.kind === 'started' || outcome.kind === 'disabled'
        ? outcome.kind === 'started' && outcome.built
          ? new Date().toISOString()
          : ((await this.o.preparedAt(outcome.buildKey)) ?? this.o.table.get(namespace, name)?.record.lastBuiltAt ?? new Date().toISOString())
        : undefined;
    this.#applyOutcome(namespace, name, outcome, builtAt);
    if (outcome.kind === 'started' || outcome.kind === 'disabled') this.#wentLive(namespace, name, liveVersionOf(spec, outcome.buildKey, f.commit));
    await this.o.state.save();
    return outcome;
  }

  /** Reads the function's env_from_secrets for specOf; a missing secret fails the deploy (the old version keeps serving). */
  async #readSecretEnv(record: FunctionRecord): Promise<DeployOutcome | undefined> {
    const key = `${record.namespace}/${record.name}`;
    if (!this.o.secretEnv || record.envFromSecrets.length === 0) {
      this.#secretEnvs.delete(key);
      return undefined;
    }
    try {
      this.#secretEnvs.set(key, await this.o.secretEnv(record.namespace, record.envFromSecrets));
      return undefined;
    } catch (err) {
      const outcome: DeployOutcome = { kind: 'failed', message: `env_from_secrets: ${(err as Error).message}`, stillServing: this.o.runner.processState(record.namespace, record.name) !== 'not started' };
      this.#applyOutcome(record.namespace, record.name, outcome, undefined);
      await this.o.state.save();
      return outcome;
    }
  }

  /** Once per function and runtime: it asks for a version the interpreter here is not. */
  #warnVersion(namespace: string, name: string, runtime: Runtime): void {
    const key = `${namespace}/${name}@${runtime}`;
    if (this.#versionWarned.has(key)) return;
    this.#versionWarned.add(key);
    const found = this.o.interpreterOf?.(runtime);
    const warning = found && versionMismatch(name, runtime, found.version, found.program);
    if (warning) this.o.logger.warn(warning);
  }

  /** `builtAt`: when the version that now runs was built (every Ready function has last_built_at). */
  #applyOutcome(namespace: string, name: string, outcome: DeployOutcome, builtAt: string | undefined): void {
    const label = `${namespace}/${name}`;
    const url = this.o.url(namespace, name);
    const inProgress = IN_PROGRESS.has(this.o.table.get(namespace, name)?.record.phase ?? '');
    switch (outcome.kind) {
      case 'unchanged':
        // A change that turned out to change nothing: what runs is the wanted version.
        if (inProgress && this.o.runner.processState(namespace, name) !== 'not started') this.o.table.patch(namespace, name, { phase: 'Ready' });
        return;
      case 'started':
        this.o.table.patch(
          namespace,
          name,
          { phase: 'Ready', message: undefined, imageRef: localImage(outcome.buildKey), lastBuiltAt: builtAt, url },
          { buildKey: outcome.buildKey },
        );
        this.o.logger.info(readyLine(name, url));
        return;
      case 'disabled':
        this.o.table.patch(
          namespace,
          name,
          { phase: 'Ready', message: 'http disabled', imageRef: localImage(outcome.buildKey), lastBuiltAt: builtAt },
          { buildKey: outcome.buildKey },
        );
        this.o.logger.info(`${label} built; http disabled (/fn answers 503)`);
        return;
      case 'failed':
        if (outcome.repeated && !inProgress) return;
        // Failed even while the previous version still serves: the change did not take.
        this.o.table.patch(namespace, name, {
          phase: 'Failed',
          message: outcome.stillServing ? `new version failed, still serving the previous one: ${outcome.message}` : outcome.message,
        });
        if (outcome.repeated) return;
        this.o.logger.error(`${label} ${outcome.stillServing ? 'new version failed (previous version keeps serving)' : 'failed'}: ${outcome.message}`);
    }
  }
}
