// The only reader of process.env: each command's settings, parsed once and frozen (docs/contract.md §5, §6).
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { JWKS_ALGORITHMS, JWKS_DEFAULT_ALGORITHMS, MIN_HS256_SECRET_BYTES } from '../auth/token-verifier.ts';
import { COMMIT_STATUS_PROVIDERS } from '../commit-status/status-target.ts';
import { PREVIEW_DEFAULTS } from '../preview/preview-settings.ts';
import { DEFAULT_BUILD_NAMESPACE } from '../platform/tenant-rules.ts';
import { DEFAULT_TREE_LIMITS, TREE_LIMIT_SETTINGS, type TreeLimits } from '../source/tree-limits.ts';
import { controllerTuningSpecs } from './controller-tuning.ts';
import { SCALE_LIMITS } from '../manifest/scale-spec.ts';
import { MANIFEST_LIMITS, type ManifestCaps } from '../manifest/defaults.ts';
import { ConfigError, dnsLabel, duration, flag, port, resolveSettings, type SettingSpec } from './resolve-settings.ts';

const optionalString = z.string().min(1).optional();
const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/** Pinned builder image: kaniko upstream is archived; this is the maintained community fork. */
export const DEFAULT_KANIKO_IMAGE = 'martizih/kaniko:v1.28.3';

const common = {
  port: { flag: 'port', env: 'SLESS_PORT', schema: port, default: 8080, describe: 'HTTP port' },
  logLevel: { env: 'SLESS_LOG_LEVEL', schema: logLevel, default: 'info' as const, describe: 'log level' },
  jwtSecret: {
    env: 'SLESS_JWT_SECRET',
    schema: z
      .string()
      .refine((v) => Buffer.byteLength(v) >= MIN_HS256_SECRET_BYTES, `at least ${MIN_HS256_SECRET_BYTES} bytes (e.g. openssl rand -base64 32)`)
      .optional(),
    describe: 'HS256 secret for /v1 tokens',
  },
  jwtAllowNoExp: { env: 'SLESS_JWT_ALLOW_NO_EXP', schema: flag, default: false, describe: 'accept /v1 tokens without an exp claim' },
  jwksUrl: { env: 'SLESS_JWKS_URL', schema: z.url().optional(), describe: 'JWKS URL to verify /v1 tokens' },
  jwtPublicKey: { env: 'SLESS_JWT_PUBLIC_KEY', schema: optionalString, describe: 'PEM public key to verify /v1 tokens' },
  jwtIssuer: { env: 'SLESS_JWT_ISSUER', schema: optionalString, describe: 'required token issuer' },
  jwtAudience: { env: 'SLESS_JWT_AUDIENCE', schema: optionalString, describe: 'required token audience' },
  adminClaim: { env: 'SLESS_ADMIN_CLAIM', schema: z.string().min(1), default: 'sless_admin', describe: 'claim that grants every namespace' },
  jwtAlgorithms: {
    env: 'SLESS_JWT_ALGORITHMS',
    schema: z
      .string()
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.enum(JWKS_ALGORITHMS)).min(1))
      .optional(),
    describe: `signature algorithms JWKS tokens may use, comma-separated (default ${JWKS_DEFAULT_ALGORITHMS.join(',')})`,
  },
  jwtAnyIssuerAudience: {
    env: 'SLESS_JWT_ANY_ISSUER_AUDIENCE',
    schema: flag,
    default: false,
    describe: 'accept JWKS tokens without checking issuer and audience (sless controller requires both otherwise)',
  },
  authInsecure: { env: 'SLESS_AUTH_INSECURE', schema: flag, default: false, describe: 'accept unsigned tokens' },
  databaseUrl: { flag: 'database-url', env: 'DATABASE_URL', schema: optionalString, describe: 'PostgreSQL URL for invocation and build logs' },
  invocationRetentionDays: {
    env: 'SLESS_LOG_RETENTION_DAYS',
    schema: z.coerce.number().int().min(1).max(3650),
    default: 14,
    describe: 'days to keep invocation and build records',
  },
  consoleExclude: {
    env: 'SLESS_CONSOLE_EXCLUDE',
    schema: z
      .string()
      .transform((v) => v.split(',').map((p) => p.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[a-z0-9*?-]+$/, 'function names or globs (* and ?), comma-separated'))),
    default: [] as string[],
    describe: 'functions the web console (/funcs) does not show: names or globs, comma-separated',
  },
  maxTreeDepth: { env: TREE_LIMIT_SETTINGS.maxDepth, schema: z.coerce.number().int().min(1), default: DEFAULT_TREE_LIMITS.maxDepth, describe: 'folders one path of a repository or upload may nest (deeper: refused, TreeTooDeep)' },
  maxPathBytes: { env: TREE_LIMIT_SETTINGS.maxPathBytes, schema: z.coerce.number().int().min(1), default: DEFAULT_TREE_LIMITS.maxPathBytes, describe: 'bytes of one path in a repository or upload (longer: refused, PathTooLong)' },
  maxTreeBytes: {
    env: TREE_LIMIT_SETTINGS.maxListingBytes,
    schema: z.coerce.number().int().min(1),
    default: DEFAULT_TREE_LIMITS.maxListingBytes,
    describe: 'bytes of the listing of every path of a revision, as git ls-tree -r -t prints it (bigger: refused, TreeTooLarge)',
  },
  maxBodyBytes: {
    env: 'SLESS_MAX_BODY_BYTES',
    schema: z.coerce.number().int().min(1024),
    default: 6 * 1024 * 1024,
    describe: 'largest request body /fn forwards',
  },
  maxReplicas: {
    env: 'SLESS_MAX_REPLICAS',
    schema: z.coerce.number().int().min(1).max(SCALE_LIMITS.maxReplicas),
    default: SCALE_LIMITS.defaultCap,
    describe: "the cap on a function's scale.max in every namespace (a higher max is an error)",
  },
  maxSchedulesPerFunction: { env: 'SLESS_MAX_SCHEDULES_PER_FUNCTION', schema: z.coerce.number().int().min(1), default: MANIFEST_LIMITS.schedulesPerFunction, describe: 'most schedules one function.yaml may declare, each a CronJob (more is an error)' },
  maxJobsPerFunction: { env: 'SLESS_MAX_JOBS_PER_FUNCTION', schema: z.coerce.number().int().min(1), default: MANIFEST_LIMITS.jobsPerFunction, describe: 'most jobs one function.yaml may declare, each run a Job (more is an error)' },
  coldStartTimeout: {
    env: 'SLESS_COLD_START_TIMEOUT',
    schema: duration,
    default: 60_000,
    describe: "how long /fn holds a request while a function at zero starts (also bounded by its timeout_sec); then 503 with Retry-After",
  },
} satisfies Record<string, SettingSpec<unknown>>;

