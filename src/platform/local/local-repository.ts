// The one repository `sless dev` follows, as /v1 and /hooks see it: read only (it is the --repo flag),
// a sync on request, the webhook secret from --webhook-secret.
import { PlatformError, type RepositoryInput, type RepositoryRecord, type WebhookTarget } from '../types.ts';
import { notFound } from './jobs-and-schedules.ts';
import type { LocalState } from './local-state.ts';
import type { RepositoryReader } from '../../source/repository-read.ts';
import type { RepositoryReason } from '../reasons.ts';

export interface LocalRepositoryOptions {
  readonly namespace: string;
  readonly repoName: string;
  readonly repository: RepositoryReader;
  readonly webhookSecret?: string;
  readonly pollIntervalMs: number;
  readonly state: LocalState;
  readonly requestSync: (reason: string) => void;
}

export class LocalRepository {
  constructor(private readonly o: LocalRepositoryOptions) {}

  #record(): RepositoryRecord {
    const repo = this.o.repository;
    const stored = this.o.state.data.repository;
    return {
      name: this.o.repoName,
      namespace: this.o.namespace,
      url: repo.displayUrl,
      branch: repo.branch,
      path: repo.path,
      interval: `${Math.round(this.o.pollIntervalMs / 1000)}s`,
      suspend: false,
      prune: true,
      revision: stored.revision,
      lastSyncTime: stored.lastSyncTime,
      webhookPath: `/hooks/${this.o.namespace}/${this.o.repoName}`,
      functions: stored.functions ?? [],
      ready: stored.lastError
        ? ready('False', stored.lastErrorReason ?? 'SyncFailed', stored.lastError)
        : stored.revision
          ? ready('True', 'Synced', `synced ${stored.revision}`)
          : ready('Unknown', 'Progressing', 'first sync not done yet'),
    };
  }

  #isOurs(namespace: string, name: string): boolean {
    return namespace === this.o.namespace && name === this.o.repoName;
  }

  list(namespace: string): RepositoryRecord[] {
    return namespace === this.o.namespace ? [this.#record()] : [];
  }

  get(namespace: string, name: string): RepositoryRecord {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    return this.#record();
  }

  create(input: RepositoryInput): never {
    throw new PlatformError('invalid', `sless dev follows exactly one repository (--repo); to follow ${input.name}, restart sless dev with --repo pointing at it`);
  }

  delete(namespace: string, name: string): never {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    throw new PlatformError('invalid', 'sless dev cannot stop following its own --repo; stop sless dev instead');
  }

  requestSync(namespace: string, name: string, reason: string): void {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    this.o.requestSync(reason);
  }

  webhookTarget(namespace: string, name: string): WebhookTarget | undefined {
    if (!this.#isOurs(namespace, name)) return undefined;
    return { branch: this.o.repository.branch, secret: this.o.webhookSecret };
  }
}

/** The repository's Ready condition as the controller would write it, with one of its reasons (reasons.ts). */
function ready(status: 'True' | 'False' | 'Unknown', reason: RepositoryReason, message: string): NonNullable<RepositoryRecord['ready']> {
  return { status, reason, message };
}
