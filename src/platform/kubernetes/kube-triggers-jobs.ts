// /v1 triggers and jobs on Kubernetes: Trigger and FunctionJob objects owned by their Function (so they
// go with it), refused for objects a FunctionRepository generates.
import { JOB_DEFAULTS, TRIGGER_DEFAULTS } from '../../manifest/defaults.ts';
import { queueSettingsOf } from '../../manifest/queue-schema.ts';
import { triggerInputProblem } from '../rules.ts';
import { PlatformError, type JobInput, type JobRecord, type TriggerInput, type TriggerRecord } from '../types.ts';
import { httpTriggerName } from '../../manifest/generated-names.ts';
import { ANNOTATIONS, API_VERSION, LABELS } from './objects/meta.ts';
import type { FunctionJobResource, FunctionResource, TriggerResource } from './objects/resources.ts';
import { jobRecord, repositoryOf, triggerRecord } from './records.ts';
import { namespaceQuotaProblem } from './namespace-quotas.ts';
import type { ResolvedControllerSettings } from './settings.ts';
import { API_LABELS, assertApiManaged, ownedBy, type SlessObjects } from './sless-objects.ts';

export interface KubeTriggersAndJobsDeps {
  readonly objects: SlessObjects;
  /** Called after every write that may change what /fn answers for the function. */
  readonly invalidate: (namespace: string, name: string) => void;
  /** Per-namespace caps on cron schedules and jobs (namespace-quotas.ts). */
  readonly limits: Pick<ResolvedControllerSettings['limits'], 'schedulesPerNamespace' | 'jobsPerNamespace'>;
}

export class KubeTriggersAndJobs {
  constructor(private readonly deps: KubeTriggersAndJobsDeps) {}

  private get objects(): SlessObjects {
    return this.deps.objects;
  }

