// Labels, owner references and deterministic names shared by every object builder.
import { ANNOTATION_REQUESTED_AT, API_VERSION, GROUP, LABEL_REPOSITORY } from '../crd-types.ts';

export { API_VERSION, GROUP };
/** Defined with the tenant rules (its one home), which must not import this adapter. */
export { GIT_CREDENTIALS_SECRET_TYPE } from '../../tenant-rules.ts';
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

/** The label the Job controller puts on the pods of a Job (the Job's name). */
export const JOB_NAME_LABEL = 'batch.kubernetes.io/job-name';

export const ANNOTATIONS = {
  requestedAt: ANNOTATION_REQUESTED_AT,
  /** Beside requestedAt when a push webhook asked for the sync: the commit it named (a hint; the sync checks it). */
  requestedRevision: `${GROUP}/requestedRevision`,
  buildKey: `${GROUP}/build-key`,
  runId: `${GROUP}/run-id`,
  /** On Triggers made through POST /v1/.../triggers (tells them from the `<fn>-http` sless made itself before). */
  clientTrigger: `${GROUP}/client-trigger`,
  /** Hash of the form we last applied to an owned workload (objects/drift.ts stamped/upToDate). */
  appliedHash: `${GROUP}/applied-hash`,
  /**
   * On a Function a rollback pinned: `{"revision": N, "since": time}` (docs/rollback.md). An annotation, not
   * spec or status: the git sync's server-side apply never set it, so its applies never remove it; /v1's
   * PUT keeps metadata; and a status can be rebuilt, a user's decision cannot.
   */
  pinned: `${GROUP}/pinned`,
  /**
   * On a function's Deployment while its http serving is switched off: /fn answers 503 and never wakes it
   * (scaling/workload-replicas.ts decides its replicas: 0, or its floor when queue Triggers need it running).
   */
  httpDisabled: `${GROUP}/http-disabled`,
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

export { dnsLabel, shortHash } from '../../../manifest/generated-names.ts';

/** Labels every object the controller creates for one function carries. */
export function functionLabels(namespace: string, name: string): Record<string, string> {
  return { [LABELS.managedBy]: 'sless', [LABELS.function]: name, [LABELS.functionNamespace]: namespace };
}
