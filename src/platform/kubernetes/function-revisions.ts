// A Function's revisions and pin on Kubernetes (issue 33, ../revisions.ts, docs/rollback.md): revisions
// live in `status.revisions` (the reconciler writes them when a version went live; each carries the
// image and settings that run it again), the pin in the `sless.kube5s.ru/pinned` annotation (a user's
// decision, which neither the git sync nor a status rewrite can lose). Pure.
import { functionSpecDefaults } from './objects/crd-defaults.ts';
import { ANNOTATIONS } from './objects/meta.ts';
import type { FunctionResource } from './objects/resources.ts';
import type { FunctionConfig, FunctionRevisionsItem } from './crd-types.ts';
import { configHashOf, parsePin, type LiveVersion, type Pin, type Revision } from '../revisions.ts';
import { envOf } from './objects/stored-env.ts';

export type KubeRevision = Revision<FunctionConfig>;

/** The revisions in a Function's status (absent: none yet). */
export function revisionsOf(fn: FunctionResource): KubeRevision[] {
  return (fn.status?.revisions ?? []).map((r: FunctionRevisionsItem) => r);
}

/** The pin a rollback left on the Function; a string says why the annotation is not one. */
export function pinOf(fn: FunctionResource): Pin | string | undefined {
  const text = fn.metadata?.annotations?.[ANNOTATIONS.pinned];
  if (text === undefined) return undefined;
  const pin = parsePin(text);
  return typeof pin === 'string' ? `annotation ${ANNOTATIONS.pinned}: ${pin}` : pin;
}

/** The annotation value for a pin. */
export function pinAnnotation(pin: Pin): string {
  return JSON.stringify({ revision: pin.revision, since: pin.since });
}

/** The settings of the Function's spec that make a revision (with its code): what its Deployment runs with. */
export function configOf(fn: FunctionResource): FunctionConfig {
  const spec = fn.spec;
  const { entrypoint, memoryMB, timeoutSec } = functionSpecDefaults(spec);
  return {
    runtime: spec?.runtime ?? 'nodejs20',
    entrypoint,
    memoryMB,
    timeoutSec,
    env: envOf(spec?.env),
    envFromSecrets: [...(spec?.envFromSecrets ?? [])],
  };
}

/** What goes live when the Function's spec serves from `imageRef`. */
export function liveVersionOf(fn: FunctionResource, imageRef: string): LiveVersion<FunctionConfig> {
  const config = configOf(fn);
  const spec = fn.spec;
  const codeHash = spec?.codeHash ?? (spec?.s3Key ? `s3:${spec.s3Bucket ?? ''}/${spec.s3Key}` : '');
  return { codeHash, image: imageRef, ...(spec?.source?.revision ? { commit: spec.source.revision } : {}), configHash: configHashOf(config), config };
}

/**
 * The Function as revision `rev` runs: its spec's settings replaced by the revision's (the runtime stays:
 * the image carries it). Its Deployment is made from this, with the revision's image.
 */
export function functionAtRevision(fn: FunctionResource, rev: KubeRevision): FunctionResource {
  const c = rev.config;
  return {
    ...fn,
    spec: {
      runtime: fn.spec?.runtime ?? 'nodejs20',
      ...fn.spec,
      ...(c.entrypoint !== undefined ? { entrypoint: c.entrypoint } : {}),
      ...(c.memoryMB !== undefined ? { memoryMB: c.memoryMB } : {}),
      ...(c.timeoutSec !== undefined ? { timeoutSec: c.timeoutSec } : {}),
      env: { ...c.env },
      envFromSecrets: [...(c.envFromSecrets ?? [])],
    },
  };
}

