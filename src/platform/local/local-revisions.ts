// `sless dev`'s revisions (issue 33, ../revisions.ts): what a revision needs to run again with no build
// (its prepared folder's key and the settings a process starts with), kept in state.json with the
// function, and the running spec of a pinned function.
import type { Runtime } from '../../manifest/types.ts';
import { configHashOf, type LiveVersion, type Revision } from '../revisions.ts';
import type { DeploySpec } from './function-runner.ts';

/** A revision's config in `sless dev`: the prepared folder (builds/<buildKey>) and the process settings. */
export interface LocalRevisionConfig {
  readonly buildKey: string;
  readonly runtime: Runtime;
  readonly entrypoint: string;
  readonly memoryMb: number;
  readonly timeoutSec: number;
  readonly env: Readonly<Record<string, string>>;
}

export type LocalRevision = Revision<LocalRevisionConfig>;

/** The prefix of `sless dev`'s image references (`local:<build key>`), also in records and the build log. */
export function localImage(buildKey: string): string {
  return `local:${buildKey}`;
}

/**
 * What went live when `spec` started from `buildKey`. The config's identity leaves out the folder (it
 * follows from code and runtime), http (a trigger's state, not the version's) and scale (never restarts).
 */
export function liveVersionOf(spec: DeploySpec, buildKey: string, commit: string | undefined): LiveVersion<LocalRevisionConfig> {
  const settings = { runtime: spec.runtime, entrypoint: spec.entrypoint, memoryMb: spec.memoryMb, timeoutSec: spec.timeoutSec, env: spec.env };
  return {
    codeHash: spec.codeHash,
    image: localImage(buildKey),
    ...(commit ? { commit } : {}),
    configHash: configHashOf(settings),
    config: { buildKey, ...settings },
  };
}

/** The spec that runs revision `rev` of a function whose current spec is `current` (http and scale stay the function's). */
export function specOfRevision(current: DeploySpec, rev: LocalRevision): DeploySpec {
  const { buildKey: _key, ...settings } = rev.config;
  return { ...current, ...settings, codeHash: rev.codeHash };
}


/** The prepared folders every kept revision runs from: pruning keeps them. */
export function revisionBuildKeys(functions: readonly { readonly revisions?: readonly LocalRevision[] }[]): string[] {
  return functions.flatMap((f) => (f.revisions ?? []).map((r) => r.config.buildKey));
}