const controllerSpecs = {
  ...common,
  kubeconfig: { flag: 'kubeconfig', env: 'SLESS_KUBECONFIG', schema: optionalString, describe: 'kubeconfig path (default: in-cluster, then ~/.kube/config)' },
  s3Endpoint: { env: 'SLESS_S3_ENDPOINT', schema: z.url().optional(), describe: 'S3 endpoint URL (unset: AWS)' },
  s3Bucket: { env: 'SLESS_S3_BUCKET', schema: z.string().min(3), describe: 'S3 bucket for build contexts' },
  s3Region: { env: 'SLESS_S3_REGION', schema: z.string().min(1), default: 'us-east-1', describe: 'S3 region' },
  awsAccessKeyId: { env: 'AWS_ACCESS_KEY_ID', schema: optionalString, describe: 'S3 access key' },
  awsSecretAccessKey: { env: 'AWS_SECRET_ACCESS_KEY', schema: optionalString, describe: 'S3 secret key' },
  registry: { env: 'SLESS_REGISTRY', schema: z.string().min(1), describe: 'registry the built images are pushed to, e.g. registry.example.com/sless' },
  kanikoImage: { env: 'SLESS_KANIKO_IMAGE', schema: z.string().min(1), default: DEFAULT_KANIKO_IMAGE, describe: 'builder image' },
  buildNamespace: { env: 'SLESS_BUILD_NAMESPACE', schema: dnsLabel, default: DEFAULT_BUILD_NAMESPACE, describe: 'namespace where build Jobs run' },
  buildToolsImage: {
    env: 'SLESS_BUILD_TOOLS_IMAGE',
    schema: optionalString,
    describe: 'image of the build steps that fetch the context and push the result (default: <runtime image prefix>/sless-build-tools:<tag>)',
  },
  buildCache: { env: 'SLESS_BUILD_CACHE', schema: flag, default: true, describe: "kaniko's layer cache (one cache repository per function, <image repo>/cache)" },
  layerBuilds: {
    env: 'SLESS_LAYER_BUILDS',
    schema: flag,
    default: true,
    describe: 'images whose Dockerfile runs nothing (Node.js or Python without dependency files) get the code appended as one layer, without kaniko; false: kaniko builds every image',
  },
  buildPullSecret: {
    env: 'SLESS_BUILD_PULL_SECRET',
    schema: optionalString,
    describe: 'docker-config Secret in the build namespace that kaniko pulls base images with (give it pull-only rights)',
  },
  runtimeImagePrefix: { env: 'SLESS_RUNTIME_IMAGE_PREFIX', schema: optionalString, describe: 'where runtime base images live (default: the registry)' },
  routeToPods: {
    env: 'SLESS_ROUTE_TO_PODS',
    schema: flag,
    default: true,
    describe: "/fn calls a function's pods directly (EndpointSlice watch, probes new pods itself: a rollout or a wake is served as soon as the new pod answers); false: through the function's Service (when the controller cannot reach pod IPs)",
  },
  clusterDomain: { env: 'SLESS_CLUSTER_DOMAIN', schema: z.string().min(1), default: 'cluster.local', describe: 'cluster DNS domain for function Services' },
  podNamespace: { env: 'POD_NAMESPACE', schema: optionalString, describe: 'namespace of the controller (for its leader Lease)' },
  serviceAccount: {
    env: 'SLESS_SERVICE_ACCOUNT',
    schema: dnsLabel,
    default: 'sless-controller',
    describe: "the controller's ServiceAccount (in POD_NAMESPACE), bound to ClusterRole sless-tenant in each tenant namespace",
  },
  podName: { env: 'POD_NAME', schema: optionalString, describe: 'identity in leader election' },
  watchNamespace: {
    env: 'SLESS_WATCH_NAMESPACE',
    schema: dnsLabel.optional(),
    describe: 'reconcile only this namespace (default: every namespace; /fn and /v1 still serve all)',
  },
  metricsPort: {
    flag: 'metrics-port',
    env: 'SLESS_METRICS_PORT',
    schema: port,
    default: 9090,
    describe: "port of the /metrics listener, apart from --port: its labels name every tenant's functions, so only Prometheus should reach it",
  },
  publicUrl: { env: 'SLESS_PUBLIC_URL', schema: z.url().optional(), describe: 'public base URL of this server, for status.url; https makes the console cookie Secure behind a TLS-terminating ingress (e.g. https://fn.example.com)' },
  cacheDir: { env: 'SLESS_CACHE_DIR', schema: z.string().min(1), default: path.join(os.tmpdir(), 'sless-cache'), describe: 'git cache of repository syncs' },
  ...controllerTuningSpecs,
} satisfies Record<string, SettingSpec<unknown>>;

