// What the CRDs fill in for an absent field (crds/*.yaml), in the objects' own spellings: derived from
// manifest/defaults.ts, the one source of every default (a test holds the CRDs to the same values).
import { FUNCTION_DEFAULTS, REPOSITORY_DEFAULTS, TRIGGER_DEFAULTS } from '../../../manifest/defaults.ts';
import type { FunctionRepositorySpec, FunctionSpec } from '../crd-types.ts';

export const CRD_DEFAULTS = {
  entrypoint: FUNCTION_DEFAULTS.entrypoint,
  memoryMB: FUNCTION_DEFAULTS.memoryMb,
  timeoutSec: FUNCTION_DEFAULTS.timeoutSec,
  branch: REPOSITORY_DEFAULTS.branch,
  path: REPOSITORY_DEFAULTS.path,
  interval: REPOSITORY_DEFAULTS.interval,
} as const;

/** The spec defaults per owned kind, filled into our side before comparing with a live object (owned-applier.ts). */
export const CRD_SPEC_DEFAULTS = {
  Function: { entrypoint: CRD_DEFAULTS.entrypoint, memoryMB: CRD_DEFAULTS.memoryMB, timeoutSec: CRD_DEFAULTS.timeoutSec },
  Trigger: { enabled: TRIGGER_DEFAULTS.enabled },
  /** runID 0: never run (a FunctionJob made without one waits for its first runID). */
  FunctionJob: { runID: 0 },
} as const;

/** The fields of a Function's spec that its CRD defaults. */
type DefaultedFunctionFields = Pick<FunctionSpec, 'entrypoint' | 'memoryMB' | 'timeoutSec'>;

/**
 * A Function spec's entrypoint, memoryMB and timeoutSec, with what the CRD fills in for an absent one:
 * the API server does so on every write, so only a spec built in memory (a /v1 input, a test's object)
 * lacks them. The one place a Function object's defaults are read.
 */
export function functionSpecDefaults(spec: DefaultedFunctionFields | undefined): Required<DefaultedFunctionFields> {
  return {
    entrypoint: spec?.entrypoint ?? CRD_DEFAULTS.entrypoint,
    memoryMB: spec?.memoryMB ?? CRD_DEFAULTS.memoryMB,
    timeoutSec: spec?.timeoutSec ?? CRD_DEFAULTS.timeoutSec,
  };
}

/** The fields of a FunctionRepository's spec that its CRD defaults. */
type DefaultedRepositoryFields = Pick<FunctionRepositorySpec, 'branch' | 'path' | 'interval' | 'suspend' | 'prune'>;

/** A FunctionRepository spec's defaulted fields, filled in as its CRD does (see functionSpecDefaults). */
export function repositorySpecDefaults(spec: DefaultedRepositoryFields | undefined): Required<DefaultedRepositoryFields> {
  return {
    branch: spec?.branch ?? CRD_DEFAULTS.branch,
    path: spec?.path ?? CRD_DEFAULTS.path,
    interval: spec?.interval ?? CRD_DEFAULTS.interval,
    suspend: spec?.suspend ?? REPOSITORY_DEFAULTS.suspend,
    prune: spec?.prune ?? REPOSITORY_DEFAULTS.prune,
  };
}
