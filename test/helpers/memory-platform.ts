// An in-memory Platform for the HTTP tests: records what it is asked, serves endpoints that tests
// point at real loopback servers, and behaves like the real ones on errors (PlatformError codes).
import { queueSettingsOf } from '../../src/manifest/queue-schema.ts';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readUnpacked } from '../../src/platform/read-unpacked.ts';
import type {
  CodeFile,
  UnpackedCode,
  Endpoint,
  FunctionInput,
  FunctionRecord,
  JobInput,
  JobRecord,
  LogLine,
  LogQuery,
  Platform,
  RevisionRecord,
  RepositoryInput,
  RepositoryRecord,
  TriggerInput,
  TriggerRecord,
  WebhookTarget,
} from '../../src/platform/types.ts';
import { PlatformError } from '../../src/platform/types.ts';
import { FunctionLogs } from '../../src/platform/local/function-logs.ts';
import { JOB_DEFAULTS, REPOSITORY_DEFAULTS, TRIGGER_DEFAULTS } from '../../src/manifest/defaults.ts';
import { functionSettingsOf } from '../../src/platform/records.ts';
import { httpTriggerChanges, servesHttp, triggerInputProblem } from '../../src/platform/rules.ts';
import { rollbackTarget } from '../../src/platform/revisions.ts';

const key = (ns: string, name: string) => `${ns}/${name}`;

export class MemoryPlatform implements Platform {
  readonly functions = new Map<string, FunctionRecord>();
  readonly sources = new Map<string, CodeFile[]>();
  /** Test-controlled revisions per function (ns/name). */
  readonly revisions = new Map<string, RevisionRecord[]>();
  readonly triggers = new Map<string, TriggerRecord>();
  readonly jobs = new Map<string, JobRecord>();
  readonly repositories = new Map<string, RepositoryRecord>();
  readonly secrets = new Map<string, RepositoryInput['credentials'] & { webhookSecret?: string }>();
  readonly namespaces = new Set<string>();
  readonly syncRequests: Array<{ namespace: string; name: string; reason: string }> = [];
  /** Test-controlled endpoints; a function without one is not-ready. */
  readonly endpoints = new Map<string, Endpoint>();
  readiness: { ok: boolean; detail?: string } = { ok: true };
  /** Lines a test writes for a function (as `sless dev`'s processes would). */
  readonly logs = new FunctionLogs();

  async readLogs(namespace: string, name: string, query: LogQuery): Promise<AsyncIterable<LogLine>> {
    get(this.functions, namespace, name, 'function');
    return this.logs.read(namespace, name, query);
  }

  async resolveEndpoint(namespace: string, name: string): Promise<Endpoint> {
    const fn = this.functions.get(key(namespace, name));
    if (!fn) return { kind: 'not-found' };
    if (!this.httpEnabledOf(namespace, name)) return { kind: 'disabled' };
    return this.endpoints.get(key(namespace, name)) ?? { kind: 'not-ready', reason: 'no running instance' };
  }

  /** Test helper: a ready function served at baseUrl. */
  serve(namespace: string, name: string, baseUrl: string, timeoutSec = 30): void {
    if (!this.functions.has(key(namespace, name))) {
      this.functions.set(key(namespace, name), record(namespace, { name, runtime: 'nodejs20', timeoutSec }, 'api'));
    }
    this.endpoints.set(key(namespace, name), { kind: 'ready', baseUrl, timeoutSec });
  }

  async ensureNamespace(namespace: string): Promise<void> {
    this.namespaces.add(namespace);
  }

