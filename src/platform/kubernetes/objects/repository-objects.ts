// What one FunctionRepository wants to exist for one function folder: the Function, its Triggers (one
// http, one per schedule, one per queue) and its FunctionJobs. Applied with server-side apply; whatever a repository owns
// and no longer wants is pruned.
import type { FunctionManifest } from '../../../manifest/types.ts';
import { cronTriggerName, functionJobName, httpTriggerName, queueTriggerName } from '../../../manifest/generated-names.ts';
import { API_VERSION, LABELS, controllerRef } from './meta.ts';
import type { FunctionJobResource, FunctionResource, RepositoryResource, TriggerResource } from './resources.ts';

export interface FunctionSource {
  readonly manifest: FunctionManifest;
  readonly codeHash: string;
  /** Repo-relative folder of function.yaml. */
  readonly path: string;
  readonly revision: string;
  readonly s3Bucket: string;
  readonly s3Key: string;
}

export interface RepositoryObjects {
  readonly fn: FunctionResource;
  readonly triggers: TriggerResource[];
  readonly jobs: FunctionJobResource[];
}

export { cronTriggerName, functionJobName, httpTriggerName };

function ownedMeta(repo: RepositoryResource, name: string, fnName: string) {
  const repoName = repo.metadata?.name ?? '';
  return {
    name,
    namespace: repo.metadata?.namespace,
    labels: { [LABELS.repository]: repoName, [LABELS.function]: fnName, [LABELS.managedBy]: 'sless' },
    ownerReferences: [controllerRef(repo, 'FunctionRepository')],
  };
}

function eventJSON(event: unknown): string | undefined {
  return event === undefined ? undefined : JSON.stringify(event);
}

export function repositoryObjects(repo: RepositoryResource, src: FunctionSource): RepositoryObjects {
  const m = src.manifest;
  const fn: FunctionResource = {
    apiVersion: API_VERSION,
    kind: 'Function',
    metadata: ownedMeta(repo, m.name, m.name),
    spec: {
      runtime: m.runtime,
      entrypoint: m.entrypoint,
      memoryMB: m.memoryMb,
      timeoutSec: m.timeoutSec,
      env: { ...m.env },
      envFromSecrets: [...m.envFromSecrets],
      ...(m.scale === undefined ? {} : { scale: { ...m.scale } }),
      codeHash: src.codeHash,
      s3Bucket: src.s3Bucket,
      s3Key: src.s3Key,
      source: { repository: repo.metadata?.name ?? '', path: src.path, revision: src.revision },
    },
  };
  const triggers: TriggerResource[] = [
    {
      apiVersion: API_VERSION,
      kind: 'Trigger',
      metadata: ownedMeta(repo, httpTriggerName(m.name), m.name),
      spec: { type: 'http', functionRef: m.name, enabled: m.http.enabled },
    },
    ...m.schedules.map(
      (s): TriggerResource => ({
        apiVersion: API_VERSION,
        kind: 'Trigger',
        metadata: ownedMeta(repo, cronTriggerName(m.name, s.name), m.name),
        spec: {
          type: 'cron',
          functionRef: m.name,
          schedule: s.cron,
          ...(s.timezone ? { timezone: s.timezone } : {}),
          ...(s.event !== undefined ? { eventJSON: eventJSON(s.event) } : {}),
          enabled: true,
        },
      }),
    ),
    ...(m.queues ?? []).map(
      ({ name, ...queue }): TriggerResource => ({
        apiVersion: API_VERSION,
        kind: 'Trigger',
        metadata: ownedMeta(repo, queueTriggerName(m.name, name), m.name),
        spec: { type: 'queue', functionRef: m.name, queue: { ...queue }, enabled: true },
      }),
    ),
  ];
  const jobs = m.jobs.map(
    (j): FunctionJobResource => ({
      apiVersion: API_VERSION,
      kind: 'FunctionJob',
      metadata: ownedMeta(repo, functionJobName(m.name, j.name), m.name),
      spec: {
        functionRef: m.name,
        runID: j.runId,
        ...(j.event !== undefined ? { eventJSON: eventJSON(j.event) } : {}),
      },
    }),
  );
  return { fn, triggers, jobs };
}
