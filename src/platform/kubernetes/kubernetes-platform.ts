// `Platform` over the sless CRDs: /v1 reads and writes Function, Trigger, FunctionJob and
// FunctionRepository objects, and the leader's reconcilers do the rest. Every replica can serve it: it
// keeps no state of its own beyond a short-lived endpoint cache, and asks for syncs by annotating the
// repository (the leader's watch sees it at once).
//
// Objects a FunctionRepository generates carry the `sless.kube5s.ru/repository` label; /v1 refuses to
// change them (managed_by_git) because the next sync would put them back. http_enabled is the one rule
// over a function's http Triggers (../rules.ts); /v1 functions get no Trigger of their own.
//
// This file composes the parts, one per concern: sless-objects.ts (object access), kube-functions.ts +
// function-code.ts, kube-triggers-jobs.ts, kube-repositories.ts, load-endpoint.ts.
import os from 'node:os';
import path from 'node:path';
import { AppsV1Api, CoreV1Api, VersionApi, type KubeConfig } from '@kubernetes/client-node';
import type { ArtifactStore } from '../../build/artifact-store.ts';
import type {
  CodeFile,
  UnpackedCode,
  Endpoint,
  FunctionInput,
  FunctionRecord,
  RevisionRecord,
  JobInput,
  JobRecord,
  LogLine,
  LogQuery,
  Platform,
  PlatformPreviews,
  RepositoryInput,
  RepositoryRecord,
  SyncHint,
  TriggerInput,
  TriggerRecord,
  WebhookTarget,
} from '../types.ts';
import { PlatformError } from '../types.ts';
import { replicasOfDeployment } from './records.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { EndpointCache } from './endpoint-cache.ts';
import { FunctionCode } from './function-code.ts';
import { KubeFunctions } from './kube-functions.ts';
import { KubeLogs } from './kube-logs.ts';
import { KubeRepositories } from './kube-repositories.ts';
import { KubePreviews } from './previews/kube-previews.ts';
import { KubeTriggersAndJobs } from './kube-triggers-jobs.ts';
import { endpointOf, loadEndpoint } from './load-endpoint.ts';
import { ServingCache } from './serving-cache.ts';
import { KubePreviewServing } from './kube-preview-serving.ts';
import { PodRouting, type PodRoutingOptions } from './pod-routing/pod-routing.ts';
import { TenantAccess, type TenantSettings } from './tenant-access.ts';
import { StalledError } from './stalled-error.ts';
import type { ResolvedControllerSettings } from './settings.ts';
import { API_LABELS, SlessObjects } from './sless-objects.ts';
import { JsonApi } from './api-client/json-api.ts';
import { KubeScaling } from './scaling/kube-scaling.ts';
import { ReplicaCounts } from './scaling/replica-counts.ts';
import { ScaleSubresource } from './scaling/scale-subresource.ts';

export { credentialsSecretName } from './kube-repositories.ts';

export interface KubernetesPlatformOptions {
  readonly kubeConfig: KubeConfig;
  /** Where build contexts live (the same store the controller's builds read). */
  readonly store: ArtifactStore;
  /** Complete (resolveControllerSettings): the platform reads them with no defaults of its own. */
  readonly settings: Pick<ResolvedControllerSettings, 'clusterDomain' | 'runtimeImagePrefix' | 's3' | 'publicBaseUrl' | 'limits'> & TenantSettings;
  /** Endpoint cache TTLs (ms); tests shorten them. */
  readonly endpointTtl?: { readonly readyMs?: number; readonly otherMs?: number };
  /** How long webhook secrets are kept, and how soon a signature mismatch may read one again (ms); tests shorten them. */
  readonly webhookSecretTtl?: { readonly ttlMs?: number; readonly refreshMs?: number };
  /** How long ready() waits for the API server. Default 3000 ms. */
  readonly readyTimeoutMs?: number;
  readonly now?: () => Date;
  /** Logs informer restarts of the serving watches, wakes, and pods entering and leaving /fn's rotation. */
  readonly logger?: { warn(message: string, fields?: Record<string, unknown>): void; info?(message: string, fields?: Record<string, unknown>): void };
  /** SLESS_COLD_START_TIMEOUT (ms): how long a wake waits for a replica. Default 60 s. */
  readonly coldStartTimeoutMs?: number;
  /**
   * /fn calls pods directly (SLESS_ROUTE_TO_PODS, docs/pod-routing.md): an EndpointSlice watch, probes of
   * new pods. Absent: calls go to the function's Service. Tests may pass PodRouting options (a probe).
   */
  readonly routeToPods?: boolean | Pick<PodRoutingOptions, 'probe' | 'policy' | 'timers'>;
}

