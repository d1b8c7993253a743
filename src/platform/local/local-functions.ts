// /v1 functions of `sless dev`: functions made through the API (managedBy api) next to the repository's
// (read only here: they change by changing function.yaml), and where /fn sends a call.
import { rm } from 'node:fs/promises';
import { functionSettingsOf } from '../records.ts';
import { PlatformError, type CodeFile, type Endpoint, type FunctionInput, type FunctionRecord, type UnpackedCode } from '../types.ts';
import type { FunctionRunner } from './function-runner.ts';
import type { FunctionTable } from './function-table.ts';
import { notFound } from './jobs-and-schedules.ts';
import type { LocalDeployer } from './local-deployer.ts';
import type { LocalState, StoredFunction } from './local-state.ts';
import type { FunctionPreparer } from './prepare-function.ts';

export interface LocalFunctionsOptions {
  readonly state: LocalState;
  readonly table: FunctionTable;
  readonly runner: FunctionRunner;
  readonly preparer: FunctionPreparer;
  readonly deployer: LocalDeployer;
  /** The repository the git functions come from (named in managed_by_git answers). */
  readonly repoName: string;
  readonly repoDisplayUrl: string;
  readonly url: (namespace: string, name: string) => string;
  /** Runs work in the background, logging failures; the owner waits for it on close. */
  readonly track: (p: Promise<unknown>) => void;
  readonly removeFunction: (namespace: string, name: string) => Promise<void>;
  /** The http rule over the function's triggers, and a POST/PUT's http_enabled applied to them (jobs-and-schedules.ts). */
  readonly http: {
    httpEnabledOf(namespace: string, fn: string): boolean;
    applyHttpEnabled(namespace: string, fn: string, httpEnabled: boolean | undefined): Promise<void>;
  };
}

export class LocalFunctions {
  constructor(private readonly o: LocalFunctionsOptions) {}

  resolveEndpoint(namespace: string, name: string): Endpoint {
    const f = this.o.table.get(namespace, name);
    if (!f) return { kind: 'not-found' };
    if (!f.record.httpEnabled) {
      return (f.manifest?.queues?.length ?? 0) > 0 ? { kind: 'disabled', forQueues: this.#running(namespace, name, f.record) } : { kind: 'disabled' };
    }
    return this.#running(namespace, name, f.record);
  }

  /** Where the function's running server answers, or why none does (yet). */
  #running(namespace: string, name: string, record: FunctionRecord): Endpoint {
    const f = { record };
    const baseUrl = this.o.runner.baseUrl(namespace, name);
    if (baseUrl) return { kind: 'ready', baseUrl, timeoutSec: f.record.timeoutSec };
    // At zero, or waking from it: /fn holds the call (its activator wakes the function).
    const live = this.o.runner.liveFunction(namespace, name);
    if (live && (live.replicas.size === 0 || live.replicas.starting)) return { kind: 'idle', timeoutSec: f.record.timeoutSec };
    const reason = f.record.phase === 'Ready' ? this.o.runner.processState(namespace, name) : `${f.record.phase}${f.record.message ? `: ${f.record.message}` : ''}`;
    return { kind: 'not-ready', reason };
  }

  async ensureNamespace(namespace: string): Promise<void> {
    const data = this.o.state.data;
    if (!data.namespaces.includes(namespace)) {
      data.namespaces.push(namespace);
      await this.o.state.save();
    }
  }

  list(namespace: string): FunctionRecord[] {
    return this.o.table.inNamespace(namespace);
  }

  get(namespace: string, name: string): FunctionRecord {
    const f = this.o.table.get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    return f.record;
  }

