// How LocalPlatform puts pull-request previews (local-previews.ts) in front of its functions: which
// LocalPreviews it builds from `--previews`, and how /fn and the scaler see a preview namespace (a
// function the PR leaves alone is production's own, one it built the preview's, a removed one 404).
import type { CommitStatusPoster } from '../../commit-status/commit-status-poster.ts';
import type { StatusTarget } from '../../commit-status/status-target.ts';
import type { PreviewSettings } from '../../preview/preview-settings.ts';
import type { Endpoint, FunctionScaling } from '../types.ts';
import { LocalPreviews } from './local-previews.ts';
import type { PreviewReader } from '../../source/preview-source.ts';
import type { SyncParts } from './repository-sync.ts';
import { secretEnvFrom } from './secrets-dir.ts';

/** `--previews` (LocalPlatformOptions.previews); statuses go through `status` when given. */
export interface LocalPreviewsOption {
  readonly settings: PreviewSettings;
  readonly reader: PreviewReader;
  readonly status?: { readonly poster: CommitStatusPoster; readonly target: StatusTarget };
}

/** The previews of the followed repository, over the same sync parts as its own sync; none without `--previews`. */
export function openLocalPreviews(option: LocalPreviewsOption | undefined, parts: SyncParts, repoName: string, publicUrl: () => string): LocalPreviews | undefined {
  if (!option) return undefined;
  return new LocalPreviews({
    ...parts,
    repoName,
    settings: option.settings,
    reader: option.reader,
    publicUrl,
    ...(option.status ? { status: option.status } : {}),
  });
}

/**
 * /fn's endpoint for `requested`/`name`: a preview's answer when it has one (404, not ready), else
 * the function of the namespace that answers (production's for a function the PR leaves alone).
 */
export function resolveThroughPreviews(
  previews: LocalPreviews | undefined,
  requested: string,
  name: string,
  resolve: (namespace: string, name: string) => Endpoint,
): Endpoint {
  const route = previews?.route(requested, name);
  if (route && 'endpoint' in route) return route.endpoint;
  return resolve(route?.namespace ?? requested, name);
}

/** env_from_secrets from `--secrets-dir`, except in a preview without `secrets: inherit` (its code is not reviewed yet). */
export function secretEnvThroughPreviews(secretsDir: string, previews: () => LocalPreviews | undefined) {
  return (namespace: string, secrets: readonly string[]): Promise<Record<string, string>> =>
    previews()?.withholdsSecrets(namespace) ? Promise.resolve({}) : secretEnvFrom(secretsDir, secrets);
}

/** A call at a preview URL that production answers counts for, and wakes, the production function. */
export function scalingThroughPreviews(previews: LocalPreviews | undefined, scaler: FunctionScaling): FunctionScaling {
  const at = (namespace: string, name: string): string => {
    const route = previews?.route(namespace, name);
    return route && 'namespace' in route ? route.namespace : namespace;
  };
  return {
    requestBegan: (namespace, name) => scaler.requestBegan(at(namespace, name), name),
    wake: (namespace, name) => scaler.wake(at(namespace, name), name),
  };
}
