// `sless controller`: every replica serves HTTP (/fn, /v1, /hooks, health, metrics) over the
// KubernetesPlatform; the replica holding the leader Lease also runs the reconcilers. SIGTERM/SIGINT:
// stop leading (the Lease is released so another replica takes over at once), drain HTTP, exit 0.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { authOptionsOf } from '../auth/auth-options.ts';
import type { ArtifactStore } from '../build/artifact-store.ts';
import { ConfigError, loadControllerConfig, treeLimitsOf, type ControllerConfig } from '../config/config.ts';
import { buildApp } from '../app/build-app.ts';
import { startMetricsServer, type MetricsServer } from '../http/metrics-server.ts';
import { createMetrics } from '../metrics/metrics.ts';
import { Controller, s3StoreOf, type ControllerOptions } from '../platform/kubernetes/controller.ts';
import { KubernetesPlatform } from '../platform/kubernetes/kubernetes-platform.ts';
import type { Platform } from '../platform/types.ts';
import { LeaderElector, type LeaderElectionOptions } from '../platform/kubernetes/leader-election.ts';
import { gatedKubeConfig } from '../platform/kubernetes/write-gate.ts';
import type { ControllerLogger } from '../platform/kubernetes/reconcilers/reconcile-context.ts';
import { resolveControllerSettings, type ControllerSettings } from '../platform/kubernetes/settings.ts';
import { TargetPolicy } from '../source/target-policy.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../store/memory-log.ts';
import type { BuildLog, InvocationLog, StoreHealth } from '../store/types.ts';
import { applyHeapGrowth } from './heap-growth.ts';
import type { CommandIo } from './io.ts';
import { countApiRequests } from '../platform/kubernetes/api-client/api-request-metrics.ts';
import { COUNTS_PATH } from '../platform/kubernetes/scaling/counts-endpoint.ts';
import type { KubeAutoscaler } from '../platform/kubernetes/scaling/kube-autoscaler.ts';
import { startAutoscaler, type AutoscalerStartOptions } from '../platform/kubernetes/scaling/start-autoscaler.ts';

/** ms from process start until this module and all it imports were loaded (logged with "serving on port"). */
const modulesLoadedMs = Math.round(performance.now());

/** What tests and the benchmark change; production uses the defaults. */
export interface ControllerServerOptions {
  /** Default `::` (all interfaces). */
  readonly host?: string;
  readonly leaderElection?: Partial<Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewIntervalMs' | 'renewDeadlineMs' | 'name' | 'namespace' | 'identity'>>;
  /** Passed to each Controller this replica starts (e.g. watchNamespace, backoff). */
  readonly controller?: Partial<Pick<ControllerOptions, 'watchNamespace' | 'backoff' | 'timers' | 'queueRetryDelays'>> & { readonly settings?: Partial<ControllerSettings> };
  readonly store?: ArtifactStore;
  readonly endpointTtl?: { readonly readyMs?: number; readonly otherMs?: number };
  /** The leader's autoscaler: its tick, and where it finds the other replicas when not in a cluster (tests). */
  readonly scaling?: Pick<AutoscalerStartOptions, 'tickMs' | 'peers'>;
  /**
   * Wraps how queue deliveries reach functions (default: the platform itself). Integration tests, which
   * have no pods, keep the platform's resolution and send the ready answer's calls to a local server.
   */
  readonly reachFunctions?: (platform: KubernetesPlatform) => Pick<Platform, 'resolveEndpoint' | 'scaling'>;
}

export interface ControllerServer {
  readonly url: string;
  readonly port: number;
  /** Where /metrics is served (SLESS_METRICS_PORT), apart from the public port. */
  readonly metricsUrl: string;
  readonly app: FastifyInstance;
  readonly platform: KubernetesPlatform;
  readonly elector: LeaderElector;
  /** The running Controller while this replica leads. */
  readonly controller: Controller | undefined;
  /** The running autoscaler while this replica leads. */
  readonly autoscaler: KubeAutoscaler | undefined;
  close(): Promise<void>;
}

