// Commit statuses for FunctionRepositories with spec.commitStatus, on the leader: the repository
// reconciler reports each sync (revision, per-function results, the generations it applied), Function
// events re-evaluate the repository's last synced revision, and the statuses go out through the
// poster (deduplicated, retried, never awaited). Nothing here can fail a sync.
import { CommitStatusPoster } from '../../commit-status/commit-status-poster.ts';
import type { RevisionFunction } from '../../commit-status/decide-commit-status.ts';
import { kubeFunctionState } from './kube-function-state.ts';
import { RevisionReporter } from '../../commit-status/revision-reporter.ts';
import { describeTarget, statusTarget, type StatusTarget } from '../../commit-status/status-target.ts';
import type { CommitStatus } from '../../commit-status/decide-commit-status.ts';
import type { FunctionResource, RepositoryResource } from './objects/resources.ts';
import type { TargetPolicy } from '../../source/target-policy.ts';

export interface SyncedRevision {
  readonly revision: string;
  /** status.functions of the sync: a set `error` means the folder or its apply failed. */
  readonly functions: ReadonlyArray<{ readonly name: string; readonly path: string; readonly error?: string }>;
  /** Generation each Function got from this sync's apply (absent: unchanged). */
  readonly appliedGenerations: ReadonlyMap<string, number>;
}

export interface KubeCommitStatusOptions {
  readonly readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  readonly getFunction: (namespace: string, name: string) => FunctionResource | undefined;
  readonly logger: { info(message: string): void; warn(message: string): void };
  /** Where statuses may be posted: the repository syncs' TargetPolicy (pinned resolution, address rules). */
  readonly targets: TargetPolicy;
  /** Public base URL of sless, for links to the console. */
  readonly publicBaseUrl?: string;
  readonly poster?: CommitStatusPoster;
}

interface Tracked {
  readonly namespace: string;
  readonly reporter: RevisionReporter;
  readonly synced: SyncedRevision;
}

export class KubeCommitStatus {
  readonly #o: KubeCommitStatusOptions;
  readonly #poster: CommitStatusPoster;
  readonly #tracked = new Map<string, Tracked>();
  /** Last configuration problem logged per repository (logged once, not at every sync). */
  readonly #problems = new Map<string, string>();

  constructor(o: KubeCommitStatusOptions) {
    this.#o = o;
    this.#poster = o.poster ?? new CommitStatusPoster({ logger: o.logger, targets: o.targets });
  }

  /** Public base URL of sless (the statuses' console links). */
  get consoleBaseUrl(): string | undefined {
    return this.#o.publicBaseUrl;
  }

  /** After a sync that reached a revision; never throws. */
  async synced(repo: RepositoryResource, result: SyncedRevision): Promise<void> {
    const namespace = repo.metadata?.namespace ?? '';
    const key = `${namespace}/${repo.metadata?.name ?? ''}`;
    const opt = repo.spec?.commitStatus;
    if (!opt || opt.enabled === false || !repo.spec) {
      this.#tracked.delete(key);
      return;
    }
    try {
      const target = await this.#targetOf(repo, key);
      if (!target) {
        this.#tracked.delete(key);
        return;
      }
      this.#problems.delete(key);
      const previous = this.#tracked.get(key);
      const reporter =
        previous && describeTarget(previous.reporter.target) === describeTarget(target) && previous.reporter.target.token === target.token
          ? previous.reporter
          : new RevisionReporter({ target, poster: this.#poster, namespace, consoleBaseUrl: () => this.#o.publicBaseUrl });
      this.#tracked.set(key, { namespace, reporter, synced: result });
      this.#evaluate(key);
    } catch (err) {
      this.#problem(key, `CommitStatusSkipped: FunctionRepository ${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Statuses of another context on commit `sha` of the repository (`sless/preview` on a pull request's
   * head, previews/), to the same target with the same token as its sync statuses; never throws.
   */
  async post(repo: RepositoryResource, sha: string, statuses: readonly CommitStatus[]): Promise<void> {
    const key = `${repo.metadata?.namespace ?? ''}/${repo.metadata?.name ?? ''}`;
    const opt = repo.spec?.commitStatus;
    if (!opt || opt.enabled === false) return;
    try {
      const target = await this.#targetOf(repo, key);
      if (target) this.#poster.post(target, sha, statuses);
    } catch (err) {
      this.#problem(key, `CommitStatusSkipped: FunctionRepository ${key}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Where the repository's statuses go, or undefined (logged once) when they cannot. */
  async #targetOf(repo: RepositoryResource, key: string): Promise<StatusTarget | undefined> {
    const namespace = repo.metadata?.namespace ?? '';
    const opt = repo.spec?.commitStatus;
    if (!opt || !repo.spec) return undefined;
    const secretName = repo.spec.secretRef?.name;
    const data = secretName ? await this.#o.readSecret(namespace, secretName) : undefined;
    const token = data?.commitStatusToken || data?.token || data?.password || undefined;
    const target = statusTarget({ url: repo.spec.url, token, ...(opt.provider ? { provider: opt.provider } : {}) });
    if ('error' in target) {
      const hint = token ? '' : `: add commitStatusToken (or token) to the Secret named by spec.secretRef${secretName ? ` (${namespace}/${secretName})` : ''}`;
      this.#problem(key, `CommitStatusSkipped: FunctionRepository ${key}: ${target.error}${hint}`);
      return undefined;
    }
    return target;
  }

  /** A Function changed (build finished, rollout done, failure): re-evaluate its repository's revision. */
  functionChanged(fn: FunctionResource, repositoryName: string | undefined): void {
    if (!repositoryName) return;
    const key = `${fn.metadata?.namespace ?? ''}/${repositoryName}`;
    if (this.#tracked.has(key)) this.#evaluate(key);
  }

  /** The repository is gone. */
  forget(namespace: string, name: string): void {
    this.#tracked.delete(`${namespace}/${name}`);
  }

  idle(): Promise<void> {
    return this.#poster.idle();
  }

  close(): Promise<void> {
    return this.#poster.close();
  }

  #evaluate(key: string): void {
    const t = this.#tracked.get(key);
    if (!t) return;
    const functions = t.synced.functions.map(
      (f): RevisionFunction => ({
        name: f.name,
        path: f.path,
        state: f.error ? { kind: 'failed', message: f.error } : kubeFunctionState(this.#o.getFunction(t.namespace, f.name), t.synced.appliedGenerations.get(f.name)),
      }),
    );
    t.reporter.report(t.synced.revision, functions);
  }

  #problem(key: string, message: string): void {
    if (this.#problems.get(key) === message) return;
    this.#problems.set(key, message);
    this.#o.logger.warn(message);
  }
}
