// /v1 functions on Kubernetes: Function objects (spec from the input, code fields from the artifact
// store). http_enabled is read from and written to the function's http Triggers (rules.ts).
import { rm } from 'node:fs/promises';
import { TRIGGER_DEFAULTS } from '../../manifest/defaults.ts';
import { functionSettingsOf } from '../records.ts';
import { httpTriggerChanges } from '../rules.ts';
import { PlatformError, type CodeFile, type FunctionInput, type FunctionRecord, type Replicas, type RevisionRecord, type UnpackedCode } from '../types.ts';
import { rollbackTarget } from '../revisions.ts';
import { pinAnnotation, pinOf, revisionsOf } from './function-revisions.ts';
import { revisionRecord } from '../revisions.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import type { FunctionCode } from './function-code.ts';
import { ANNOTATIONS, API_VERSION, LABELS } from './objects/meta.ts';
import type { FunctionResource, TriggerResource } from './objects/resources.ts';
import { functionSpecDefaults } from './objects/crd-defaults.ts';
import { functionRecord, httpEnabledFrom } from './records.ts';
import { API_LABELS, assertApiManaged, ownedBy, type SlessObjects } from './sless-objects.ts';

export interface KubeFunctionsDeps {
  readonly objects: SlessObjects;
  readonly code: FunctionCode;
  readonly publicBaseUrl?: string;
  /** Called after every write that may change what /fn answers for the function. */
  readonly invalidate: (namespace: string, name: string) => void;
  /** The replicas the function's Deployment has, from the serving watches (undefined: not known). */
  readonly replicasOf?: (namespace: string, name: string) => Replicas | undefined;
}

export class KubeFunctions {
  constructor(private readonly deps: KubeFunctionsDeps) {}

  private get objects(): SlessObjects {
    return this.deps.objects;
  }

  private async httpTriggers(namespace: string, fnName?: string): Promise<TriggerResource[]> {
    const triggers = await this.objects.list<TriggerResource>('Trigger', namespace, fnName ? `${LABELS.function}=${fnName}` : undefined);
    return triggers.filter((t) => t.spec?.type === 'http');
  }

  private record(fn: FunctionResource, triggers: readonly TriggerResource[]): FunctionRecord {
    const name = fn.metadata?.name ?? '';
    const replicas = this.deps.replicasOf?.(fn.metadata?.namespace ?? '', name);
    const pin = pinOf(fn);
    return {
      ...functionRecord(fn, { httpEnabled: httpEnabledFrom(triggers, name), publicBaseUrl: this.deps.publicBaseUrl, ...(replicas ? { replicas } : {}) }),
      ...(pin && typeof pin !== 'string' ? { pinned: pin } : {}),
    };
  }

  async list(namespace: string): Promise<FunctionRecord[]> {
    const [functions, triggers] = await Promise.all([this.objects.list<FunctionResource>('Function', namespace), this.httpTriggers(namespace)]);
    return functions.map((fn) => this.record(fn, triggers));
  }

  async get(namespace: string, name: string): Promise<FunctionRecord> {
    const [fn, triggers] = await Promise.all([this.getFn(namespace, name), this.httpTriggers(namespace, name)]);
    return this.record(fn, triggers);
  }

  private getFn(namespace: string, name: string): Promise<FunctionResource> {
    return this.objects.get<FunctionResource>('Function', namespace, name, `function ${namespace}/${name}`);
  }

