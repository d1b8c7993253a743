// The base namespace's ResourceQuota and LimitRange objects in a preview namespace (docs/previews.md
// "Kubernetes"): a tenant bounded by its operator stays bounded in its pull requests' previews. Pure: what
// to create, update and delete in the preview so its copies equal the base's objects, by kind and name.
//   a copy carries the base object's name and spec, the preview labels and managed-by=sless;
//   an object of the preview without those labels is the preview's own (an operator's policy engine may
//     put one in every namespace): never updated nor deleted, even where a base object has its name;
//   a copy whose base object is gone is deleted.
import { isDeepStrictEqual } from 'node:util';
import { LABELS } from '../objects/meta.ts';
import { isPreviewObject, PREVIEW_LABELS, type PreviewIdentity } from './preview-objects.ts';

export const LIMIT_KINDS = ['ResourceQuota', 'LimitRange'] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

/** One ResourceQuota or LimitRange as listed: what the decision reads of it. */
export interface LimitObject {
  readonly kind: LimitKind;
  readonly name: string;
  readonly spec: unknown;
  readonly labels?: Readonly<Record<string, string>>;
  /** The listed version, for the conditional update of a copy. */
  readonly resourceVersion?: string;
}

/** A copy to write into the preview: the base object's kind, name and spec under the preview labels. */
export interface LimitCopy {
  readonly kind: LimitKind;
  readonly name: string;
  readonly spec: unknown;
  readonly labels: Readonly<Record<string, string>>;
  /** For an update: the copy's listed version (the write fails rather than overwrite a newer one). */
  readonly resourceVersion?: string;
}

export interface LimitCopyPlan {
  readonly create: readonly LimitCopy[];
  readonly update: readonly LimitCopy[];
  readonly delete: readonly Pick<LimitObject, 'kind' | 'name'>[];
  /** Base objects not copied: the preview holds its own object of that kind and name. */
  readonly kept: readonly Pick<LimitObject, 'kind' | 'name'>[];
}

/** The labels of a copy: the ones previewObjects gives a preview's objects, and managed-by=sless. */
export function limitCopyLabels(p: PreviewIdentity): Record<string, string> {
  return { [PREVIEW_LABELS.of]: p.namespace, [PREVIEW_LABELS.number]: String(p.number), [LABELS.managedBy]: 'sless' };
}

/** Whether an object of the preview namespace is a copy this preview made (anything else is not ours). */
export function isLimitCopy(labels: Readonly<Record<string, string>> | undefined, p: PreviewIdentity): boolean {
  return isPreviewObject(labels, p) && labels?.[LABELS.managedBy] === 'sless';
}

/** What makes the preview's copies equal to `base`; `preview` is every object of those kinds in the preview namespace. */
export function planLimitCopies(base: readonly LimitObject[], preview: readonly LimitObject[], p: PreviewIdentity): LimitCopyPlan {
  const key = (o: Pick<LimitObject, 'kind' | 'name'>) => `${o.kind}/${o.name}`;
  const live = new Map(preview.map((o) => [key(o), o]));
  const wanted = new Set(base.map(key));
  const labels = limitCopyLabels(p);
  const create: LimitCopy[] = [];
  const update: LimitCopy[] = [];
  const kept: Pick<LimitObject, 'kind' | 'name'>[] = [];
  for (const b of base) {
    const copy = { kind: b.kind, name: b.name, spec: b.spec, labels };
    const current = live.get(key(b));
    if (!current) create.push(copy);
    else if (!isLimitCopy(current.labels, p)) kept.push({ kind: b.kind, name: b.name });
    else if (!isDeepStrictEqual(current.spec ?? {}, b.spec ?? {})) {
      update.push({ ...copy, ...(current.resourceVersion ? { resourceVersion: current.resourceVersion } : {}) });
    }
  }
  const remove = preview.filter((o) => isLimitCopy(o.labels, p) && !wanted.has(key(o))).map((o) => ({ kind: o.kind, name: o.name }));
  return { create, update, delete: remove, kept };
}