export class KubernetesPlatform implements Platform {
  private readonly core: CoreV1Api;
  private readonly version: VersionApi;
  private readonly endpoints: EndpointCache;
  private readonly functions: KubeFunctions;
  private readonly triggersAndJobs: KubeTriggersAndJobs;
  private readonly repositories: KubeRepositories;
  private readonly serving: ServingCache;
  /** Set when /fn reaches pods directly. */
  readonly podRouting: PodRouting | undefined;
  private starting: Promise<void> | undefined;
  private readonly tenants: TenantAccess;
  /** This replica's /fn calls in flight per function: the leader's autoscaler gathers them (scaling/). */
  readonly scalingCounts = new ReplicaCounts();
  /** Wakes a function at zero; counts calls (issue 29, docs/scaling.md). */
  readonly scaling: KubeScaling;
  /** The scale subresource writes of wakes (tests count them). */
  readonly scaleWrites: ScaleSubresource;
  private readonly logs: KubeLogs;
  /** /fn at preview URLs and the open previews, from the watches (kube-preview-serving.ts). */
  readonly previewServing: KubePreviewServing;
  /**
   * Pull-request previews: deliveries recorded on the repository for the leader (previews/kube-previews.ts),
   * the open previews listed from the watches (kube-preview-serving.ts).
   */
  readonly previews: PlatformPreviews;

  constructor(private readonly opts: KubernetesPlatformOptions) {
    const objects = new SlessObjects(opts.kubeConfig);
    const apps = opts.kubeConfig.makeApiClient(AppsV1Api);
    this.core = opts.kubeConfig.makeApiClient(CoreV1Api);
    this.version = opts.kubeConfig.makeApiClient(VersionApi);
    this.endpoints = new EndpointCache({
      load: (ns, name) => loadEndpoint({ objects, apps, clusterDomain: opts.settings.clusterDomain }, ns, name),
      ...(opts.endpointTtl?.readyMs !== undefined ? { readyTtlMs: opts.endpointTtl.readyMs } : {}),
      ...(opts.endpointTtl?.otherMs !== undefined ? { otherTtlMs: opts.endpointTtl.otherMs } : {}),
    });
    const invalidate = (ns: string, name: string): void => this.endpoints.invalidate(ns, name);
    this.tenants = new TenantAccess(opts.kubeConfig, opts.settings);
    this.logs = new KubeLogs(opts.kubeConfig);
    const code = new FunctionCode(opts.store, { runtimeImagePrefix: opts.settings.runtimeImagePrefix, bucket: opts.settings.s3.bucket });
    this.functions = new KubeFunctions({
      objects,
      code,
      publicBaseUrl: opts.settings.publicBaseUrl,
      invalidate,
      // From the watches /fn reads already (no API request); unknown until they have listed.
      replicasOf: (ns, name) => (this.serving.synced ? replicasOfDeployment(this.serving.deployments.get(name, ns)) : undefined),
    });
    this.triggersAndJobs = new KubeTriggersAndJobs({ objects, invalidate, limits: opts.settings.limits });
    this.serving = new ServingCache({
      kubeConfig: opts.kubeConfig,
      onError: (name, err, delay) =>
        opts.logger?.warn(`InformerRestart: ${name} list/watch failed (${err instanceof Error ? err.message : String(err)}); restarting in ${delay} ms`, {
          reason: 'InformerRestart',
        }),
    });
    this.previewServing = new KubePreviewServing(this.serving, objects, opts.settings.publicBaseUrl);
    this.scaleWrites = new ScaleSubresource(new JsonApi(opts.kubeConfig));
    this.scaling = new KubeScaling({
      // A call at a preview URL that production answers counts for, and wakes, the production function.
      servedBy: (ns, name) => this.previewServing.servedBy(ns, name),
      counts: this.scalingCounts,
      scale: this.scaleWrites,
      deployment: (ns, name) => {
        if (!this.serving.synced) return 'unknown';
        const d = this.serving.deployments.get(name, ns);
        return d ? { replicas: d.spec?.replicas ?? 1, resourceVersion: d.metadata?.resourceVersion } : undefined;
      },
      resolveEndpoint: (ns, name) => this.resolveEndpoint(ns, name),
      // Set below; a wake forwards the held calls the moment /fn's probe sees the new pod answer.
      ...(opts.routeToPods ? { whenServing: (ns: string, name: string, signal: AbortSignal) => this.podRouting!.whenServing(ns, name, signal) } : {}),
      timeoutMs: opts.coldStartTimeoutMs ?? 60_000,
      ...(opts.logger?.info ? { logger: { info: opts.logger.info.bind(opts.logger) } } : {}),
    });
    const logger = opts.logger;
    this.podRouting = opts.routeToPods
      ? new PodRouting({
          kubeConfig: opts.kubeConfig,
          ...(typeof opts.routeToPods === 'object' ? opts.routeToPods : {}),
          onError: (name, err, delay) =>
            logger?.warn(`InformerRestart: ${name} list/watch failed (${err instanceof Error ? err.message : String(err)}); restarting in ${delay} ms`, {
              reason: 'InformerRestart',
            }),
          ...(logger?.info ? { log: { info: (message: string, fields?: Record<string, unknown>) => logger.info?.(message, fields) } } : {}),
        })
      : undefined;
    const deliveries = new KubePreviews({
      objects,
      now: opts.now ?? (() => new Date()),
      ...(opts.logger ? { logger: opts.logger } : {}),
    });
    this.previews = {
      pullRequest: (namespace, name, event, reason) => deliveries.pullRequest(namespace, name, event, reason),
      list: (namespace) => this.previewServing.list(namespace),
    };
    this.repositories = new KubeRepositories(objects, opts.kubeConfig, opts.now ?? (() => new Date()), this.serving, opts.webhookSecretTtl, (ns) => this.admit(ns));
  }