  async create(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    const what = `function ${namespace}/${input.name}`;
    const body: FunctionResource = {
      apiVersion: API_VERSION,
      kind: 'Function',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS } },
      spec: functionSpec(input),
    };
    const fn = await this.objects.create('Function', namespace, body, what);
    const triggers = await this.applyHttpEnabled(fn, input.httpEnabled);
    this.deps.invalidate(namespace, input.name);
    return this.record(fn, triggers);
  }

  /**
   * Applies a POST/PUT's http_enabled to the function's http Triggers (rules.ts: nothing when left out;
   * false disables them all, or makes a disabled `<fn>-http` when there is none; true enables them all).
   * Answers the function's http Triggers afterwards.
   */
  private async applyHttpEnabled(fn: FunctionResource, httpEnabled: boolean | undefined): Promise<TriggerResource[]> {
    const namespace = fn.metadata?.namespace ?? '';
    const fnName = fn.metadata?.name ?? '';
    const current = (await this.httpTriggers(namespace, fnName)).filter((t) => t.spec?.functionRef === fnName);
    const changes = httpTriggerChanges(
      fnName,
      current.map((t) => ({ name: t.metadata?.name ?? '', enabled: t.spec?.enabled ?? TRIGGER_DEFAULTS.enabled })),
      httpEnabled,
    );
    const after = await Promise.all(
      current.map((t) => {
        const name = t.metadata?.name ?? '';
        if (!changes.set.includes(name)) return t;
        assertApiManaged(t, `trigger ${namespace}/${name}`, 'change http.enabled');
        return this.objects.patch<TriggerResource>('Trigger', namespace, name, { spec: { enabled: httpEnabled } }, `trigger ${namespace}/${name}`);
      }),
    );
    if (changes.create) {
      const body: TriggerResource = {
        apiVersion: API_VERSION,
        kind: 'Trigger',
        metadata: { name: changes.create, namespace, labels: { ...API_LABELS, [LABELS.function]: fnName }, ownerReferences: [ownedBy(fn)] },
        spec: { type: 'http', functionRef: fnName, enabled: false },
      };
      after.push(await this.objects.create('Trigger', namespace, body, `trigger ${namespace}/${changes.create}`));
    }
    return after;
  }

  async update(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    const what = `function ${namespace}/${name}`;
    if (input.name !== name) throw new PlatformError('invalid', `the body names ${input.name} but the path names ${name}; a function cannot be renamed`);
    // PUT semantics: the new spec replaces the old one (a merge patch would keep removed env keys), with
    // the resourceVersion read, retried when someone else wrote in between.
    for (let attempt = 1; ; attempt++) {
      const fn = await this.getFn(namespace, name);
      assertApiManaged(fn, what, 'change its function.yaml');
      const old = fn.spec;
      const spec: FunctionResource['spec'] = { ...functionSpec(input) };
      if (old?.codeHash && old.s3Key) {
        const rebuilt =
          old.runtime !== spec.runtime || functionSpecDefaults(old).entrypoint !== spec.entrypoint
            ? await this.deps.code.save(namespace, name, spec, await this.deps.code.read(fn))
            : { codeHash: old.codeHash, s3Bucket: old.s3Bucket ?? this.deps.code.bucket, s3Key: old.s3Key };
        Object.assign(spec, rebuilt);
      }
      try {
        const replaced = await this.objects.replaceRaw<FunctionResource>('Function', namespace, name, { ...fn, spec });
        const triggers = await this.applyHttpEnabled(replaced, input.httpEnabled);
        this.deps.invalidate(namespace, name);
        return this.record(replaced, triggers);
      } catch (err) {
        if (apiStatusCode(err) === 409 && attempt < 3) continue;
        throw toPlatformError(err, what);
      }
    }
  }

  async delete(namespace: string, name: string): Promise<void> {
    const what = `function ${namespace}/${name}`;
    const fn = await this.getFn(namespace, name);
    assertApiManaged(fn, what, 'remove its folder');
    // Its Triggers, FunctionJobs, Deployment and Service go with it (owner references).
    await this.objects.remove('Function', namespace, name, what);
    this.deps.invalidate(namespace, name);
  }

  /** Packs the unpacked upload into a build context in the store, then removes its folder (whatever the outcome). */
  async uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord> {
    try {
      const what = `function ${namespace}/${name}`;
      const fn = await this.getFn(namespace, name);
      assertApiManaged(fn, what, 'push the code');
      if (!fn.spec) throw new PlatformError('invalid', `${what} has no spec; recreate it`);
      const ref = await this.deps.code.save(namespace, name, fn.spec, code);
      const patched = await this.objects.patch<FunctionResource>('Function', namespace, name, { spec: ref }, what);
      return this.record(patched, await this.httpTriggers(namespace, name));
    } finally {
      await rm(code.dir, { recursive: true, force: true });
    }
  }

  async listRevisions(namespace: string, name: string): Promise<RevisionRecord[]> {
    return revisionsOf(await this.getFn(namespace, name)).map(revisionRecord);
  }

  /**
   * Pins the function to a kept revision: the `sless.kube5s.ru/pinned` annotation (function-revisions.ts
   * says why there); the Function reconciler then runs that revision's image at once. Works alike for git
   * and /v1 functions: the pin is no part of what git or a PUT writes.
   */
  async rollback(namespace: string, name: string, revision: number | undefined): Promise<FunctionRecord> {
    const what = `function ${namespace}/${name}`;
    const fn = await this.getFn(namespace, name);
    const target = rollbackTarget(name, revisionsOf(fn), revision);
    if (!target.ok) throw new PlatformError('invalid', target.message);
    const pin = pinAnnotation({ revision: target.revision.revision, since: new Date().toISOString() });
    const patched = await this.objects.patch<FunctionResource>('Function', namespace, name, { metadata: { annotations: { [ANNOTATIONS.pinned]: pin } } }, what);
    this.deps.invalidate(namespace, name);
    return this.record(patched, await this.httpTriggers(namespace, name));
  }

  /** Removes the pin (nothing to do when there is none): the spec's own version goes live again. */
  async undoRollback(namespace: string, name: string): Promise<FunctionRecord> {
    const what = `function ${namespace}/${name}`;
    const fn = await this.getFn(namespace, name);
    const patched =
      fn.metadata?.annotations?.[ANNOTATIONS.pinned] === undefined
        ? fn
        : await this.objects.patch<FunctionResource>('Function', namespace, name, { metadata: { annotations: { [ANNOTATIONS.pinned]: null } } }, what);
    this.deps.invalidate(namespace, name);
    return this.record(patched, await this.httpTriggers(namespace, name));
  }

  async getSource(namespace: string, name: string): Promise<CodeFile[]> {
    return this.deps.code.read(await this.getFn(namespace, name));
  }
}

function functionSpec(input: FunctionInput): NonNullable<FunctionResource['spec']> {
  const s = functionSettingsOf(input);
  return {
    runtime: s.runtime,
    entrypoint: s.entrypoint,
    memoryMB: s.memoryMb,
    timeoutSec: s.timeoutSec,
    env: { ...s.env },
    envFromSecrets: [...s.envFromSecrets],
    ...(s.scale === undefined ? {} : { scale: { ...s.scale } }),
  };
}