const devSpecs = {
  ...common,
  repo: { flag: 'repo', env: 'SLESS_REPO', schema: z.string().min(1), default: '.', describe: 'git URL, local git repository or folder' },
  branch: { flag: 'branch', env: 'SLESS_BRANCH', schema: optionalString, describe: 'branch to follow (default: main, or the local checkout’s branch)' },
  path: { flag: 'path', env: 'SLESS_PATH', schema: z.string(), default: '', describe: 'folder inside the repository to watch (dropped when a later --repo follows it)' },
  dataDir: { flag: 'data-dir', env: 'SLESS_DATA_DIR', schema: z.string().min(1), default: '.sless', describe: 'where prepared functions and state live' },
  namespace: { flag: 'namespace', env: 'SLESS_NAMESPACE', schema: dnsLabel, default: 'dev', describe: 'namespace of the functions (/fn/<namespace>/<name>)' },
  repoName: { flag: 'repo-name', env: 'SLESS_REPO_NAME', schema: dnsLabel, default: 'local', describe: 'repository name in /hooks/<namespace>/<repo-name>' },
  webhookSecret: { flag: 'webhook-secret', env: 'SLESS_WEBHOOK_SECRET', schema: optionalString, describe: 'webhook secret (default: made once, kept in <data-dir>/webhook-secret, printed)' },
  pollInterval: { flag: 'poll-interval', env: 'SLESS_POLL_INTERVAL', schema: duration, default: 10_000, describe: 'how often to poll the repository' },
  exitWithParent: {
    flag: 'exit-with-parent',
    env: 'SLESS_EXIT_WITH_PARENT',
    schema: flag,
    default: false,
    boolean: true,
    describe: 'stop when the parent process exits (npm start sets it)',
  },
  host: { flag: 'host', env: 'SLESS_HOST', schema: z.string().min(1), default: '127.0.0.1', describe: 'address to listen on' },
  commitStatus: { flag: 'commit-status', env: 'SLESS_COMMIT_STATUS', schema: flag, default: false, boolean: true, describe: 'set a commit status on each synced revision (needs a git URL --repo)' },
  commitStatusProvider: {
    flag: 'commit-status-provider',
    env: 'SLESS_COMMIT_STATUS_PROVIDER',
    schema: z.enum(COMMIT_STATUS_PROVIDERS).optional(),
    describe: 'gitea | github | gitlab (default: from the --repo host)',
  },
  previews: {
    flag: 'previews',
    env: 'SLESS_PREVIEWS',
    schema: flag,
    default: false,
    boolean: true,
    describe: 'build a preview of each pull request to --branch at /fn/<namespace>-pr-<N>/ (needs a git URL or local git --repo; docs/previews.md)',
  },
  previewTtl: {
    flag: 'preview-ttl',
    env: 'SLESS_PREVIEW_TTL',
    schema: z.string().regex(/^\d{1,6}(s|m|h|d)$/, 'a duration like 72h, 30m, 2d or 90s').default(PREVIEW_DEFAULTS.ttl),
    describe: 'a preview is removed this long after its last push',
  },
  previewMaxOpen: {
    flag: 'preview-max-open',
    env: 'SLESS_PREVIEW_MAX_OPEN',
    schema: z.coerce.number().int().min(0).default(PREVIEW_DEFAULTS.maxOpen),
    describe: 'open previews at most; the next pull request is refused with a commit status',
  },
  previewSchedules: {
    flag: 'preview-schedules',
    env: 'SLESS_PREVIEW_SCHEDULES',
    schema: flag,
    default: PREVIEW_DEFAULTS.schedules,
    boolean: true,
    describe: "run the schedules and jobs of a preview's built functions (off: a preview fires no production side effects)",
  },
  previewSecrets: {
    flag: 'preview-secrets',
    env: 'SLESS_PREVIEW_SECRETS',
    schema: z.enum(['none', 'inherit']).default(PREVIEW_DEFAULTS.secrets),
    describe: "none | inherit: whether previews get env_from_secrets from --secrets-dir (default none)",
  },
  secretsDir: { flag: 'secrets-dir', env: 'SLESS_SECRETS_DIR', schema: optionalString, describe: 'Secrets for env_from_secrets and queue triggers: DIR/<secret>/<key>, one file per key' },
  commitStatusToken: { env: 'SLESS_COMMIT_STATUS_TOKEN', schema: optionalString, describe: "token that may write commit statuses (default: the password in --repo's URL)" },
} satisfies Record<string, SettingSpec<unknown>>;