  /**
   * Starts the watches /fn and /hooks read from; resolves once they have listed (lookups read the API
   * server until then). Call close() to stop them.
   */
  start(): Promise<void> {
    // The pod watch does not hold /fn back: until it has listed, calls go to the Service.
    this.starting ??= Promise.all([this.serving.start(), this.podRouting?.start()]).then(() => undefined);
    return this.starting;
  }

  async close(): Promise<void> {
    if (this.starting) await Promise.all([this.serving.stop(), this.podRouting?.stop()]);
  }

  /** Loads that went to the API server for /fn (tests and the benchmark). */
  get endpointLoads(): number {
    return this.endpoints.loads;
  }

  resolveEndpoint(requested: string, name: string): Promise<Endpoint> {
    if (!this.serving.synced) return this.endpoints.get(requested, name);
    // A preview namespace's call: its own function, production's, or an answer (kube-preview-serving.ts).
    const preview = this.previewServing.target(requested, name);
    if (preview && 'endpoint' in preview) return Promise.resolve(preview.endpoint);
    const namespace = preview?.namespace ?? requested;
    const { functions, deployments } = this.serving;
    const pods = this.podRouting?.pods(namespace, name);
    return Promise.resolve(endpointOf(functions.get(name, namespace), deployments.get(name, namespace), namespace, name, this.opts.settings.clusterDomain, pods));
  }

  // ---- namespaces and health -------------------------------------------------------------------

  /** Creates the namespace when it does not exist, then the controller's RoleBinding there (tenant-access.ts). */
  async ensureNamespace(namespace: string): Promise<void> {
    await this.refused(async () => this.tenants.refuseReserved(namespace), `namespace ${namespace}`);
    let exists = true;
    try {
      await this.core.readNamespace({ name: namespace });
    } catch (err) {
      if (apiStatusCode(err) !== 404) throw toPlatformError(err, `namespace ${namespace}`);
      exists = false;
    }
    if (!exists) {
      try {
        await this.core.createNamespace({ body: { metadata: { name: namespace, labels: { ...API_LABELS } } } });
      } catch (err) {
        if (apiStatusCode(err) !== 409) throw toPlatformError(err, `namespace ${namespace}`);
      }
    }
    await this.admit(namespace);
  }

  /** The controller's rights in a tenant namespace before /v1 writes a Secret there; refused for platform namespaces. */
  private admit(namespace: string, envFromSecrets: readonly string[] = []): Promise<void> {
    return this.refused(() => this.tenants.admitWorkload(namespace, envFromSecrets), `namespace ${namespace}`);
  }

