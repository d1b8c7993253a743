// What `sless dev` gives LocalPlatform (local-platform.ts): where its data lives, the repository it
// follows, its runtimes and the optional parts (commit statuses, previews, secrets, scaling caps).
import type { RevisionReporter } from '../../commit-status/revision-reporter.ts';
import type { Metrics } from '../../metrics/metrics.ts';
import type { BuildLog } from '../../store/types.ts';
import type { LocalPreviewsOption } from './local-preview-wiring.ts';
import type { Logger } from './logger.ts';
import type { RepositoryReader } from '../../source/repository-read.ts';
import type { LocalRuntimes } from './ports.ts';

export interface LocalPlatformOptions {
  readonly dataDir: string;
  /** Namespace of the repository's functions (`/fn/<namespace>/<name>`). */
  readonly namespace: string;
  readonly repoName: string;
  readonly repository: RepositoryReader;
  readonly runtimes: LocalRuntimes;
  readonly webhookSecret?: string;
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Where users reach the HTTP listener, e.g. `http://localhost:8080` (known only after listen). */
  readonly publicUrl: () => string;
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** Where builds (prepared folders) are recorded for /v1 .../builds. */
  readonly buildLog?: BuildLog;
  readonly drainMs?: number;
  readonly healthTimeoutMs?: number;
  /** How many functions a sync builds or starts at the same time (default 4). */
  readonly deployConcurrency?: number;
  /** Commit statuses on each synced revision (`--commit-status`). */
  readonly commitStatus?: RevisionReporter;
  /** The cap on scale.max (SLESS_MAX_REPLICAS). */
  readonly maxReplicas?: number;
  /** Where the scaler reports sless_function_replicas and sless_scale_events_total. */
  readonly metrics?: Metrics;
  /** How often the scaler decides (default 1 s). */
  readonly scaleTickMs?: number;
  /** Pull-request previews (`--previews`, local-previews.ts). */
  readonly previews?: LocalPreviewsOption;
  /** `--secrets-dir`: env_from_secrets (and queue credentials) from DIR/<secret>/<key>. */
  readonly secretsDir?: string;
}
