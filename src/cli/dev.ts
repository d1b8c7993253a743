// `sless dev`: the whole platform on one machine — no cluster, no S3, no registry. Follows one
// repository (git URL, local git repository or folder), runs its functions as child processes and
// serves /fn, /v1 and /hooks exactly as the controller does. Ctrl-C / SIGTERM stops every child.
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { Registry } from 'prom-client';
import type { AuthOptions } from '../auth/token-verifier.ts';
import { CommitStatusPoster } from '../commit-status/commit-status-poster.ts';
import { RevisionReporter } from '../commit-status/revision-reporter.ts';
import { describeTarget, statusTarget } from '../commit-status/status-target.ts';
import { loadDevConfig, treeLimitsOf, type DevConfig } from '../config/config.ts';
import { buildApp } from '../app/build-app.ts';
import { createMetrics } from '../metrics/metrics.ts';
import { LocalPlatform, type LocalPlatformOptions } from '../platform/local/local-platform.ts';
import { openPreviewReader } from '../source/preview-source.ts';
import { previewSettingsOf } from '../preview/preview-settings.ts';
import { localRuntimes } from '../platform/local/local-runtimes.ts';
import { readableJsonLine, streamLogger, type Logger } from '../platform/local/logger.ts';
import { lockDataDir, type DataDirLock } from '../platform/local/data-dir-lock.ts';
import { openRepository } from '../platform/local/open-repository.ts';
import { isGitUrl } from '../source/repository-read.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../store/memory-log.ts';
import { TargetPolicy } from '../source/target-policy.ts';
import { openPgStore } from '../store/pg-store.ts';
import type { BuildLog, InvocationLog, StoreHealth } from '../store/types.ts';
import { startDevQueues } from '../platform/local/local-queues.ts';
import type { QueueTriggers } from '../queue/queue-triggers.ts';
import { dataDirSecret, JWT_SECRET, WEBHOOK_SECRET } from './dev-secret.ts';
import type { CommandIo } from './io.ts';

export interface DevServer {
  /** e.g. http://localhost:8080 */
  readonly url: string;
  readonly port: number;
  readonly platform: LocalPlatform;
  readonly app: FastifyInstance;
  /** Printed at start: an admin token (when sless dev holds the signing secret). */
  readonly adminToken?: string;
  readonly webhookSecret: string;
  /** The queue triggers of the functions (function.yaml `queues:`). */
  readonly queues: QueueTriggers;
  close(): Promise<void>;
}

interface Logs {
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  readonly storeHealth?: StoreHealth;
  close?(): Promise<void>;
}

async function openLogs(config: DevConfig, registry: Registry, logger: Logger): Promise<Logs> {
  if (!config.databaseUrl) return { invocationLog: createMemoryInvocationLog(), buildLog: createMemoryBuildLog() };
  const store = await openPgStore({
    connectionString: config.databaseUrl,
    metrics: createMetrics(registry),
    retentionDays: config.invocationRetentionDays,
  });
  logger.info('invocation and build logs go to PostgreSQL (--database-url)');
  return { invocationLog: store.invocationLog, buildLog: store.buildLog, storeHealth: store.health, close: () => store.close() };
}

/** How /v1 tokens are checked; an HS256 secret kept in the data dir when none of the ways is configured. */
async function authOf(config: DevConfig, dataDir: string): Promise<{ auth: AuthOptions; signingSecret?: string }> {
  const common = { issuer: config.jwtIssuer, audience: config.jwtAudience, adminClaim: config.adminClaim, allowNoExp: config.jwtAllowNoExp };
  if (config.jwksUrl) return { auth: { ...common, key: { kind: 'jwks', url: config.jwksUrl, ...(config.jwtAlgorithms ? { algorithms: config.jwtAlgorithms } : {}) } } };
  if (config.jwtPublicKey) return { auth: { ...common, key: { kind: 'public-key', pem: config.jwtPublicKey } } };
  if (config.authInsecure) return { auth: { ...common, key: { kind: 'insecure' } } };
  const secret = config.jwtSecret ?? (await dataDirSecret(dataDir, JWT_SECRET));
  return { auth: { ...common, key: { kind: 'hs256', secret } }, signingSecret: secret };
}

async function adminToken(config: DevConfig, secret: string): Promise<string> {
  let jwt = new SignJWT({ [config.adminClaim]: true })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('sless-dev-admin')
    .setIssuedAt()
    .setExpirationTime('30d');
  if (config.jwtIssuer) jwt = jwt.setIssuer(config.jwtIssuer);
  if (config.jwtAudience) jwt = jwt.setAudience(config.jwtAudience);
  return jwt.sign(new TextEncoder().encode(secret));
}

