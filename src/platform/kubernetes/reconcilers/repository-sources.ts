// The git source of each FunctionRepository: one GitSource (and snapshot builder) per repository, kept
// across syncs while its url, branch and credentials stay the same, made anew when one of them changes.
// Credentials come from the Secret spec.secretRef names, and only from a Secret made for sless.
import { SnapshotBuilder } from '../../../source/build-snapshot.ts';
import { GitSource, type GitAuth } from '../../../source/git-source.ts';
import { TargetPolicy } from '../../../source/target-policy.ts';
import { GIT_CREDENTIALS_SECRET_TYPE } from '../objects/meta.ts';
import type { RepositoryResource } from '../objects/resources.ts';
import type { ReconcileContext } from './reconcile-context.ts';
import { StalledError } from '../stalled-error.ts';
import type { GitSettings } from '../settings.ts';
import type { AppliedSync } from './unchanged-sync.ts';

export interface SyncState {
  readonly fingerprint: string;
  readonly source: GitSource;
  readonly snapshots: SnapshotBuilder;
  /** What the last wholly Ready full sync applied: the next one may stop after ls-remote (unchanged-sync.ts). */
  applied?: AppliedSync;
}

/** Where the controller's git syncs, and the commit statuses of their repositories, may connect. */
export function gitTargets(git: GitSettings): TargetPolicy {
  return TargetPolicy.publicOnly({
    allow: git.allowedHosts ?? [],
    deny: git.deniedCidrs ?? [],
    ...(git.crossHostRedirects !== undefined ? { crossHostRedirects: git.crossHostRedirects } : {}),
  });
}

export class RepositorySources {
  private readonly sources = new Map<string, SyncState>();
  /** Where syncs may connect: public addresses plus the operator's allowlist. */
  private readonly targets: TargetPolicy;

  constructor(private readonly ctx: ReconcileContext) {
    this.targets = gitTargets(ctx.settings.git ?? {});
  }

  async close(): Promise<void> {
    await Promise.all([...this.sources.values()].map((s) => s.source.close()));
    this.sources.clear();
  }

  /** The repository `key` is gone: its git source closes. */
  async forget(key: string): Promise<void> {
    await this.sources.get(key)?.source.close();
    this.sources.delete(key);
  }

  /** The source of repository `key` for its current url, branch and credentials. */
  async sourceFor(repo: RepositoryResource, key: string): Promise<SyncState> {
    const ctx = this.ctx;
    const spec = repo.spec!;
    const auth = await this.credentials(repo);
    const fingerprint = JSON.stringify([spec.url, spec.branch ?? 'main', auth]);
    const known = this.sources.get(key);
    if (known && known.fingerprint === fingerprint) return known;
    await known?.source.close();
    const state: SyncState = {
      fingerprint,
      source: new GitSource({
        url: spec.url,
        branch: spec.branch ?? 'main',
        cacheDir: ctx.settings.cacheDir,
        auth,
        logger: ctx.logger,
        targets: this.targets,
        ...(ctx.settings.git?.treeLimits ? { treeLimits: ctx.settings.git.treeLimits } : {}),
        ...(ctx.settings.git?.maxFetchBytes
          ? { http: { maxResponseBytes: ctx.settings.git.maxFetchBytes } }
          : {}),
      }),
      snapshots: new SnapshotBuilder(ctx.settings.git?.treeLimits),
    };
    this.sources.set(key, state);
    return state;
  }

  /** The git credentials of spec.secretRef (previews fetch with them too). */
  async credentials(repo: RepositoryResource): Promise<GitAuth | undefined> {
    const secretName = repo.spec?.secretRef?.name;
    if (!secretName) return undefined;
    const namespace = repo.metadata?.namespace ?? '';
    const secret = await this.ctx.kube.readSecret(namespace, secretName);
    if (!secret) {
      throw new StalledError(
        'SecretNotFound',
        `Secret ${namespace}/${secretName} (spec.secretRef) does not exist; create it with type ${GIT_CREDENTIALS_SECRET_TYPE} and username+password or token`,
      );
    }
    if (secret.type !== GIT_CREDENTIALS_SECRET_TYPE) {
      // Its values would go as Basic auth to whatever spec.url names: only Secrets made for sless qualify.
      throw new StalledError(
        'SecretNotMarked',
        `Secret ${namespace}/${secretName} (spec.secretRef) has type ${secret.type}, not ${GIT_CREDENTIALS_SECRET_TYPE}: sless sends only Secrets made for it ` +
          `to a git server; recreate it with that type (kubectl create secret generic ${secretName} --type=${GIT_CREDENTIALS_SECRET_TYPE} --from-literal=token=...)`,
      );
    }
    const data = secret.data;
    if (data.token) return { token: data.token };
    if (data.username !== undefined && data.password !== undefined)
      return { username: data.username, password: data.password };
    return undefined; // only a webhookSecret: the repository is public
  }
}