type Env = Readonly<Record<string, string | undefined>>;

function assertAuthConsistent(s: { jwtSecret?: string; jwksUrl?: string; jwtPublicKey?: string; authInsecure: boolean }): void {
  const modes = [s.jwtSecret && 'SLESS_JWT_SECRET', s.jwksUrl && 'SLESS_JWKS_URL', s.jwtPublicKey && 'SLESS_JWT_PUBLIC_KEY'].filter(Boolean);
  if (modes.length > 1) throw new ConfigError(`choose one way to verify tokens, not ${modes.join(' and ')}`);
  // Either would silently win over the other (dev and controller used to pick differently).
  if (s.authInsecure && modes.length > 0) {
    throw new ConfigError(`SLESS_AUTH_INSECURE=1 accepts unsigned tokens, yet ${modes[0]} is set to verify them; unset one of the two`);
  }
}

export function loadControllerConfig(argv: readonly string[], env: Env = process.env) {
  const { settings } = resolveSettings(controllerSpecs, argv, env);
  assertAuthConsistent(settings);
  if (settings.jwksUrl && !(settings.jwtIssuer && settings.jwtAudience) && !settings.jwtAnyIssuerAudience) {
    // A JWKS usually belongs to an identity provider that signs tokens for many applications.
    throw new ConfigError(
      'SLESS_JWKS_URL is set but SLESS_JWT_ISSUER and SLESS_JWT_AUDIENCE are not both set: any token the identity provider signs for another application would pass; ' +
        'set both (or SLESS_JWT_ANY_ISSUER_AUDIENCE=1 to accept that)',
    );
  }
  if (!settings.jwtSecret && !settings.jwksUrl && !settings.jwtPublicKey && !settings.authInsecure) {
    throw new ConfigError(
      'no way to verify /v1 tokens: set SLESS_JWT_SECRET, SLESS_JWKS_URL or SLESS_JWT_PUBLIC_KEY (or SLESS_AUTH_INSECURE=1 to accept unsigned tokens)',
    );
  }
  return Object.freeze({ ...settings, runtimeImagePrefix: settings.runtimeImagePrefix ?? settings.registry });
}
export type ControllerConfig = ReturnType<typeof loadControllerConfig>;