  async listFunctions(namespace: string): Promise<FunctionRecord[]> {
    return [...this.functions.values()].filter((f) => f.namespace === namespace).map((f) => this.view(f));
  }
  async getFunction(namespace: string, name: string): Promise<FunctionRecord> {
    return this.view(get(this.functions, namespace, name, 'function'));
  }
  async createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    if (this.functions.has(key(namespace, input.name))) {
      throw new PlatformError('already_exists', `function ${namespace}/${input.name} already exists`);
    }
    const fn = record(namespace, input, 'api');
    this.functions.set(key(namespace, input.name), fn);
    this.applyHttpEnabled(namespace, input.name, input.httpEnabled);
    return this.view(fn);
  }
  async updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    const old = this.editable(namespace, name);
    const fn = { ...old, ...record(namespace, input, 'api'), phase: old.phase, codeHash: old.codeHash };
    this.functions.set(key(namespace, name), fn);
    this.applyHttpEnabled(namespace, name, input.httpEnabled);
    return this.view(fn);
  }

  /** The one rule (rules.ts): a function serves while it has no http trigger or any enabled one. */
  private httpEnabledOf(namespace: string, fn: string): boolean {
    return servesHttp(this.httpTriggersOf(namespace, fn).map((t) => t.enabled));
  }
  private httpTriggersOf(namespace: string, fn: string): TriggerRecord[] {
    return [...this.triggers.values()].filter((t) => t.namespace === namespace && t.type === 'http' && t.functionRef === fn);
  }
  private applyHttpEnabled(namespace: string, fn: string, httpEnabled: boolean | undefined): void {
    const current = this.httpTriggersOf(namespace, fn);
    const changes = httpTriggerChanges(fn, current, httpEnabled);
    for (const t of current) if (changes.set.includes(t.name)) this.triggers.set(key(namespace, t.name), { ...t, enabled: !t.enabled, active: !t.enabled });
    if (changes.create) {
      this.triggers.set(key(namespace, changes.create), { name: changes.create, namespace, type: 'http', functionRef: fn, enabled: false, active: false, managedBy: 'api' });
    }
  }
  private view(fn: FunctionRecord): FunctionRecord {
    return { ...fn, httpEnabled: this.httpEnabledOf(fn.namespace, fn.name) };
  }
  async deleteFunction(namespace: string, name: string): Promise<void> {
    this.editable(namespace, name);
    this.functions.delete(key(namespace, name));
    for (const [k, t] of this.triggers) if (t.namespace === namespace && t.functionRef === name) this.triggers.delete(k);
  }
  readonly uploadsDir = path.join(os.tmpdir(), `sless-memory-uploads-${process.pid}-${randomBytes(4).toString('hex')}`);
  async uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord> {
    const files: CodeFile[] = [];
    try {
      for await (const f of readUnpacked(code)) files.push(f);
    } finally {
      await rm(code.dir, { recursive: true, force: true });
    }
    const old = this.editable(namespace, name);
    this.sources.set(key(namespace, name), files);
    const fn: FunctionRecord = { ...old, phase: 'Building', codeHash: `sha256:${'0'.repeat(63)}${files.length % 10}` };
    this.functions.set(key(namespace, name), fn);
    return this.view(fn);
  }
  async getSource(namespace: string, name: string): Promise<CodeFile[]> {
    await this.getFunction(namespace, name);
    return this.sources.get(key(namespace, name)) ?? [];
  }

  async listRevisions(namespace: string, name: string): Promise<RevisionRecord[]> {
    await this.getFunction(namespace, name);
    return this.revisions.get(key(namespace, name)) ?? [];
  }
  async rollback(namespace: string, name: string, revision?: number): Promise<FunctionRecord> {
    const fn = get(this.functions, namespace, name, 'function');
    const revs = (this.revisions.get(key(namespace, name)) ?? []).map((r) => ({ ...r, configHash: '', config: undefined }));
    const target = rollbackTarget(name, revs, revision);
    if (!target.ok) throw new PlatformError('invalid', target.message);
    const pinned = { ...fn, pinned: { revision: target.revision.revision, since: new Date().toISOString() } };
    this.functions.set(key(namespace, name), pinned);
    return this.view(pinned);
  }
  async undoRollback(namespace: string, name: string): Promise<FunctionRecord> {
    const { pinned: _pin, ...fn } = get(this.functions, namespace, name, 'function');
    this.functions.set(key(namespace, name), fn);
    return this.view(fn);
  }

  async listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return [...this.triggers.values()].filter((t) => t.namespace === namespace);
  }
  async getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return get(this.triggers, namespace, name, 'trigger');
  }
  async createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    if (this.triggers.has(key(namespace, input.name))) throw new PlatformError('already_exists', `trigger ${namespace}/${input.name} already exists`);
    const problem = triggerInputProblem(input);
    if (problem) throw new PlatformError('invalid', problem);
    this.functionFor(namespace, input.functionRef, `trigger ${input.name}`);
    const enabled = input.enabled ?? TRIGGER_DEFAULTS.enabled;
    const { queue, ...rest } = input;
    const t: TriggerRecord = { ...rest, ...(queue ? { queue: queueSettingsOf(queue) } : {}), namespace, enabled, active: enabled, managedBy: 'api' };
    this.triggers.set(key(namespace, input.name), t);
    return t;
  }
  async setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    const t = { ...(await this.getTrigger(namespace, name)), enabled, active: enabled };
    this.triggers.set(key(namespace, name), t);
    return t;
  }
  async deleteTrigger(namespace: string, name: string): Promise<void> {
    await this.getTrigger(namespace, name);
    this.triggers.delete(key(namespace, name));
  }

  async createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    if (this.jobs.has(key(namespace, input.name))) throw new PlatformError('already_exists', `job ${namespace}/${input.name} already exists`);
    this.functionFor(namespace, input.functionRef, `job ${input.name}`);
    const j: JobRecord = { ...input, namespace, runId: input.runId ?? JOB_DEFAULTS.runId, phase: 'Pending', managedBy: 'api' };
    this.jobs.set(key(namespace, input.name), j);
    return j;
  }
  async listJobs(namespace: string): Promise<JobRecord[]> {
    return [...this.jobs.values()].filter((j) => j.namespace === namespace);
  }
  async getJob(namespace: string, name: string): Promise<JobRecord> {
    return get(this.jobs, namespace, name, 'job');
  }
  async deleteJob(namespace: string, name: string): Promise<void> {
    await this.getJob(namespace, name);
    this.jobs.delete(key(namespace, name));
  }

  async listRepositories(namespace: string): Promise<RepositoryRecord[]> {
    return [...this.repositories.values()].filter((r) => r.namespace === namespace);
  }
  async getRepository(namespace: string, name: string): Promise<RepositoryRecord> {
    return get(this.repositories, namespace, name, 'repository');
  }
  async createRepository(namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    if (this.repositories.has(key(namespace, input.name))) {
      throw new PlatformError('already_exists', `repository ${namespace}/${input.name} already exists`);
    }
    const r: RepositoryRecord = {
      name: input.name,
      namespace,
      url: input.url,
      branch: input.branch ?? REPOSITORY_DEFAULTS.branch,
      path: input.path ?? REPOSITORY_DEFAULTS.path,
      interval: input.interval ?? REPOSITORY_DEFAULTS.interval,
      suspend: input.suspend ?? REPOSITORY_DEFAULTS.suspend,
      prune: input.prune ?? REPOSITORY_DEFAULTS.prune,
      secretName: input.credentials || input.webhookSecret ? `${input.name}-credentials` : undefined,
      webhookPath: `/hooks/${namespace}/${input.name}`,
      functions: [],
    };
    this.repositories.set(key(namespace, input.name), r);
    this.secrets.set(key(namespace, input.name), { ...input.credentials, webhookSecret: input.webhookSecret });
    return r;
  }
  async deleteRepository(namespace: string, name: string): Promise<void> {
    await this.getRepository(namespace, name);
    this.repositories.delete(key(namespace, name));
  }
  async requestSync(namespace: string, name: string, reason: string): Promise<void> {
    this.syncRequests.push({ namespace, name, reason });
  }
  async webhookTarget(namespace: string, name: string): Promise<WebhookTarget | undefined> {
    const r = this.repositories.get(key(namespace, name));
    if (!r) return undefined;
    return { branch: r.branch, secret: this.secrets.get(key(namespace, name))?.webhookSecret };
  }

  async ready(): Promise<{ ok: boolean; detail?: string }> {
    return this.readiness;
  }

  /** Test helper: marks a function as owned by a git repository. */
  manageByGit(namespace: string, name: string, repository: string): void {
    const fn = this.functions.get(key(namespace, name));
    if (fn) this.functions.set(key(namespace, name), { ...fn, managedBy: `git:${repository}` });
  }

  /** As on the real platforms: a trigger or job naming a missing function is an invalid input. */
  private functionFor(namespace: string, fn: string, what: string): FunctionRecord {
    const f = this.functions.get(key(namespace, fn));
    if (!f) throw new PlatformError('invalid', `${what} names function ${fn}, which does not exist in ${namespace}`);
    return f;
  }

  private editable(namespace: string, name: string): FunctionRecord {
    const fn = this.functions.get(key(namespace, name));
    if (!fn) throw new PlatformError('not_found', `function ${namespace}/${name} does not exist`);
    if (fn.managedBy !== 'api') {
      const repository = fn.managedBy.slice('git:'.length);
      throw new PlatformError('managed_by_git', `function ${namespace}/${name} comes from git`, { repository });
    }
    return fn;
  }
}

function get<T>(map: Map<string, T>, namespace: string, name: string, kind: string): T {
  const v = map.get(key(namespace, name));
  if (!v) throw new PlatformError('not_found', `${kind} ${namespace}/${name} does not exist`);
  return v;
}

function record(namespace: string, input: FunctionInput, managedBy: FunctionRecord['managedBy']): FunctionRecord {
  return {
    ...functionSettingsOf(input),
    namespace,
    phase: 'Pending',
    managedBy,
  };
}
