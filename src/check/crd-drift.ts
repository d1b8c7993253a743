// Whether the CRD the cluster serves is the one in crds/ (pure): the same versions, each served and
// stored as in the file, with the same schema. The API server keeps a CRD's schema as it was applied,
// so any difference means the cluster has another release's CRD.
import { isDeepStrictEqual } from 'node:util';

interface CrdVersion {
  readonly name?: string;
  readonly served?: boolean;
  readonly storage?: boolean;
  readonly schema?: { readonly openAPIV3Schema?: unknown };
  readonly subresources?: unknown;
}
export interface CrdLike {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly versions?: readonly CrdVersion[] };
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type?: string; readonly status?: string }> };
}

/** Why `live` differs from `wanted` (one line), or undefined when it is current. */
export function crdDrift(wanted: CrdLike, live: CrdLike): string | undefined {
  const established = live.status?.conditions?.find((c) => c.type === 'Established');
  if (established && established.status !== 'True') return 'not Established yet';
  const liveVersions = new Map((live.spec?.versions ?? []).map((v) => [v.name, v]));
  for (const w of wanted.spec?.versions ?? []) {
    const l = liveVersions.get(w.name);
    if (!l) return `has no version ${w.name ?? '?'}`;
    if (Boolean(l.served) !== Boolean(w.served) || Boolean(l.storage) !== Boolean(w.storage)) return `version ${w.name ?? '?'} is served/stored differently`;
    if (!isDeepStrictEqual(l.schema?.openAPIV3Schema, w.schema?.openAPIV3Schema)) return `version ${w.name ?? '?'} has another schema (an older or newer release)`;
    if (!isDeepStrictEqual(l.subresources ?? {}, w.subresources ?? {})) return `version ${w.name ?? '?'} has other subresources`;
  }
  return undefined;
}
