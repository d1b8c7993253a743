// What the CRDs fill in for an absent field (crds/*.yaml), in the objects' own spellings: derived from
// manifest/defaults.ts, the one source of every default (a test holds the CRDs to the same values).
import { FUNCTION_DEFAULTS, REPOSITORY_DEFAULTS, TRIGGER_DEFAULTS } from '../../../manifest/defaults.ts';

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