/** `--commit-status`: statuses go to the API of the host --repo names, with a token that may write them. */
function commitStatusOf(config: DevConfig, logger: Logger, publicUrl: () => string): { reporter: RevisionReporter; poster: CommitStatusPoster } | undefined {
  if (!config.commitStatus) return undefined;
  if (!isGitUrl(config.repo)) throw new Error(`--commit-status needs --repo to be a git URL (http or https), not ${config.repo}`);
  let urlPassword: string | undefined;
  try {
    urlPassword = decodeURIComponent(new URL(config.repo).password) || undefined;
  } catch {
    urlPassword = undefined;
  }
  const target = statusTarget({ url: config.repo, provider: config.commitStatusProvider, token: config.commitStatusToken ?? urlPassword });
  if ('error' in target) {
    const hint = config.commitStatusToken || urlPassword ? '' : "; set SLESS_COMMIT_STATUS_TOKEN or put a token in --repo's URL";
    throw new Error(`--commit-status: ${target.error}${hint}`);
  }
  // The same policy as the dev fetches (open-repository.ts): any host, through the pinned resolution.
  const poster = new CommitStatusPoster({ logger, targets: TargetPolicy.anyTarget() });
  logger.info(`commit statuses go to ${describeTarget(target)} (context "sless")`);
  return { poster, reporter: new RevisionReporter({ target, poster, namespace: config.namespace, consoleBaseUrl: publicUrl }) };
}

/** `--previews` (+ `--preview-ttl`, `--preview-max-open`, `--preview-schedules`, `--preview-secrets`): spec.previews with enabled on; statuses through --commit-status's poster. */
function previewsOf(config: DevConfig, branch: string, dataDir: string, commitStatus: ReturnType<typeof commitStatusOf>): LocalPlatformOptions['previews'] {
  if (!config.previews) return undefined;
  const settings = previewSettingsOf(
    { enabled: true, ttl: config.previewTtl, maxOpen: config.previewMaxOpen, schedules: config.previewSchedules, secrets: config.previewSecrets },
    'previews',
  );
  if ('error' in settings) throw new Error(`--preview-ttl / --preview-max-open: ${settings.error}`);
  const reader = openPreviewReader({
    repo: config.repo,
    branch,
    path: config.path,
    cacheDir: dataDir,
    maxReplicas: config.maxReplicas,
    schedulesPerFunction: config.maxSchedulesPerFunction,
    jobsPerFunction: config.maxJobsPerFunction,
  });
  return { settings, reader, ...(commitStatus ? { status: { poster: commitStatus.poster, target: commitStatus.reporter.target } } : {}) };
}

