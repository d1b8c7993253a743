// `Platform` over the sless CRDs: /v1 reads and writes Function, Trigger, FunctionJob and
// FunctionRepository objects, and the leader's reconcilers do the rest. Every replica can serve it: it
// keeps no state of its own beyond a short-lived endpoint cache, and asks for syncs by annotating the
// repository (the leader's watch sees it at once).
//
// Objects a FunctionRepository generates carry the `sless.kube5s.ru/repository` label; /v1 refuses to
// change them (managed_by_git) because the next sync would put them back. Functions made through /v1
// get an http Trigger `<name>-http` (like repository functions do), owned by the Function, which carries
// http_enabled.
import {
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  VersionApi,
  type KubeConfig,
  type V1Secret,
} from '@kubernetes/client-node';
import type { ArtifactStore } from '../../build/artifact-store.ts';
import { isArtifactStoreError } from '../../build/artifact-store.ts';
import { baseImageOf } from '../../build/runtime-catalog.ts';
import { checkCron, checkTimezone } from '../../manifest/check-cron.ts';
import type { Runtime } from '../../manifest/types.ts';
import { hashFiles } from '../../source/code-hash.ts';
import {
  PlatformError,
  type CodeFile,
  type Endpoint,
  type FunctionInput,
  type FunctionRecord,
  type JobInput,
  type JobRecord,
  type Platform,
  type RepositoryInput,
  type RepositoryRecord,
  type TriggerInput,
  type TriggerRecord,
  type WebhookTarget,
} from '../types.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { contextDockerfile, ensureContext } from './build-context.ts';
import { EndpointCache } from './endpoint-cache.ts';
import { buildKey } from './objects/build-key.ts';
import { serviceBaseUrl } from './objects/function-workload.ts';
import { ANNOTATIONS, API_VERSION, GROUP, LABELS } from './objects/meta.ts';
import { httpTriggerName } from './objects/repository-objects.ts';
import { KINDS, type FunctionJobResource, type FunctionResource, type RepositoryResource, type SlessKind, type TriggerResource } from './objects/resources.ts';
import { FUNCTION_INPUT_DEFAULTS, functionSettingsOf } from '../records.ts';
import { readContextCode } from './read-context.ts';
import { CRD_DEFAULTS, functionRecord, httpEnabledFrom, jobRecord, repositoryOf, repositoryRecord, triggerRecord } from './records.ts';
import { VERSION } from './runtime/kube-client.ts';
import type { ControllerSettings } from './settings.ts';

export interface KubernetesPlatformOptions {
  readonly kubeConfig: KubeConfig;
  /** Where build contexts live (the same store the controller's builds read). */
  readonly store: ArtifactStore;
  readonly settings: Pick<ControllerSettings, 'clusterDomain' | 'runtimeImagePrefix' | 's3' | 'publicBaseUrl'>;
  /** Endpoint cache TTLs (ms); tests shorten them. */
  readonly endpointTtl?: { readonly readyMs?: number; readonly otherMs?: number };
  /** How long ready() waits for the API server. Default 3000 ms. */
  readonly readyTimeoutMs?: number;
  readonly now?: () => Date;
}

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Labels every object made through /v1 carries. */
const API_LABELS = { [LABELS.managedBy]: 'sless' } as const;

/** The Secret that holds a repository's git credentials and webhook secret. */
export function credentialsSecretName(repository: string): string {
  return `${repository}-credentials`;
}

type AnyResource = FunctionResource | TriggerResource | FunctionJobResource | RepositoryResource;

export class KubernetesPlatform implements Platform {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly apps: AppsV1Api;
  private readonly version: VersionApi;
  private readonly endpoints: EndpointCache;
  private readonly now: () => Date;

