// A Function's env as stored: a map, or the old CRD's list of {name, value}. Beside the object builders
// that read it (the workload's env), below records.ts and the reconcilers that read it too.
import type { FunctionResource } from './resources.ts';

type StoredEnv = NonNullable<FunctionResource['spec']>['env'];

/** A Function's env as a map, whichever shape it is stored in (a map, or the old CRD's list of {name, value}). */
export function envOf(env: StoredEnv | undefined): Record<string, string> {
  if (!env) return {};
  if (!Array.isArray(env)) return { ...env };
  const out: Record<string, string> = {};
  for (const e of env) if (typeof e?.name === 'string') out[e.name] = e.value ?? '';
  return out;
}