/** Starts everything and returns once the server listens (the first sync runs in the background). */
export async function startDev(config: DevConfig, io: CommandIo): Promise<DevServer> {
  const logger = streamLogger((line) => io.stdout.write(line));
  const dataDir = path.resolve(config.dataDir);
  // Before anything reads or writes the data dir: one sless dev per data dir.
  const lock = await lockDataDir(dataDir);
  try {
    return await startLocked(config, io, logger, dataDir, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function startLocked(config: DevConfig, io: CommandIo, logger: Logger, dataDir: string, lock: DataDirLock): Promise<DevServer> {
  const webhookSecret = config.webhookSecret ?? (await dataDirSecret(dataDir, WEBHOOK_SECRET));
  const { auth, signingSecret } = await authOf(config, dataDir);
  const repository = await openRepository({
    repo: config.repo,
    branch: config.branch,
    path: config.path,
    cacheDir: path.join(dataDir, 'git'),
    treeLimits: treeLimitsOf(config),
    logger,
    maxReplicas: config.maxReplicas,
    schedulesPerFunction: config.maxSchedulesPerFunction,
    jobsPerFunction: config.maxJobsPerFunction,
  });
  let publicUrl = `http://localhost:${config.port}`;
  const commitStatus = commitStatusOf(config, logger, () => publicUrl);
  const previews = previewsOf(config, repository.branch, dataDir, commitStatus);
  const registry = new Registry();
  const logs = await openLogs(config, registry, logger);
  const platform = new LocalPlatform({
    dataDir,
    namespace: config.namespace,
    repoName: config.repoName,
    repository,
    runtimes: localRuntimes(),
    webhookSecret,
    pollIntervalMs: config.pollInterval,
    logger,
    buildLog: logs.buildLog,
    publicUrl: () => publicUrl,
    ...(commitStatus ? { commitStatus: commitStatus.reporter } : {}),
    ...(previews ? { previews } : {}),
    maxReplicas: config.maxReplicas,
    metrics: createMetrics(registry),
    ...(config.secretsDir === undefined ? {} : { secretsDir: config.secretsDir }),
  });
  const app = await buildApp({
    platform,
    invocationLog: logs.invocationLog,
    buildLog: logs.buildLog,
    storeHealth: logs.storeHealth,
    auth,
    registry,
    limits: { proxyBodyBytes: config.maxBodyBytes, maxReplicas: config.maxReplicas, coldStartTimeoutMs: config.coldStartTimeout },
    console: { exclude: config.consoleExclude },
    // Per-request lines would drown the function log; warnings and errors still show, in the format
    // of every other line.
    logger: { level: config.logLevel === 'info' ? 'warn' : config.logLevel, stream: { write: (l: string) => io.stderr.write(readableJsonLine(l)) } },
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await logs.close?.();
    throw new Error(`cannot listen on ${config.host}:${config.port} (${(err as Error).message}); pass another --port`, { cause: err });
  }
  const port = (app.server.address() as AddressInfo).port;
  const shownHost = ['127.0.0.1', '0.0.0.0', '::', '::1'].includes(config.host) ? 'localhost' : config.host;
  publicUrl = `http://${shownHost}:${port}`;
  try {
    await platform.start();
  } catch (err) {
    await app.close();
    await platform.close();
    await logs.close?.();
    throw err;
  }

  const queues = startDevQueues({ platform, secretsDir: config.secretsDir, registry, invocationLog: logs.invocationLog, logger });
  platform.readQueuesFrom((target) => {
    const s = queues.triggers.statusOf(target);
    return s && { consuming: s.state === 'consuming', stats: { ...(s.lag === undefined ? {} : { lag: s.lag }), inFlight: s.inFlight, ...(s.deadLettered === undefined ? {} : { deadLettered: s.deadLettered }) } };
  });
  const token = signingSecret ? await adminToken(config, signingSecret) : undefined;
  const hook = `${publicUrl}/hooks/${config.namespace}/${config.repoName}`;
  io.stdout.write(
    [
      '',
      `sless dev listening on ${publicUrl}`,
      `  repository  ${repository.displayUrl} (branch ${repository.branch}${config.path ? `, path ${config.path}` : ''})`,
      `  functions   ${publicUrl}/fn/${config.namespace}/<name>`,
      ...(config.previews ? [`  previews    ${publicUrl}/fn/${config.namespace}-pr-<N>/<name> (pull requests to ${repository.branch})`] : []),
      token
        ? `  console     ${publicUrl}/funcs/${config.namespace}?token=${token}`
        : `  console     ${publicUrl}/funcs/${config.namespace} (log in with a token of your issuer)`,
      `  webhook     POST ${hook}  (secret: ${webhookSecret})`,
      token
        ? `  admin token (sub sless-dev-admin, claim ${config.adminClaim}: true, 30 days):\n    export SLESS_TOKEN=${token}`
        : '  /v1 tokens: issued by your configured issuer (SLESS_JWKS_URL / SLESS_JWT_PUBLIC_KEY / insecure mode)',
      `  data        ${dataDir}`,
      '',
      '',
    ].join('\n'),
  );

  let closing: Promise<void> | undefined;
  return {
    url: publicUrl,
    port,
    platform,
    app,
    adminToken: token,
    webhookSecret,
    queues: queues.triggers,
    close() {
      closing ??= (async () => {
        // Consumers first: their calls in flight finish (and settle) while the functions still run.
        await queues.close();
        await app.close();
        await platform.close();
        await commitStatus?.poster.close();
        await logs.close?.();
        lock.release();
      })();
      return closing;
    },
  };
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const config = loadDevConfig(argv, process.env);
  // Listen for the stop at once: a SIGTERM while starting must stop what started, not be lost.
  const stop = stopRequest(config.exitWithParent);
  let dev: DevServer;
  try {
    dev = await startDev(config, io);
  } catch (err) {
    stop.dispose();
    // Startup problems a user fixes (port taken, no such folder, database down): a message, not a stack.
    io.stderr.write(`sless dev: ${(err as Error).message}\n`);
    return 1;
  }
  // Whatever ends this process, no child outlives it.
  const lastResort = () => dev.platform.killAllNow();
  process.on('exit', lastResort);
  void dev.platform.idle().then(async () => {
    const fns = await dev.platform.listFunctions(config.namespace);
    if (fns.length === 0) return;
    io.stdout.write(`\n${fns.map((f) => `  ${f.name.padEnd(24)} ${f.phase.padEnd(8)} ${f.url ?? ''}`).join('\n')}\n\n`);
  });
  const why = await stop.requested;
  stop.dispose();
  io.stdout.write(`\n${why}: stopping every function process...\n`);
  const force = () => {
    dev.platform.killAllNow();
    process.exit(130);
  };
  process.once('SIGINT', force).once('SIGTERM', force);
  await dev.close();
  process.off('exit', lastResort);
  io.stdout.write('sless dev stopped\n');
  // Everything is stopped; a handle some library leaked must not keep the process (and its port) alive.
  setTimeout(() => process.exit(0), 2000).unref();
  return 0;
}

/**
 * Resolves on SIGINT/SIGTERM, or (with `exitWithParent`) when the parent process is gone: npm does
 * not pass SIGTERM on to a script's own children, so `npm start` sets --exit-with-parent.
 */
function stopRequest(exitWithParent: boolean): { requested: Promise<string>; dispose(): void } {
  let resolve!: (why: string) => void;
  const requested = new Promise<string>((r) => (resolve = r));
  const onInt = () => resolve('SIGINT');
  const onTerm = () => resolve('SIGTERM');
  process.once('SIGINT', onInt).once('SIGTERM', onTerm);
  const parent = process.ppid;
  const watch = exitWithParent
    ? setInterval(() => {
        if (process.ppid !== parent) resolve(`the parent process (pid ${parent}) exited`);
      }, 250)
    : undefined;
  watch?.unref();
  return {
    requested,
    dispose() {
      process.off('SIGINT', onInt).off('SIGTERM', onTerm);
      clearInterval(watch);
    },
  };
}