  constructor(private readonly opts: KubernetesPlatformOptions) {
    this.custom = opts.kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.apps = opts.kubeConfig.makeApiClient(AppsV1Api);
    this.version = opts.kubeConfig.makeApiClient(VersionApi);
    this.now = opts.now ?? (() => new Date());
    this.endpoints = new EndpointCache({
      load: (ns, name) => this.loadEndpoint(ns, name),
      ...(opts.endpointTtl?.readyMs !== undefined ? { readyTtlMs: opts.endpointTtl.readyMs } : {}),
      ...(opts.endpointTtl?.otherMs !== undefined ? { otherTtlMs: opts.endpointTtl.otherMs } : {}),
    });
  }

  /** Loads that went to the API server for /fn (tests and the benchmark). */
  get endpointLoads(): number {
    return this.endpoints.loads;
  }

  // ---- generic object access -------------------------------------------------------------------

  private async get<T extends AnyResource>(kind: SlessKind, namespace: string, name: string, what: string): Promise<T> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name })) as T;
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  private async find<T extends AnyResource>(kind: SlessKind, namespace: string, name: string): Promise<T | undefined> {
    try {
      return await this.get<T>(kind, namespace, name, `${kind} ${namespace}/${name}`);
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'not_found') return undefined;
      throw err;
    }
  }

  private async list<T extends AnyResource>(kind: SlessKind, namespace: string, labelSelector?: string): Promise<T[]> {
    try {
      const list = (await this.custom.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: KINDS[kind].plural,
        ...(labelSelector ? { labelSelector } : {}),
      })) as { items: T[] };
      return list.items.sort((a, b) => compareNames(a.metadata?.name, b.metadata?.name));
    } catch (err) {
      throw toPlatformError(err, `${KINDS[kind].plural} in ${namespace}`);
    }
  }

  private async create<T extends AnyResource>(kind: SlessKind, namespace: string, body: T, what: string): Promise<T> {
    try {
      return (await this.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, body })) as T;
    } catch (err) {
      if (apiStatusCode(err) === 404) throw namespaceMissing(namespace, err);
      throw toPlatformError(err, what);
    }
  }

  private async patch<T extends AnyResource>(kind: SlessKind, namespace: string, name: string, body: object, what: string): Promise<T> {
    try {
      return (await this.custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body },
        mergePatch,
      )) as T;
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  private async remove(kind: SlessKind, namespace: string, name: string, what: string): Promise<void> {
    try {
      await this.custom.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: KINDS[kind].plural,
        name,
        propagationPolicy: 'Background',
      });
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  private assertApiManaged(obj: AnyResource, what: string, todo: string): void {
    const repository = repositoryOf(obj);
    if (repository) {
      throw new PlatformError(
        'managed_by_git',
        `${what} is managed by the FunctionRepository ${obj.metadata?.namespace ?? ''}/${repository}; ${todo} in its git repository instead`,
        { repository },
      );
    }
  }

  // ---- endpoints -------------------------------------------------------------------------------

  resolveEndpoint(namespace: string, name: string): Promise<Endpoint> {
    return this.endpoints.get(namespace, name);
  }

  /**
   * A function answers when its Deployment has an available replica, whatever its phase: during a
   * rebuild, or after a failed one, the previous image keeps serving. The Function reconciler scales the
   * Deployment to 0 when every http Trigger is disabled, so 0 desired replicas means "disabled".
   */
  private async loadEndpoint(namespace: string, name: string): Promise<Endpoint> {
    const fn = await this.find<FunctionResource>('Function', namespace, name);
    if (!fn || fn.metadata?.deletionTimestamp) return { kind: 'not-found' };
    const timeoutSec = fn.spec?.timeoutSec ?? CRD_DEFAULTS.timeoutSec;
    let deployment;
    try {
      deployment = await this.apps.readNamespacedDeployment({ name, namespace });
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw toPlatformError(err, `Deployment ${namespace}/${name}`);
    }
    const phase = fn.status?.phase ?? 'Pending';
    const state = `${phase}${fn.status?.message ? `: ${fn.status.message}` : ''}`;
    if (!deployment) return { kind: 'not-ready', reason: phase === 'Ready' ? 'its Deployment is not there yet' : state };
    if (deployment.spec?.replicas === 0) return { kind: 'disabled' };
    if ((deployment.status?.availableReplicas ?? 0) < 1) {
      return { kind: 'not-ready', reason: phase === 'Ready' ? `0 of ${deployment.spec?.replicas ?? 1} replicas available yet` : state };
    }
    return { kind: 'ready', baseUrl: serviceBaseUrl(namespace, name, this.opts.settings.clusterDomain), timeoutSec };
  }

  // ---- namespaces and health -------------------------------------------------------------------

  async ensureNamespace(namespace: string): Promise<void> {
    try {
      await this.core.readNamespace({ name: namespace });
      return;
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw toPlatformError(err, `namespace ${namespace}`);
    }
    try {
      await this.core.createNamespace({ body: { metadata: { name: namespace, labels: { ...API_LABELS } } } });
    } catch (err) {
      if (apiStatusCode(err) !== 409) throw toPlatformError(err, `namespace ${namespace}`);
    }
  }

  async ready(): Promise<{ ok: boolean; detail?: string }> {
    const timeoutMs = this.opts.readyTimeoutMs ?? 3000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.version.getCode(),
        new Promise((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      return { ok: true };
    } catch (err) {
      return { ok: false, detail: `Kubernetes API server: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- functions -------------------------------------------------------------------------------

  private async httpTriggers(namespace: string, fnName?: string): Promise<TriggerResource[]> {
    const triggers = await this.list<TriggerResource>('Trigger', namespace, fnName ? `${LABELS.function}=${fnName}` : undefined);
    return triggers.filter((t) => t.spec?.type === 'http');
  }

  private record(fn: FunctionResource, triggers: readonly TriggerResource[]): FunctionRecord {
    const name = fn.metadata?.name ?? '';
    return functionRecord(fn, { httpEnabled: httpEnabledFrom(triggers, name), publicBaseUrl: this.opts.settings.publicBaseUrl });
  }

  async listFunctions(namespace: string): Promise<FunctionRecord[]> {
    const [functions, triggers] = await Promise.all([this.list<FunctionResource>('Function', namespace), this.httpTriggers(namespace)]);
    return functions.map((fn) => this.record(fn, triggers));
  }

  async getFunction(namespace: string, name: string): Promise<FunctionRecord> {
    const [fn, triggers] = await Promise.all([this.getFn(namespace, name), this.httpTriggers(namespace, name)]);
    return this.record(fn, triggers);
  }

  private getFn(namespace: string, name: string): Promise<FunctionResource> {
    return this.get<FunctionResource>('Function', namespace, name, `function ${namespace}/${name}`);
  }

  async createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    const what = `function ${namespace}/${input.name}`;
    const body: FunctionResource = {
      apiVersion: API_VERSION,
      kind: 'Function',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS } },
      spec: functionSpec(input),
    };
    const fn = await this.create('Function', namespace, body, what);
    const trigger = await this.upsertHttpTrigger(fn, input.httpEnabled ?? FUNCTION_INPUT_DEFAULTS.httpEnabled);
    this.endpoints.invalidate(namespace, input.name);
    return this.record(fn, [trigger]);
  }

  /** The http Trigger of an API function carries http_enabled (the Function kind has no such field). */
  private async upsertHttpTrigger(fn: FunctionResource, enabled: boolean): Promise<TriggerResource> {
    const namespace = fn.metadata?.namespace ?? '';
    const fnName = fn.metadata?.name ?? '';
    const name = httpTriggerName(fnName);
    const what = `trigger ${namespace}/${name}`;
    const existing = await this.find<TriggerResource>('Trigger', namespace, name);
    if (existing) {
      const isEnabled = existing.spec?.enabled !== false;
      if (isEnabled === enabled) return existing;
      return this.patch<TriggerResource>('Trigger', namespace, name, { spec: { enabled } }, what);
    }
    const body: TriggerResource = {
      apiVersion: API_VERSION,
      kind: 'Trigger',
      metadata: { name, namespace, labels: { ...API_LABELS, [LABELS.function]: fnName }, ownerReferences: [ownedBy(fn)] },
      spec: { type: 'http', functionRef: fnName, enabled },
    };
    return this.create('Trigger', namespace, body, what);
  }

  async updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    const what = `function ${namespace}/${name}`;
    if (input.name !== name) throw new PlatformError('invalid', `the body names ${input.name} but the path names ${name}; a function cannot be renamed`);
    // PUT semantics: the new spec replaces the old one (a merge patch would keep removed env keys), with
    // the resourceVersion read, retried when someone else wrote in between.
    for (let attempt = 1; ; attempt++) {
      const fn = await this.getFn(namespace, name);
      this.assertApiManaged(fn, what, 'change its function.yaml');
      const old = fn.spec;
      const spec: FunctionResource['spec'] = { ...functionSpec(input) };
      if (old?.codeHash && old.s3Key) {
        const rebuilt =
          old.runtime !== spec.runtime || (old.entrypoint ?? CRD_DEFAULTS.entrypoint) !== spec.entrypoint
            ? await this.storeContext(namespace, name, spec, await this.readCode(fn))
            : { codeHash: old.codeHash, s3Bucket: old.s3Bucket ?? this.opts.settings.s3.bucket, s3Key: old.s3Key };
        Object.assign(spec, rebuilt);
      }
      try {
        const replaced = (await this.custom.replaceNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace,
          plural: KINDS.Function.plural,
          name,
          body: { ...fn, spec },
        })) as FunctionResource;
        const trigger = await this.upsertHttpTrigger(replaced, input.httpEnabled ?? FUNCTION_INPUT_DEFAULTS.httpEnabled);
        this.endpoints.invalidate(namespace, name);
        return this.record(replaced, [trigger]);
      } catch (err) {
        if (apiStatusCode(err) === 409 && attempt < 3) continue;
        throw toPlatformError(err, what);
      }
    }
  }

  async deleteFunction(namespace: string, name: string): Promise<void> {
    const what = `function ${namespace}/${name}`;
    const fn = await this.getFn(namespace, name);
    this.assertApiManaged(fn, what, 'remove its folder');
    // Its Triggers, FunctionJobs, Deployment and Service go with it (owner references).
    await this.remove('Function', namespace, name, what);
    this.endpoints.invalidate(namespace, name);
  }

  async uploadCode(namespace: string, name: string, files: readonly CodeFile[]): Promise<FunctionRecord> {
    const what = `function ${namespace}/${name}`;
    const fn = await this.getFn(namespace, name);
    this.assertApiManaged(fn, what, 'push the code');
    if (!fn.spec) throw new PlatformError('invalid', `${what} has no spec; recreate it`);
    const code = await this.storeContext(namespace, name, fn.spec, files);
    const patched = await this.patch<FunctionResource>('Function', namespace, name, { spec: code }, what);
    return this.record(patched, await this.httpTriggers(namespace, name));
  }

  /** Puts the build context for `files` in the store (unless its key is there) and answers the spec fields that point to it. */
  private async storeContext(
    namespace: string,
    name: string,
    spec: NonNullable<FunctionResource['spec']>,
    files: readonly CodeFile[],
  ): Promise<{ codeHash: string; s3Bucket: string; s3Key: string }> {
    const runtime = spec.runtime as Runtime;
    const entrypoint = spec.entrypoint ?? CRD_DEFAULTS.entrypoint;
    const codeHash = hashFiles(files);
    const baseImage = baseImageOf(runtime, this.opts.settings.runtimeImagePrefix);
    const paths = files.map((f) => f.path);
    try {
      contextDockerfile({ runtime, entrypoint, baseImage, paths });
    } catch (err) {
      throw new PlatformError('invalid', `function ${namespace}/${name} cannot be built: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    try {
      const { key } = await ensureContext(this.opts.store, {
        runtime,
        entrypoint,
        buildKey: buildKey({ codeHash, runtime, baseImage }),
        baseImage,
        paths,
        files: () => files,
      });
      return { codeHash, s3Bucket: this.opts.settings.s3.bucket, s3Key: key };
    } catch (err) {
      throw new PlatformError(
        'unavailable',
        `storing the code of function ${namespace}/${name} in ${this.opts.store.location} failed: ${err instanceof Error ? err.message : String(err)}; retry the upload`,
        { cause: err },
      );
    }
  }

  private async readCode(fn: FunctionResource): Promise<CodeFile[]> {
    const what = `function ${fn.metadata?.namespace ?? ''}/${fn.metadata?.name ?? ''}`;
    const key = fn.spec?.s3Key;
    if (!key) throw new PlatformError('not_found', `${what} has no code yet: upload a zip first`);
    try {
      return await readContextCode(await this.opts.store.get(key));
    } catch (err) {
      if (isArtifactStoreError(err, 'NotFound')) {
        throw new PlatformError('not_found', `the code of ${what} (${key}) is no longer in ${this.opts.store.location}; upload it again`, { cause: err });
      }
      throw new PlatformError('unavailable', `reading the code of ${what} from ${this.opts.store.location} failed: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
  }

  async getSource(namespace: string, name: string): Promise<CodeFile[]> {
    return this.readCode(await this.getFn(namespace, name));
  }

  // ---- triggers --------------------------------------------------------------------------------

  async listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return (await this.list<TriggerResource>('Trigger', namespace)).map(triggerRecord);
  }

  async getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return triggerRecord(await this.get<TriggerResource>('Trigger', namespace, name, `trigger ${namespace}/${name}`));
  }

  async createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    const what = `trigger ${namespace}/${input.name}`;
    if (input.type === 'cron') {
      if (!input.schedule) throw new PlatformError('invalid', `cron ${what} needs a schedule, e.g. "0 3 * * *"`);
      const problem = checkCron(input.schedule) ?? (input.timezone ? checkTimezone(input.timezone) : undefined);
      if (problem) throw new PlatformError('invalid', `${what}: ${problem}`);
    }
    const fn = await this.functionFor(namespace, input.functionRef, what);
    const body: TriggerResource = {
      apiVersion: API_VERSION,
      kind: 'Trigger',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS, [LABELS.function]: input.functionRef }, ownerReferences: [ownedBy(fn)] },
      spec: {
        type: input.type,
        functionRef: input.functionRef,
        ...(input.schedule !== undefined ? { schedule: input.schedule } : {}),
        ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
        ...(input.eventJson !== undefined ? { eventJSON: input.eventJson } : {}),
        enabled: input.enabled ?? true,
      },
    };
    const created = await this.create('Trigger', namespace, body, what);
    this.endpoints.invalidate(namespace, input.functionRef);
    return triggerRecord(created);
  }

  /** The Function a new Trigger or FunctionJob refers to; a missing one makes the input invalid. */
  private async functionFor(namespace: string, fnName: string, what: string): Promise<FunctionResource> {
    const fn = await this.find<FunctionResource>('Function', namespace, fnName);
    if (!fn) throw new PlatformError('invalid', `${what} names function ${fnName}, which does not exist in ${namespace}`);
    return fn;
  }

  async setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    const what = `trigger ${namespace}/${name}`;
    const t = await this.get<TriggerResource>('Trigger', namespace, name, what);
    // A sync would put a repository's trigger back as function.yaml says.
    this.assertApiManaged(t, what, 'change http.enabled or the schedule');
    const patched = await this.patch<TriggerResource>('Trigger', namespace, name, { spec: { enabled } }, what);
    if (t.spec?.functionRef) this.endpoints.invalidate(namespace, t.spec.functionRef);
    return triggerRecord(patched);
  }

  async deleteTrigger(namespace: string, name: string): Promise<void> {
    const what = `trigger ${namespace}/${name}`;
    const t = await this.get<TriggerResource>('Trigger', namespace, name, what);
    this.assertApiManaged(t, what, 'remove the schedule');
    await this.remove('Trigger', namespace, name, what);
    if (t.spec?.functionRef) this.endpoints.invalidate(namespace, t.spec.functionRef);
  }

  // ---- jobs ------------------------------------------------------------------------------------

  async createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    const what = `job ${namespace}/${input.name}`;
    const fn = await this.functionFor(namespace, input.functionRef, what);
    const body: FunctionJobResource = {
      apiVersion: API_VERSION,
      kind: 'FunctionJob',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS, [LABELS.function]: input.functionRef }, ownerReferences: [ownedBy(fn)] },
      spec: {
        functionRef: input.functionRef,
        runID: input.runId ?? 1,
        ...(input.eventJson !== undefined ? { eventJSON: input.eventJson } : {}),
      },
    };
    return jobRecord(await this.create('FunctionJob', namespace, body, what));
  }

  async getJob(namespace: string, name: string): Promise<JobRecord> {
    return jobRecord(await this.get<FunctionJobResource>('FunctionJob', namespace, name, `job ${namespace}/${name}`));
  }

  async deleteJob(namespace: string, name: string): Promise<void> {
    const what = `job ${namespace}/${name}`;
    const j = await this.get<FunctionJobResource>('FunctionJob', namespace, name, what);
    this.assertApiManaged(j, what, 'remove the job');
    await this.remove('FunctionJob', namespace, name, what);
  }

  // ---- repositories ----------------------------------------------------------------------------

  async listRepositories(namespace: string): Promise<RepositoryRecord[]> {
    return (await this.list<RepositoryResource>('FunctionRepository', namespace)).map(repositoryRecord);
  }

  async getRepository(namespace: string, name: string): Promise<RepositoryRecord> {
    return repositoryRecord(await this.get<RepositoryResource>('FunctionRepository', namespace, name, `repository ${namespace}/${name}`));
  }

  async createRepository(namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    const what = `repository ${namespace}/${input.name}`;
    if (await this.find('FunctionRepository', namespace, input.name)) throw new PlatformError('already_exists', `${what} already exists`);
    const secretData = secretDataOf(input);
    const secretName = credentialsSecretName(input.name);
    // The Secret first, so the first sync already finds the credentials; owned by the repository
    // afterwards, so it goes when the repository goes.
    if (secretData) await this.writeSecret(namespace, secretName, secretData);
    const body: RepositoryResource = {
      apiVersion: API_VERSION,
      kind: 'FunctionRepository',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS } },
      spec: {
        url: input.url,
        branch: input.branch ?? CRD_DEFAULTS.branch,
        ...(input.path ? { path: input.path } : {}),
        interval: input.interval ?? CRD_DEFAULTS.interval,
        suspend: input.suspend ?? false,
        prune: input.prune ?? true,
        ...(secretData ? { secretRef: { name: secretName } } : {}),
      },
    };
    const repo = await this.create('FunctionRepository', namespace, body, what);
    if (secretData) {
      try {
        await this.core.patchNamespacedSecret({ name: secretName, namespace, body: { metadata: { ownerReferences: [ownedBy(repo)] } } }, mergePatch);
      } catch (err) {
        throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
      }
    }
    return repositoryRecord(repo);
  }

  private async writeSecret(namespace: string, name: string, data: Record<string, string>): Promise<void> {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels: { ...API_LABELS } },
      type: 'Opaque',
      stringData: data,
    };
    try {
      await this.core.createNamespacedSecret({ namespace, body });
    } catch (err) {
      if (apiStatusCode(err) === 404) throw namespaceMissing(namespace, err);
      if (apiStatusCode(err) !== 409) throw toPlatformError(err, `Secret ${namespace}/${name}`);
      // Left over from an earlier repository of that name (checked absent above): replace it.
      try {
        await this.core.replaceNamespacedSecret({ name, namespace, body });
      } catch (replaceErr) {
        throw toPlatformError(replaceErr, `Secret ${namespace}/${name}`);
      }
    }
  }

  async deleteRepository(namespace: string, name: string): Promise<void> {
    const what = `repository ${namespace}/${name}`;
    const repo = await this.get<RepositoryResource>('FunctionRepository', namespace, name, what);
    await this.remove('FunctionRepository', namespace, name, what);
    // The garbage collector would remove it too; doing it now means the credentials do not outlive the repository.
    const secretName = repo.spec?.secretRef?.name;
    if (secretName === credentialsSecretName(name)) {
      try {
        await this.core.deleteNamespacedSecret({ name: secretName, namespace });
      } catch (err) {
        if (apiStatusCode(err) !== 404) throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
      }
    }
  }

  async requestSync(namespace: string, name: string, _reason: string): Promise<void> {
    // The annotation's new value is the request; a request already pending is simply superseded.
    const at = this.now().toISOString();
    await this.patch('FunctionRepository', namespace, name, { metadata: { annotations: { [ANNOTATIONS.requestedAt]: at } } }, `repository ${namespace}/${name}`);
  }

  async webhookTarget(namespace: string, name: string): Promise<WebhookTarget | undefined> {
    const repo = await this.find<RepositoryResource>('FunctionRepository', namespace, name);
    if (!repo) return undefined;
    const branch = repo.spec?.branch ?? CRD_DEFAULTS.branch;
    const secretName = repo.spec?.secretRef?.name;
    if (!secretName) return { branch };
    try {
      const secret = await this.core.readNamespacedSecret({ name: secretName, namespace });
      const encoded = secret.data?.webhookSecret;
      const secretValue = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
      return secretValue ? { branch, secret: secretValue } : { branch };
    } catch (err) {
      if (apiStatusCode(err) === 404) return { branch };
      throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
    }
  }
}

function functionSpec(input: FunctionInput): NonNullable<FunctionResource['spec']> {
  const s = functionSettingsOf(input);
  return {
    runtime: s.runtime,
    entrypoint: s.entrypoint,
    memoryMB: s.memoryMb,
    timeoutSec: s.timeoutSec,
    env: { ...s.env },
    envFromSecrets: [...s.envFromSecrets],
  };
}

/** An owner reference that lets the garbage collector remove `obj` with its owner (not its controller). */
function ownedBy(owner: AnyResource): { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion: boolean } {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name || !uid) throw new PlatformError('unavailable', `the API server returned ${owner.kind ?? 'an object'} without name or uid`);
  return { apiVersion: owner.apiVersion ?? API_VERSION, kind: owner.kind ?? '', name, uid, blockOwnerDeletion: false };
}

function secretDataOf(input: RepositoryInput): Record<string, string> | undefined {
  const data: Record<string, string> = {};
  const c = input.credentials;
  if (c?.token) data.token = c.token;
  if (c?.username !== undefined) data.username = c.username;
  if (c?.password !== undefined) data.password = c.password;
  if (input.webhookSecret) data.webhookSecret = input.webhookSecret;
  return Object.keys(data).length > 0 ? data : undefined;
}

/** Creating in a namespace that does not exist answers 404 too. */
function namespaceMissing(namespace: string, cause: unknown): PlatformError {
  return new PlatformError('not_found', `namespace ${namespace} does not exist; create it first (POST /v1/namespaces/${namespace}/ensure)`, { cause });
}

function compareNames(a: string | undefined, b: string | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