  async listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return (await this.objects.list<TriggerResource>('Trigger', namespace)).map(triggerRecord);
  }

  async getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return triggerRecord(await this.objects.get<TriggerResource>('Trigger', namespace, name, `trigger ${namespace}/${name}`));
  }

  async createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    const what = `trigger ${namespace}/${input.name}`;
    const problem = triggerInputProblem(input);
    if (problem) throw new PlatformError('invalid', problem);
    const fn = await this.functionFor(namespace, input.functionRef, what);
    if (input.type === 'cron') {
      const held = (await this.objects.list<TriggerResource>('Trigger', namespace)).filter((t) => t.spec?.type === 'cron').length;
      const cap = this.deps.limits.schedulesPerNamespace;
      const over = namespaceQuotaProblem({ namespace, what: 'schedules', adding: 1, held, cap, setting: 'SLESS_MAX_SCHEDULES_PER_NAMESPACE' });
      if (over) throw new PlatformError('quota_exceeded', `${over}; delete one first`);
    }
    if (input.type === 'http') await this.removeLegacyHttpTrigger(namespace, input.functionRef, input.name);
    const body: TriggerResource = {
      apiVersion: API_VERSION,
      kind: 'Trigger',
      metadata: {
        name: input.name,
        namespace,
        labels: { ...API_LABELS, [LABELS.function]: input.functionRef },
        annotations: { [ANNOTATIONS.clientTrigger]: 'true' },
        ownerReferences: [ownedBy(fn)],
      },
      spec: {
        type: input.type,
        functionRef: input.functionRef,
        ...(input.schedule !== undefined ? { schedule: input.schedule } : {}),
        ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
        ...(input.eventJson !== undefined ? { eventJSON: input.eventJson } : {}),
        ...(input.queue ? { queue: { ...queueSettingsOf(input.queue) } } : {}),
        enabled: input.enabled ?? TRIGGER_DEFAULTS.enabled,
      },
    };
    const created = await this.objects.create('Trigger', namespace, body, what);
    this.deps.invalidate(namespace, input.functionRef);
    return triggerRecord(created);
  }

  /**
   * Before this version, every function made through /v1 got an enabled `<fn>-http` Trigger of its own
   * (it carried http_enabled). Next to a client's http Trigger it would keep the function serving after
   * the client disabled its own, so once a client manages the function's http Triggers it goes. A
   * disabled one stays: it is what http_enabled: false left, and the rule counts it.
   */
  private async removeLegacyHttpTrigger(namespace: string, fnName: string, except: string): Promise<void> {
    const name = httpTriggerName(fnName);
    if (name === except) return;
    const t = await this.objects.find<TriggerResource>('Trigger', namespace, name);
    if (!t || repositoryOf(t) || t.metadata?.annotations?.[ANNOTATIONS.clientTrigger] || t.spec?.type !== 'http') return;
    if (t.spec.functionRef !== fnName || t.spec.enabled === false) return;
    await this.objects.remove('Trigger', namespace, name, `trigger ${namespace}/${name}`);
  }

  /** The Function a new Trigger or FunctionJob refers to; a missing one makes the input invalid. */
  private async functionFor(namespace: string, fnName: string, what: string): Promise<FunctionResource> {
    const fn = await this.objects.find<FunctionResource>('Function', namespace, fnName);
    if (!fn) throw new PlatformError('invalid', `${what} names function ${fnName}, which does not exist in ${namespace}`);
    return fn;
  }

  async setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    const what = `trigger ${namespace}/${name}`;
    const t = await this.objects.get<TriggerResource>('Trigger', namespace, name, what);
    // A sync would put a repository's trigger back as function.yaml says.
    assertApiManaged(t, what, 'change http.enabled or the schedule');
    if (t.spec?.type === 'http' && t.spec.functionRef) await this.removeLegacyHttpTrigger(namespace, t.spec.functionRef, name);
    const patched = await this.objects.patch<TriggerResource>('Trigger', namespace, name, { spec: { enabled } }, what);
    if (t.spec?.functionRef) this.deps.invalidate(namespace, t.spec.functionRef);
    return triggerRecord(patched);
  }

  async deleteTrigger(namespace: string, name: string): Promise<void> {
    const what = `trigger ${namespace}/${name}`;
    const t = await this.objects.get<TriggerResource>('Trigger', namespace, name, what);
    assertApiManaged(t, what, 'remove the schedule');
    await this.objects.remove('Trigger', namespace, name, what);
    if (t.spec?.functionRef) this.deps.invalidate(namespace, t.spec.functionRef);
  }

  async createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    const what = `job ${namespace}/${input.name}`;
    const fn = await this.functionFor(namespace, input.functionRef, what);
    const held = (await this.objects.list<FunctionJobResource>('FunctionJob', namespace)).length;
    const cap = this.deps.limits.jobsPerNamespace;
    const over = namespaceQuotaProblem({ namespace, what: 'jobs', adding: 1, held, cap, setting: 'SLESS_MAX_JOBS_PER_NAMESPACE' });
    if (over) throw new PlatformError('quota_exceeded', `${over}; delete one first`);
    const body: FunctionJobResource = {
      apiVersion: API_VERSION,
      kind: 'FunctionJob',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS, [LABELS.function]: input.functionRef }, ownerReferences: [ownedBy(fn)] },
      spec: {
        functionRef: input.functionRef,
        runID: input.runId ?? JOB_DEFAULTS.runId,
        ...(input.eventJson !== undefined ? { eventJSON: input.eventJson } : {}),
      },
    };
    return jobRecord(await this.objects.create('FunctionJob', namespace, body, what));
  }

  async listJobs(namespace: string): Promise<JobRecord[]> {
    return (await this.objects.list<FunctionJobResource>('FunctionJob', namespace)).map(jobRecord);
  }

  async getJob(namespace: string, name: string): Promise<JobRecord> {
    return jobRecord(await this.objects.get<FunctionJobResource>('FunctionJob', namespace, name, `job ${namespace}/${name}`));
  }

  async deleteJob(namespace: string, name: string): Promise<void> {
    const what = `job ${namespace}/${name}`;
    const j = await this.objects.get<FunctionJobResource>('FunctionJob', namespace, name, what);
    assertApiManaged(j, what, 'remove the job');
    await this.objects.remove('FunctionJob', namespace, name, what);
  }
}