export function loadDevConfig(argv: readonly string[], env: Env = process.env) {
  const { settings } = resolveSettings(devSpecs, pathGoesWithItsRepo(argv), env);
  assertAuthConsistent(settings);
  return settings;
}
export type DevConfig = ReturnType<typeof loadDevConfig>;

/** The tree limits a command's settings name (tree-limits.ts). */
export function treeLimitsOf(config: { readonly maxTreeDepth: number; readonly maxPathBytes: number; readonly maxTreeBytes: number }): TreeLimits {
  return { maxDepth: config.maxTreeDepth, maxPathBytes: config.maxPathBytes, maxListingBytes: config.maxTreeBytes };
}

/**
 * `--path` belongs to the `--repo` it follows: when --repo is given again, a --path before the last
 * --repo is dropped. `npm start` runs `sless dev --repo . --path examples ...` followed by the user's
 * flags, so `npm start -- --repo X` watches X itself, not X/examples (`npm start -- --repo X --path
 * fns` watches X/fns). With one --repo, --path counts wherever it stands.
 */
export function pathGoesWithItsRepo(argv: readonly string[]): string[] {
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length;
  const isRepo = (a: string) => a === '--repo' || a.startsWith('--repo=');
  const repos = argv.slice(0, end).flatMap((a, i) => (isRepo(a) ? [i] : []));
  const lastRepo = repos.at(-1);
  if (lastRepo === undefined || repos.length < 2) return [...argv];
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (i < lastRepo && a === '--path') i++;
    else if (!(i < lastRepo && a.startsWith('--path='))) out.push(a);
  }
  return out;
}

/** The caps `sless validate` checks a function.yaml against: the ones the controller and `sless dev` apply. */
export function loadValidateSettings(env: Env = process.env): Required<ManifestCaps> {
  const { maxReplicas, maxSchedulesPerFunction, maxJobsPerFunction } = common;
  const { settings } = resolveSettings({ maxReplicas, maxSchedulesPerFunction, maxJobsPerFunction }, [], env);
  return { maxReplicas: settings.maxReplicas, schedulesPerFunction: settings.maxSchedulesPerFunction, jobsPerFunction: settings.maxJobsPerFunction };
}

/** Settings of the one-shot commands (`validate`, `hash`): just the directory. */
export function loadDirArgument(argv: readonly string[]): string {
  const { positionals } = resolveSettings({}, argv, {});
  if (positionals.length > 1) throw new ConfigError(`expected at most one directory, got ${positionals.length}`);
  return positionals[0] ?? '.';
}

export function describeSettings(command: 'controller' | 'dev'): string {
  return describeSpecs(command === 'controller' ? controllerSpecs : devSpecs);
}

/** One line per setting: flag / variable, what it is, its default (`sless <command> --help`). */
export function describeSpecs(specs: Record<string, SettingSpec<unknown>>): string {
  return Object.values(specs)
    .map((s) => {
      const shown = 'default' in s && s.default !== '' && s.default !== undefined ? ` (default: ${JSON.stringify(s.default)})` : '';
      return `  ${[s.flag ? `--${s.flag}` : '', s.env ?? ''].filter(Boolean).join(' / ').padEnd(44)} ${s.describe}${shown}`;
    })
    .join('\n');
}

export { ConfigError };
// For the settings of the tool commands (tool-settings.ts): the same specs and rules, one source.
export { common as commonSpecs, controllerSpecs, assertAuthConsistent };
