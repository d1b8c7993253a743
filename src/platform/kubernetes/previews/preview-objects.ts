// What a preview namespace and the objects in it look like (docs/previews.md "Kubernetes"). Pure.
//   the Namespace: labelled with its base namespace, PR number and repository, so the controller
//     recognises its own preview (and never deletes or reuses a namespace it did not make);
//   a built function's objects: those a sync of the watched branch makes for the folder, without the
//     ownerReference (a namespaced owner in another namespace would make the garbage collector delete
//     them at once: the repository's finalizer removes the namespace instead), with the preview labels;
//     schedules, queue triggers and jobs only with `schedules: true`; env_from_secrets only with
//     `secrets: inherit` (the Secrets are copied into the preview namespace).
import { GROUP } from '../crd-types.ts';
import type { PreviewSettings } from '../../../preview/preview-settings.ts';
import { LABELS } from '../objects/meta.ts';
import type { RepositoryObjects } from '../objects/repository-objects.ts';
import type { V1Namespace } from '@kubernetes/client-node';

export const PREVIEW_LABELS = {
  of: `${GROUP}/preview-of`,
  number: `${GROUP}/preview-number`,
  repository: `${GROUP}/preview-repository`,
} as const;

export interface PreviewIdentity {
  /** The base namespace (the repository's). */
  readonly namespace: string;
  readonly repository: string;
  readonly number: number;
}

export function previewNamespaceLabels(p: PreviewIdentity): Record<string, string> {
  return { [PREVIEW_LABELS.of]: p.namespace, [PREVIEW_LABELS.number]: String(p.number), [PREVIEW_LABELS.repository]: p.repository, [LABELS.managedBy]: 'sless' };
}

export function previewNamespaceObject(name: string, p: PreviewIdentity): V1Namespace {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: previewNamespaceLabels(p) } };
}

/** Whether namespace labels say it is exactly this preview (anything else is not ours to reuse or delete). */
export function isPreviewNamespace(labels: Readonly<Record<string, string>> | undefined, p: PreviewIdentity): boolean {
  return labels?.[PREVIEW_LABELS.of] === p.namespace && labels[PREVIEW_LABELS.number] === String(p.number) && labels[PREVIEW_LABELS.repository] === p.repository;
}

/** Whether an object's labels say the preview made it (previewObjects labels what it applies so). */
export function isPreviewObject(labels: Readonly<Record<string, string>> | undefined, p: PreviewIdentity): boolean {
  return labels?.[PREVIEW_LABELS.of] === p.namespace && labels[PREVIEW_LABELS.number] === String(p.number);
}

/** A folder's objects as the preview applies them. */
export function previewObjects(objects: RepositoryObjects, p: PreviewIdentity, settings: Pick<PreviewSettings, 'schedules' | 'secrets'>): RepositoryObjects {
  const meta = <T extends { metadata?: { labels?: Record<string, string>; ownerReferences?: unknown } }>(o: T): T => {
    const { ownerReferences: _dropped, ...metadata } = o.metadata ?? {};
    return { ...o, metadata: { ...metadata, labels: { ...metadata.labels, [PREVIEW_LABELS.of]: p.namespace, [PREVIEW_LABELS.number]: String(p.number) } } };
  };
  const fn = meta(objects.fn);
  const spec = fn.spec;
  return {
    fn: settings.secrets === 'inherit' || !spec ? fn : { ...fn, spec: { ...spec, envFromSecrets: [] } },
    triggers: objects.triggers.filter((t) => settings.schedules || t.spec?.type === 'http').map(meta),
    jobs: settings.schedules ? objects.jobs.map(meta) : [],
  };
}
