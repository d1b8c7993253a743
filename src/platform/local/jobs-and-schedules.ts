// Triggers and one-shot jobs of `sless dev`: the ones function.yaml declares (named as on Kubernetes,
// names.ts: `f-http` for http.enabled, schedule `s` of function `f` is the trigger `f-cron-s`, job `j`
// is the job `f-j`) and the ones made through /v1. Cron triggers and jobs run the function once in job
// mode (runtime with SLESS_MODE=job, SLESS_EVENT); http triggers decide whether /fn serves (rules.ts).
// A job runs when its run_id is larger than the last one run; its result stays in state.json.
import { JOB_DEFAULTS, TRIGGER_DEFAULTS } from '../../manifest/defaults.ts';
import type { FunctionManifest } from '../../manifest/types.ts';
import { cronTriggerName, functionJobName, httpTriggerName, legacyDevTriggerName } from '../../manifest/generated-names.ts';
import { httpTriggerChanges, servesHttp, triggerInputProblem } from '../rules.ts';
import { PlatformError, type JobInput, type JobRecord, type ManagedBy, type TriggerInput, type TriggerRecord } from '../types.ts';
import type { ChildGroup, CommandSpec } from './child-group.ts';
import { LocalScheduler } from './local-scheduler.ts';
import { stateKey, type LocalState } from './local-state.ts';
import type { Logger } from './logger.ts';
import { runJob, type JobRunResult } from './run-job.ts';

export interface JobsAndSchedulesOptions {
  readonly state: LocalState;
  readonly children: ChildGroup;
  readonly logger: Logger;
  /** `git:<repo>`: the owner of what function.yaml declares. */
  readonly managedBy: ManagedBy;
  /** Named in 409 answers for changes that belong in the repository. */
  readonly repoName: string;
  readonly repoDisplayUrl: string;
  /** The job-mode command of a function's current version, or why there is none. */
  readonly commandOf: (namespace: string, fn: string) => { command: CommandSpec; timeoutSec: number } | { missing: string };
  readonly functionExists: (namespace: string, fn: string) => boolean;
  readonly url: (namespace: string, fn: string) => string;
  /** Runs work in the background, logging failures; the owner waits for it on close. */
  readonly track: (p: Promise<unknown>) => void;
  /** Called after /v1 changed an http trigger of the function (it may now serve, or stop serving). */
  readonly httpChanged?: (namespace: string, fn: string) => void;
}

export function notFound(kind: string, namespace: string, name: string): PlatformError {
  return new PlatformError('not_found', `${kind} ${namespace}/${name} does not exist`);
}

const parseEvent = (json: string | undefined): unknown => (json ? (JSON.parse(json) as unknown) : {});

export class JobsAndSchedules {
  readonly #o: JobsAndSchedulesOptions;
  readonly #scheduler = new LocalScheduler();
  readonly #runningTriggers = new Set<string>();
  #stopped = false;

  constructor(opts: JobsAndSchedulesOptions) {
    this.#o = opts;
  }