interface Logs {
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  readonly storeHealth?: StoreHealth;
  close?(): Promise<void>;
}

export function controllerSettings(config: ControllerConfig): ControllerSettings {
  try {
    TargetPolicy.publicOnly({ allow: config.gitAllowedHosts ?? [], deny: config.gitDeniedCidrs ?? [] });
  } catch (err) {
    throw new ConfigError(`bad setting SLESS_GIT_ALLOWED_HOSTS / SLESS_GIT_DENIED_CIDRS: ${err instanceof Error ? err.message : String(err)}`);
  }
  const credentials =
    config.awsAccessKeyId && config.awsSecretAccessKey ? { accessKeyId: config.awsAccessKeyId, secretAccessKey: config.awsSecretAccessKey } : undefined;
  return {
    registry: config.registry,
    kanikoImage: config.kanikoImage,
    buildNamespace: config.buildNamespace,
    ...(config.podNamespace ? { systemNamespace: config.podNamespace } : {}),
    // In a cluster (POD_NAMESPACE from the downward API) the controller binds its ServiceAccount per tenant namespace.
    ...(config.podNamespace ? { tenantBinding: { serviceAccount: config.serviceAccount, namespace: config.podNamespace } } : {}),
    runtimeImagePrefix: config.runtimeImagePrefix,
    ...(config.buildToolsImage ? { buildToolsImage: config.buildToolsImage } : {}),
    s3: { bucket: config.s3Bucket, region: config.s3Region, ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}), ...(credentials ? { credentials } : {}) },
    clusterDomain: config.clusterDomain,
    ...(config.publicUrl ? { publicBaseUrl: config.publicUrl } : {}),
    cacheDir: config.cacheDir,
    git: {
      allowedHosts: config.gitAllowedHosts ?? [],
      deniedCidrs: config.gitDeniedCidrs ?? [],
      crossHostRedirects: config.gitCrossHostRedirects,
      maxFetchBytes: config.gitMaxFetchBytes,
      treeLimits: treeLimitsOf(config),
      maxFunctions: config.maxFunctionsPerRepository,
      minIntervalMs: config.minInterval,
    },
    limits: {
      functionsPerNamespace: config.maxFunctionsPerNamespace,
      schedulesPerNamespace: config.maxSchedulesPerNamespace,
      jobsPerNamespace: config.maxJobsPerNamespace,
      queueConsumersPerNamespace: config.maxQueueConsumersPerNamespace,
      queueInFlightPerNamespace: config.maxQueueInFlightPerNamespace,
      buildsPerNamespace: config.maxBuildsPerNamespace,
      syncShare: config.syncShare,
      maxReplicas: config.maxReplicas,
      schedulesPerFunction: config.maxSchedulesPerFunction,
      jobsPerFunction: config.maxJobsPerFunction,
      ...(config.maxSyncsPerNamespace ? { syncsPerNamespace: config.maxSyncsPerNamespace } : {}),
    },
    ...(config.imagePullSecrets?.length ? { imagePullSecrets: config.imagePullSecrets } : {}),
    ...(config.registrySecret ? { registrySecretName: config.registrySecret } : {}),
    resyncMs: config.resyncPeriod,
    concurrency: { syncs: config.syncConcurrency, builds: config.buildConcurrency, reconciles: config.reconcileConcurrency, uploads: config.uploadConcurrency },
    build: {
      cache: config.buildCache,
      layers: config.layerBuilds,
      ...(config.buildPullSecret ? { pullSecretName: config.buildPullSecret } : {}),
      activeDeadlineSeconds: Math.ceil(config.buildTimeout / 1000),
      ...(config.buildCpu ? { cpu: config.buildCpu } : {}),
      ...(config.buildMemory ? { memory: config.buildMemory } : {}),
    },
  };
}

function loadKubeConfig(config: ControllerConfig, registry: Registry): KubeConfig {
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();
  // client-node opens a new connection per API call otherwise (api-client/reuse-connections.ts); the one
  // dispatcher per cluster that fixes it also counts every request (sless_kube_requests_total).
  return countApiRequests(kc, registry);
}