  #assertApiManaged(f: StoredFunction | undefined, what: string): asserts f is StoredFunction {
    if (!f) return;
    if (f.record.managedBy !== 'api') {
      throw new PlatformError(
        'managed_by_git',
        `${f.record.namespace}/${f.record.name} comes from the git repository ${this.o.repoDisplayUrl} (${f.path ?? ''}); ${what} by changing function.yaml there`,
        { repository: this.o.repoName },
      );
    }
  }

  #recordFromInput(namespace: string, input: FunctionInput, old?: FunctionRecord): FunctionRecord {
    return {
      ...functionSettingsOf(input),
      namespace,
      phase: old?.phase ?? 'Pending',
      imageRef: old?.imageRef,
      message: old ? old.message : 'no code yet: upload a zip to /v1/namespaces/<ns>/functions/<name>/upload',
      codeHash: old?.codeHash,
      lastBuiltAt: old?.lastBuiltAt,
      url: this.o.url(namespace, input.name),
      managedBy: 'api',
    };
  }

  async create(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    if (this.o.table.get(namespace, input.name)) throw new PlatformError('already_exists', `function ${namespace}/${input.name} already exists; PUT to change it`);
    await this.ensureNamespace(namespace);
    await this.o.http.applyHttpEnabled(namespace, input.name, input.httpEnabled);
    this.o.table.put({ record: { ...this.#recordFromInput(namespace, input), httpEnabled: this.o.http.httpEnabledOf(namespace, input.name) } });
    await this.o.state.save();
    return this.get(namespace, input.name);
  }

  /** After an http trigger of the function changed: follow the rule, starting or stopping its process. */
  httpChanged(namespace: string, name: string): void {
    const f = this.o.table.get(namespace, name);
    if (!f) return;
    const httpEnabled = this.o.http.httpEnabledOf(namespace, name);
    if (httpEnabled === f.record.httpEnabled) return;
    this.o.table.patch(namespace, name, { httpEnabled });
    this.o.track(this.o.state.save());
    this.o.track(this.o.deployer.deploy(this.o.table.get(namespace, name) as StoredFunction));
  }

  async update(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    const f = this.o.table.get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    this.#assertApiManaged(f, 'change it');
    if (input.name !== name) throw new PlatformError('invalid', `the body names ${input.name} but the path names ${name}; a function cannot be renamed`);
    await this.o.http.applyHttpEnabled(namespace, name, input.httpEnabled);
    const record: FunctionRecord = {
      ...this.#recordFromInput(namespace, input, f.record),
      httpEnabled: this.o.http.httpEnabledOf(namespace, name),
      // The change's own answer, and every read until the new version serves, say it is under way.
      ...(f.record.codeHash ? { phase: 'Pending' as const } : {}),
    };
    const runtimeChanged = record.runtime !== f.record.runtime;
    this.o.table.put({ ...f, record });
    await this.o.state.save();
    if (record.codeHash) {
      const stored = this.o.table.get(namespace, name) as StoredFunction;
      const files = runtimeChanged && f.buildKey ? await this.o.preparer.readSource(f.buildKey) : undefined;
      this.o.track(this.o.deployer.deploy(stored, files ? () => files : undefined));
    }
    return record;
  }

  async delete(namespace: string, name: string): Promise<void> {
    const f = this.o.table.get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    this.#assertApiManaged(f, 'remove it');
    await this.o.removeFunction(namespace, name);
  }

  /** Takes the unpacked folder over: it is moved into the build, or removed once the deploy no longer needs it. */
  async uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord> {
    const release = () => rm(code.dir, { recursive: true, force: true });
    try {
      const f = this.o.table.get(namespace, name);
      if (!f) throw notFound('function', namespace, name);
      this.#assertApiManaged(f, 'change its code');
      this.o.table.put({ ...f, record: { ...f.record, codeHash: code.codeHash, message: undefined, phase: 'Pending' } });
      await this.o.state.save();
    } catch (err) {
      await release();
      throw err;
    }
    this.o.track(this.o.deployer.deploy(this.o.table.get(namespace, name) as StoredFunction, code).finally(release));
    return (this.o.table.get(namespace, name) as StoredFunction).record;
  }

  async getSource(namespace: string, name: string): Promise<CodeFile[]> {
    const f = this.o.table.get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    if (!f.buildKey || !(await this.o.preparer.isPrepared(f.buildKey))) {
      throw new PlatformError('not_found', `function ${namespace}/${name} has no code yet`);
    }
    return this.o.preparer.readSource(f.buildKey);
  }
}