  get #data() {
    return this.#o.state.data;
  }

  /** At start: schedules every stored trigger, re-runs jobs a stop of sless dev interrupted. */
  resume(): void {
    for (const t of Object.values(this.#data.triggers)) {
      // A stored trigger that no longer schedules (a time zone this machine lacks, a hand edit) is
      // reported and left inactive; it never stops the start.
      try {
        this.#schedule(t);
      } catch (err) {
        const key = stateKey(t.namespace, t.name);
        this.#o.logger.error(`trigger ${key} (schedule "${t.schedule}"${t.timezone ? ` in ${t.timezone}` : ''}) skipped: ${(err as Error).message}`);
        this.#data.triggers[key] = { ...t, active: false };
      }
    }
    for (const j of Object.values(this.#data.jobs)) if (j.phase === 'Running') this.#start(j);
  }

  stop(): void {
    this.#stopped = true;
    this.#scheduler.stopAll();
  }

  /** The function's http triggers, by name. */
  httpTriggersOf(namespace: string, fn: string): TriggerRecord[] {
    return Object.values(this.#data.triggers).filter((t) => t.namespace === namespace && t.type === 'http' && t.functionRef === fn);
  }

  /** Whether the function serves /fn: the one rule over its http triggers (rules.ts). */
  httpEnabledOf(namespace: string, fn: string): boolean {
    return servesHttp(this.httpTriggersOf(namespace, fn).map((t) => t.enabled));
  }

  /** Makes the `<fn>-http` trigger of a repository function say what its function.yaml's http.enabled says. */
  applyHttp(namespace: string, m: FunctionManifest): void {
    const name = httpTriggerName(m.name);
    const enabled = m.http.enabled;
    const old = this.#data.triggers[stateKey(namespace, name)];
    if (old && old.managedBy !== this.#o.managedBy) return; // a /v1 trigger of that name: the repository's function is refused anyway
    this.#data.triggers[stateKey(namespace, name)] = {
      name,
      namespace,
      type: 'http',
      functionRef: m.name,
      enabled,
      active: enabled,
      url: this.#o.url(namespace, m.name),
      managedBy: this.#o.managedBy,
    };
  }

  /** A /v1 POST/PUT's http_enabled, applied to the function's http triggers (rules.ts). */
  async applyHttpEnabled(namespace: string, fn: string, httpEnabled: boolean | undefined): Promise<void> {
    const current = this.httpTriggersOf(namespace, fn);
    const changes = httpTriggerChanges(fn, current, httpEnabled);
    for (const t of current) {
      if (changes.set.includes(t.name)) this.#data.triggers[stateKey(namespace, t.name)] = { ...t, enabled: !t.enabled, active: !t.enabled };
    }
    if (changes.create) {
      if (this.#data.triggers[stateKey(namespace, changes.create)]) {
        throw new PlatformError('already_exists', `http_enabled: false needs the trigger ${namespace}/${changes.create}, but a trigger of that name exists`);
      }
      this.#data.triggers[stateKey(namespace, changes.create)] = {
        name: changes.create,
        namespace,
        type: 'http',
        functionRef: fn,
        enabled: false,
        active: false,
        url: this.#o.url(namespace, fn),
        managedBy: 'api',
      };
    }
    await this.#o.state.save();
  }

  /** Makes the function's triggers and jobs match its function.yaml. */
  applyManifest(namespace: string, m: FunctionManifest): void {
    const wanted = new Set<string>([stateKey(namespace, httpTriggerName(m.name))]);
    this.applyHttp(namespace, m);
    for (const s of m.schedules) {
      const name = cronTriggerName(m.name, s.name);
      const key = stateKey(namespace, name);
      wanted.add(key);
      const old = this.#data.triggers[key] ?? this.#legacyTrigger(namespace, m.name, s.name);
      const t: TriggerRecord = {
        name,
        namespace,
        type: 'cron',
        functionRef: m.name,
        schedule: s.cron,
        timezone: s.timezone,
        eventJson: s.event === undefined ? undefined : JSON.stringify(s.event),
        // A PATCH {"enabled": false} through /v1 survives syncs.
        enabled: old?.enabled ?? true,
        active: old?.enabled ?? true,
        lastScheduleTime: old?.lastScheduleTime,
        managedBy: this.#o.managedBy,
      };
      this.#data.triggers[key] = t;
      this.#schedule(t);
    }
    for (const [key, t] of Object.entries(this.#data.triggers)) {
      if (t.namespace === namespace && t.functionRef === m.name && t.managedBy === this.#o.managedBy && !wanted.has(key)) {
        this.#scheduler.delete(key);
        delete this.#data.triggers[key];
      }
    }
    for (const j of m.jobs) {
      const name = functionJobName(m.name, j.name);
      const old = this.#data.jobs[stateKey(namespace, name)];
      if (old && old.runId >= j.runId) continue;
      const eventJson = j.event === undefined ? undefined : JSON.stringify(j.event);
      this.#begin({ name, namespace, functionRef: m.name, eventJson, runId: j.runId, phase: 'Pending', managedBy: this.#o.managedBy });
    }
  }

  /** A schedule's trigger as sless dev stored it before the names were shared (`<fn>-<schedule>`), so its state carries over. */
  #legacyTrigger(namespace: string, fn: string, schedule: string): TriggerRecord | undefined {
    const t = this.#data.triggers[stateKey(namespace, legacyDevTriggerName(fn, schedule))];
    return t && t.type === 'cron' && t.functionRef === fn && t.managedBy === this.#o.managedBy ? t : undefined;
  }

  /** Drops the triggers of a removed function and the jobs the repository declared for it. */
  forget(namespace: string, fn: string): void {
    for (const [key, t] of Object.entries(this.#data.triggers)) {
      if (t.namespace === namespace && t.functionRef === fn) {
        this.#scheduler.delete(key);
        delete this.#data.triggers[key];
      }
    }
    for (const [key, j] of Object.entries(this.#data.jobs)) {
      if (j.namespace === namespace && j.functionRef === fn && j.managedBy !== 'api') delete this.#data.jobs[key];
    }
  }

  #schedule(t: TriggerRecord): void {
    const key = stateKey(t.namespace, t.name);
    if (t.type !== 'cron' || !t.schedule || !t.enabled || this.#stopped) {
      this.#scheduler.delete(key);
      return;
    }
    this.#scheduler.set({ key, cron: t.schedule, timezone: t.timezone, run: () => this.#runTrigger(key) });
  }

  async #runTrigger(key: string): Promise<void> {
    const t = this.#data.triggers[key];
    if (!t || this.#stopped || this.#runningTriggers.has(key)) return;
    this.#runningTriggers.add(key);
    try {
      this.#data.triggers[key] = { ...t, lastScheduleTime: new Date().toISOString() };
      const r = await this.#runOnce(t.namespace, t.functionRef, parseEvent(t.eventJson), `${t.namespace}/${t.name}`);
      (r.succeeded ? this.#o.logger.info : this.#o.logger.error)(
        `schedule ${t.name} of ${t.functionRef} ${r.succeeded ? 'ran' : 'failed'}: ${r.message.slice(0, 500)}`,
      );
      await this.#o.state.save();
    } finally {
      this.#runningTriggers.delete(key);
    }
  }

  #runOnce(namespace: string, fn: string, event: unknown, label: string): Promise<JobRunResult> {
    const target = this.#o.commandOf(namespace, fn);
    if ('missing' in target) {
      const now = new Date().toISOString();
      return Promise.resolve({ succeeded: false, message: target.missing, startTime: now, completionTime: now });
    }
    return runJob({ ...target, event, label, children: this.#o.children, logger: this.#o.logger });
  }

  /** Records a new run of a job: Skipped for run_id 0, else started. */
  #begin(job: JobRecord): void {
    if (job.runId === 0) {
      this.#data.jobs[stateKey(job.namespace, job.name)] = { ...job, phase: 'Skipped', message: 'run_id is 0: not run' };
      return;
    }
    this.#start(job);
  }

  #start(job: JobRecord): void {
    const key = stateKey(job.namespace, job.name);
    this.#data.jobs[key] = { ...job, phase: 'Running', jobName: `${job.name}-${job.runId}`, startTime: new Date().toISOString() };
    this.#o.logger.info(`job ${job.name} (run_id ${job.runId}) of ${job.functionRef} started`);
    this.#o.track(
      (async () => {
        const r = await this.#runOnce(job.namespace, job.functionRef, parseEvent(job.eventJson), `${job.namespace}/${job.name}`);
        const current = this.#data.jobs[key];
        // Deleted or superseded by a newer run_id meanwhile: the newer record stays.
        if (!current || current.runId !== job.runId || this.#stopped) return;
        this.#data.jobs[key] = {
          ...current,
          phase: r.succeeded ? 'Succeeded' : 'Failed',
          startTime: r.startTime,
          completionTime: r.completionTime,
          message: r.message,
        };
        (r.succeeded ? this.#o.logger.info : this.#o.logger.error)(`job ${job.name} ${r.succeeded ? 'succeeded' : 'failed'}: ${r.message.slice(0, 500)}`);
        await this.#o.state.save();
      })(),
    );
  }

  #gitOwned(kind: string, namespace: string, name: string, fn: string, what: string): PlatformError {
    return new PlatformError('managed_by_git', `${kind} ${namespace}/${name} comes from function.yaml of ${fn} in ${this.#o.repoDisplayUrl}; ${what} there`, {
      repository: this.#o.repoName,
    });
  }

  // ---- Platform: triggers ----------------------------------------------------------------------

  listTriggers(namespace: string): TriggerRecord[] {
    return Object.values(this.#data.triggers)
      .filter((t) => t.namespace === namespace)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  getTrigger(namespace: string, name: string): TriggerRecord {
    const t = this.#data.triggers[stateKey(namespace, name)];
    if (!t) throw notFound('trigger', namespace, name);
    return t;
  }

  async createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    const key = stateKey(namespace, input.name);
    if (this.#data.triggers[key]) throw new PlatformError('already_exists', `trigger ${namespace}/${input.name} already exists`);
    if (!this.#o.functionExists(namespace, input.functionRef)) {
      throw new PlatformError('invalid', `trigger ${input.name} names function ${input.functionRef}, which does not exist in ${namespace}`);
    }
    const problem = triggerInputProblem(input);
    if (problem) throw new PlatformError('invalid', problem);
    if (input.type === 'queue') {
      // sless dev consumes the queues function.yaml declares (local-queues.ts), not ones made through /v1.
      throw new PlatformError('invalid', `trigger ${input.name}: sless dev takes queue triggers from function.yaml (queues:), not from /v1`);
    }
    const enabled = input.enabled ?? TRIGGER_DEFAULTS.enabled;
    const t: TriggerRecord = {
      name: input.name,
      namespace,
      type: input.type,
      functionRef: input.functionRef,
      schedule: input.schedule,
      timezone: input.timezone,
      eventJson: input.eventJson,
      enabled,
      active: enabled,
      url: input.type === 'http' ? this.#o.url(namespace, input.functionRef) : undefined,
      managedBy: 'api',
    };
    this.#data.triggers[key] = t;
    this.#schedule(t);
    await this.#o.state.save();
    if (t.type === 'http') this.#o.httpChanged?.(namespace, t.functionRef);
    return t;
  }

  async setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    const t = this.getTrigger(namespace, name);
    // http.enabled of function.yaml decides its http trigger, as on Kubernetes; a schedule's PATCH survives syncs.
    if (t.type === 'http' && t.managedBy !== 'api') throw this.#gitOwned('trigger', namespace, name, t.functionRef, 'change http.enabled');
    const next = { ...t, enabled, active: enabled };
    this.#data.triggers[stateKey(namespace, name)] = next;
    this.#schedule(next);
    await this.#o.state.save();
    if (next.type === 'http') this.#o.httpChanged?.(namespace, next.functionRef);
    return next;
  }

  async deleteTrigger(namespace: string, name: string): Promise<void> {
    const t = this.getTrigger(namespace, name);
    if (t.managedBy !== 'api') throw this.#gitOwned('trigger', namespace, name, t.functionRef, t.type === 'http' ? 'change http.enabled' : 'remove the schedule');
    this.#scheduler.delete(stateKey(namespace, name));
    delete this.#data.triggers[stateKey(namespace, name)];
    await this.#o.state.save();
    if (t.type === 'http') this.#o.httpChanged?.(namespace, t.functionRef);
  }

  // ---- Platform: jobs --------------------------------------------------------------------------

  async createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    if (this.#data.jobs[stateKey(namespace, input.name)]) {
      throw new PlatformError('already_exists', `job ${namespace}/${input.name} already exists; delete it first to run it again`);
    }
    if (!this.#o.functionExists(namespace, input.functionRef)) {
      throw new PlatformError('invalid', `job ${input.name} names function ${input.functionRef}, which does not exist in ${namespace}`);
    }
    const runId = input.runId ?? JOB_DEFAULTS.runId;
    this.#begin({ name: input.name, namespace, functionRef: input.functionRef, eventJson: input.eventJson, runId, phase: 'Pending', managedBy: 'api' });
    await this.#o.state.save();
    return this.getJob(namespace, input.name);
  }

  listJobs(namespace: string): JobRecord[] {
    return Object.values(this.#data.jobs)
      .filter((j) => j.namespace === namespace)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  getJob(namespace: string, name: string): JobRecord {
    const j = this.#data.jobs[stateKey(namespace, name)];
    if (!j) throw notFound('job', namespace, name);
    return j;
  }

  async deleteJob(namespace: string, name: string): Promise<void> {
    const j = this.getJob(namespace, name);
    if (j.managedBy !== 'api') throw this.#gitOwned('job', namespace, name, j.functionRef, 'change it');
    delete this.#data.jobs[stateKey(namespace, name)];
    await this.#o.state.save();
  }
}
