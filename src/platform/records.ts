// What a Platform fills in when a /v1 FunctionInput leaves a field out: the defaults a function.yaml
// gets too, so a function made through /v1 reads back the same on every platform.
import { FUNCTION_DEFAULTS } from '../manifest/defaults.ts';
import { compactScale } from '../manifest/scale-spec.ts';
import type { FunctionInput, FunctionRecord } from './types.ts';

/** The same values as the manifest schema's and the CRDs' defaults (one source: manifest/defaults.ts). */
export const FUNCTION_INPUT_DEFAULTS = FUNCTION_DEFAULTS;

/** The fields of a FunctionRecord that a FunctionInput decides. */
export type FunctionSettings = Pick<
  FunctionRecord,
  'name' | 'runtime' | 'entrypoint' | 'memoryMb' | 'timeoutSec' | 'env' | 'envFromSecrets' | 'httpEnabled' | 'scale'
>;

export function functionSettingsOf(input: FunctionInput): FunctionSettings {
  return {
    name: input.name,
    runtime: input.runtime,
    entrypoint: input.entrypoint ?? FUNCTION_INPUT_DEFAULTS.entrypoint,
    memoryMb: input.memoryMb ?? FUNCTION_INPUT_DEFAULTS.memoryMb,
    timeoutSec: input.timeoutSec ?? FUNCTION_INPUT_DEFAULTS.timeoutSec,
    env: input.env ?? {},
    envFromSecrets: input.envFromSecrets ?? [],
    httpEnabled: input.httpEnabled ?? FUNCTION_INPUT_DEFAULTS.httpEnabled,
    ...(compactScale(input.scale) === undefined ? {} : { scale: compactScale(input.scale) }),
  };
}
