// Labels, owner references and deterministic names shared by every object builder.
import { createHash } from 'node:crypto';
import { ANNOTATION_REQUESTED_AT, API_VERSION, GROUP, LABEL_REPOSITORY } from '../crd-types.ts';

export { API_VERSION, GROUP };
export const FIELD_MANAGER = 'sless';
export const FINALIZER = `${GROUP}/cleanup`;

export const LABELS = {
  repository: LABEL_REPOSITORY,
  function: `${GROUP}/function`,
  functionNamespace: `${GROUP}/function-namespace`,
  buildKey: `${GROUP}/build-key`,
  trigger: `${GROUP}/trigger`,
  functionJob: `${GROUP}/function-job`,
  component: `${GROUP}/component`,
  managedBy: 'app.kubernetes.io/managed-by',
} as const;

export const ANNOTATIONS = {
  requestedAt: ANNOTATION_REQUESTED_AT,
  buildKey: `${GROUP}/build-key`,
  runId: `${GROUP}/run-id`,
} as const;

export interface ObjectRef {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
  blockOwnerDeletion: boolean;
}

/** The owner reference that makes `owner` the managing controller of an object (GC deletes it with the owner). */
export function controllerRef(owner: ObjectRef, kind: string): OwnerReference {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name || !uid) throw new Error(`cannot reference ${kind} ${name ?? '?'} as owner: it has no name or uid yet`);
  return { apiVersion: API_VERSION, kind, name, uid, controller: true, blockOwnerDeletion: true };
}

/**
 * A DNS-1123 label (<= max chars) made of `parts` joined by '-'. When too long, the joined name is cut and
 * a short hash of the full name is appended, so distinct inputs stay distinct and the result is stable.
 */
export function dnsLabel(parts: readonly string[], max = 63): string {
  const full = parts.join('-').toLowerCase();
  if (full.length <= max) return full;
  const hash = shortHash(full, 8);
  return `${full.slice(0, max - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}

export function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** Labels every object the controller creates for one function carries. */
export function functionLabels(namespace: string, name: string): Record<string, string> {
  return { [LABELS.managedBy]: 'sless', [LABELS.function]: name, [LABELS.functionNamespace]: namespace };
}