/** The Lease lives beside the controller: POD_NAMESPACE in a cluster, else the kubeconfig's namespace. */
function leaseNamespace(config: ControllerConfig, kc: KubeConfig): string {
  if (config.podNamespace) return config.podNamespace;
  return kc.getContextObject(kc.getCurrentContext())?.namespace ?? 'default';
}

export async function startControllerServer(config: ControllerConfig, io: CommandIo, options: ControllerServerOptions = {}): Promise<ControllerServer> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const kubeConfig = loadKubeConfig(config, registry);
  // Every default filled in once, here: the platform and the Controller read the same complete settings.
  const settings = resolveControllerSettings({ ...controllerSettings(config), ...options.controller?.settings });
  const store = options.store ?? s3StoreOf(settings.s3);
  const platform = new KubernetesPlatform({
    kubeConfig,
    store,
    settings,
    // Called only once the watches run, after `logger` below is set.
    logger: { warn: (message, fields) => logger.warn(message, fields), info: (message, fields) => logger.info(message, fields) },
    routeToPods: config.routeToPods,
    ...(options.endpointTtl ? { endpointTtl: options.endpointTtl } : {}),
    coldStartTimeoutMs: config.coldStartTimeout,
  });

  let logs: Logs = { invocationLog: createMemoryInvocationLog(), buildLog: createMemoryBuildLog() };
  // Both read `logs` at call time: PostgreSQL replaces the in-memory logs below once it is open.
  const buildLog: BuildLog = { record: (r) => logs.buildLog.record(r), list: (ns, fn, limit) => logs.buildLog.list(ns, fn, limit) };
  const app = await buildApp({
    platform,
    invocationLog: { record: (r) => logs.invocationLog.record(r), list: (ns, fn, limit) => logs.invocationLog.list(ns, fn, limit) },
    buildLog,
    auth: authOptionsOf(config),
    registry,
    storeHealth: { check: async () => logs.storeHealth?.check() },
    limits: { proxyBodyBytes: config.maxBodyBytes, maxReplicas: config.maxReplicas, coldStartTimeoutMs: config.coldStartTimeout },
    rateLimits: { v1PerMinute: config.rateLimitV1, hooksPerMinute: config.rateLimitHooks },
    platformNamespaces: { system: settings.systemNamespace, build: settings.buildNamespace },
    console: { exclude: config.consoleExclude, ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}) },
    serveMetrics: false,
    logger: { level: config.logLevel, stream: io.stdout },
  });
  const log = app.log.child({ component: 'controller' });
  const logger: ControllerLogger = {
    info: (message, fields) => log.info(fields ?? {}, message),
    warn: (message, fields) => log.warn(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
  };
  // buildApp already warns about insecure auth through the same logger.

  if (config.databaseUrl) {
    // Loaded only when used: the PostgreSQL client costs the controller ~10 MB of RSS otherwise.
    const { openPgStore } = await import('../store/pg-store.ts');
    const pg = await openPgStore({
      connectionString: config.databaseUrl,
      metrics: createMetrics(registry),
      retentionDays: config.invocationRetentionDays,
      logger: { warn: (obj, msg) => log.warn(obj, msg), info: (obj, msg) => log.info(obj, msg) },
    });
    logs = { invocationLog: pg.invocationLog, buildLog: pg.buildLog, storeHealth: pg.health, close: () => pg.close() };
    log.info('invocation and build logs go to PostgreSQL (DATABASE_URL)');
  }

  let controller: Controller | undefined;
  let autoscaler: KubeAutoscaler | undefined;
  const identity = options.leaderElection?.identity ?? config.podName ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  const elector = new LeaderElector({
    kubeConfig,
    namespace: options.leaderElection?.namespace ?? leaseNamespace(config, kubeConfig),
    identity,
    ...options.leaderElection,
    logger,
    onStartedLeading: async () => {
      const c = new Controller({
        // Its writes stop before this replica's Lease can expire for the others (write-gate.ts).
        kubeConfig: gatedKubeConfig(kubeConfig, elector.writeGate),
        logger,
        settings,
        registry,
        store,
        // Only the leader records builds: with several replicas /builds is complete only when they share PostgreSQL.
        buildLog,
        // Queue deliveries reach functions as /fn does (docs/queues.md), recorded beside /fn's calls.
        functions: options.reachFunctions ? options.reachFunctions(platform) : platform,
        invocationLog: { record: (r) => logs.invocationLog.record(r), list: (ns, fn, limit) => logs.invocationLog.list(ns, fn, limit) },
        ...(options.controller?.watchNamespace || config.watchNamespace ? { watchNamespace: options.controller?.watchNamespace ?? config.watchNamespace } : {}),
        ...(options.controller?.backoff ? { backoff: options.controller.backoff } : {}),
        ...(options.controller?.timers ? { timers: options.controller.timers } : {}),
        ...(options.controller?.queueRetryDelays ? { queueRetryDelays: options.controller.queueRetryDelays } : {}),
      });
      controller = c;
      await c.start();
      // The autoscaler decides from every replica's counts and writes only while this replica leads.
      autoscaler = startAutoscaler({
        kubeConfig: gatedKubeConfig(kubeConfig, elector.writeGate),
        caches: c.caches,
        counts: platform.scalingCounts,
        settings,
        selfPod: config.podName,
        registry,
        logger,
        ...(options.scaling ?? {}),
      });
    },
    onStoppedLeading: async () => {
      const c = controller;
      controller = undefined;
      const a = autoscaler;
      autoscaler = undefined;
      await a?.stop();
      if (!c) return;
      // ResilientInformer.stop() also closes watches that were still connecting.
      await c.stop();
    },
  });

  // /fn and /hooks read from watches once these have listed (from the API server until then).
  void platform.start();
  // Competing for the Lease (and, once leading, listing every kind) does not wait for HTTP: listen()
  // compiles every route's schemas first (~0.5 s of CPU), while those requests wait on the API server.
  elector.start();
  let metricsServer: MetricsServer;
  try {
    await app.listen({ host: options.host ?? '::', port: config.port });
    metricsServer = await startMetricsServer({
      registry,
      host: options.host ?? '::',
      port: config.metricsPort,
      // The leader gathers every replica's calls in flight from here (scaling/counts-gatherer.ts).
      json: { [COUNTS_PATH]: () => platform.scalingCounts.report() },
    });
  } catch (err) {
    await elector.stop();
    await app.close();
    await platform.close();
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const startup = { modulesLoadedMs, servingMs: Math.round(performance.now()) };
  log.info(
    { identity, lease: elector.lease, port, metricsPort: metricsServer.port, startup },
    `serving on port ${port} (/metrics on port ${metricsServer.port}); competing for Lease ${elector.lease} as ${identity}`,
  );

  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    metricsUrl: metricsServer.url,
    app,
    platform,
    elector,
    get controller() {
      return controller;
    },
    get autoscaler() {
      return autoscaler;
    },
    close() {
      closing ??= (async () => {
        // Leadership first, so the other replica starts reconciling while this one drains its requests.
        await elector.stop();
        await app.close();
        await metricsServer.close();
        await platform.close();
        await logs.close?.();
      })();
      return closing;
    },
  };
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const config = loadControllerConfig(argv);
  // This process only (not the in-process controllers of tests): before the informers fill the heap.
  applyHeapGrowth(config.heapGrowingPercent);
  const server = await startControllerServer(config, io);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  server.app.log.info(`${signal}: releasing leadership, draining HTTP`);
  // A second signal while draining means "now".
  const force = () => process.exit(130);
  process.once('SIGINT', force).once('SIGTERM', force);
  await server.close();
  // Everything is closed. A watch socket that a client library failed to release (seen with client-node's
  // ListWatch) must not keep a terminating pod alive until the kubelet kills it.
  setTimeout(() => {
    io.stderr.write('sless controller: a connection was still open 2 s after shutdown; exiting anyway\n');
    process.exit(0);
  }, 2_000).unref();
  return 0;
}