  /** A refusal (StalledError) → PlatformError invalid (400); an API failure → its PlatformError. */
  private async refused(step: () => Promise<void>, what: string): Promise<void> {
    try {
      await step();
    } catch (err) {
      if (err instanceof StalledError) throw new PlatformError('invalid', err.message, { cause: err });
      throw toPlatformError(err, what);
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

  // ---- functions (kube-functions.ts) -----------------------------------------------------------

  listFunctions(namespace: string): Promise<FunctionRecord[]> {
    return this.functions.list(namespace);
  }
  getFunction(namespace: string, name: string): Promise<FunctionRecord> {
    return this.functions.get(namespace, name);
  }
  async createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    await this.admitEnv(namespace, input.envFromSecrets);
    // The same cap a repository's sync honours (NamespaceQuotaExceeded there), git-made and /v1-made together.
    const cap = this.opts.settings.limits.functionsPerNamespace;
    const held = (await this.functions.list(namespace)).length;
    if (held >= cap) {
      throw new PlatformError('quota_exceeded', `namespace ${namespace} holds ${held} functions, the most allowed (SLESS_MAX_FUNCTIONS_PER_NAMESPACE=${cap}); delete one first`);
    }
    return this.functions.create(namespace, input);
  }
  async updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    await this.admitEnv(namespace, input.envFromSecrets);
    return this.functions.update(namespace, name, input);
  }

  /** env_from_secrets only names the namespace's own application Secrets (400 otherwise; tenant-rules.ts). */
  private async admitEnv(namespace: string, names: readonly string[] | undefined): Promise<void> {
    if (names?.length) await this.admit(namespace, names);
  }
  deleteFunction(namespace: string, name: string): Promise<void> {
    return this.functions.delete(namespace, name);
  }
  listRevisions(namespace: string, name: string): Promise<RevisionRecord[]> {
    return this.functions.listRevisions(namespace, name);
  }
  rollback(namespace: string, name: string, revision?: number): Promise<FunctionRecord> {
    return this.functions.rollback(namespace, name, revision);
  }
  undoRollback(namespace: string, name: string): Promise<FunctionRecord> {
    return this.functions.undoRollback(namespace, name);
  }
  uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord> {
    return this.functions.uploadCode(namespace, name, code);
  }
  /** Uploads are unpacked here, packed into a context tarball for the store, then removed. */
  readonly uploadsDir = path.join(os.tmpdir(), 'sless-uploads');
  getSource(namespace: string, name: string): Promise<CodeFile[]> {
    return this.functions.getSource(namespace, name);
  }
  /** Every pod of the function (kube-logs.ts); never a platform namespace's pods. */
  async readLogs(namespace: string, name: string, query: LogQuery): Promise<AsyncIterable<LogLine>> {
    await this.refused(async () => this.tenants.refuseReserved(namespace), `namespace ${namespace}`);
    await this.functions.get(namespace, name);
    try {
      return await this.logs.read(namespace, name, query);
    } catch (err) {
      throw toPlatformError(err, `logs of function ${namespace}/${name}`);
    }
  }

  // ---- triggers and jobs (kube-triggers-jobs.ts) -----------------------------------------------

  listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return this.triggersAndJobs.listTriggers(namespace);
  }
  getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return this.triggersAndJobs.getTrigger(namespace, name);
  }
  createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    return this.triggersAndJobs.createTrigger(namespace, input);
  }
  setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    return this.triggersAndJobs.setTriggerEnabled(namespace, name, enabled);
  }
  deleteTrigger(namespace: string, name: string): Promise<void> {
    return this.triggersAndJobs.deleteTrigger(namespace, name);
  }
  listJobs(namespace: string): Promise<JobRecord[]> {
    return this.triggersAndJobs.listJobs(namespace);
  }
  createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    return this.triggersAndJobs.createJob(namespace, input);
  }
  getJob(namespace: string, name: string): Promise<JobRecord> {
    return this.triggersAndJobs.getJob(namespace, name);
  }
  deleteJob(namespace: string, name: string): Promise<void> {
    return this.triggersAndJobs.deleteJob(namespace, name);
  }

  // ---- repositories (kube-repositories.ts) -----------------------------------------------------

  listRepositories(namespace: string): Promise<RepositoryRecord[]> {
    return this.repositories.list(namespace);
  }
  getRepository(namespace: string, name: string): Promise<RepositoryRecord> {
    return this.repositories.get(namespace, name);
  }
  createRepository(namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    return this.repositories.create(namespace, input);
  }
  deleteRepository(namespace: string, name: string): Promise<void> {
    return this.repositories.delete(namespace, name);
  }
  requestSync(namespace: string, name: string, _reason: string, hint?: SyncHint): Promise<void> {
    return this.repositories.requestSync(namespace, name, hint);
  }
  webhookTarget(namespace: string, name: string, options?: { refresh?: boolean }): Promise<WebhookTarget | undefined> {
    return this.repositories.webhookTarget(namespace, name, options);
  }
}
