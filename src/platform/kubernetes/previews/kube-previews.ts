// `Platform.previews` on Kubernetes, on every replica (docs/previews.md "Kubernetes"). A verified
// pull-request delivery is decided at once for the answer (ignored / refused / accepted) and recorded on
// its FunctionRepository (preview-requests.ts) for the leader, which decides it again with what only it
// knows, builds or removes the preview, posts the statuses and writes status.previews
// (reconcilers/preview-reconcile.ts). Nothing here writes a namespace or a status.
import { decidePreview } from '../../../preview/preview-decision.ts';
import { previewSettingsOf } from '../../../preview/preview-settings.ts';
import type { PullRequestEvent } from '../../../webhook/pull-request.ts';
import type { PlatformPreviews, PreviewAnswer } from '../../types.ts';
import type { RepositoryResource } from '../objects/resources.ts';
import type { SlessObjects } from '../sless-objects.ts';
import { previewRequestAnnotation, previewRequests } from './preview-requests.ts';

export interface KubePreviewsOptions {
  readonly objects: Pick<SlessObjects, 'find' | 'patch'>;
  readonly now: () => Date;
  readonly logger?: { info?(message: string): void; warn(message: string): void };
}

/** The receiving half of `Platform.previews` (the list is kube-preview-serving.ts's, from the watches). */
export class KubePreviews implements Pick<PlatformPreviews, 'pullRequest'> {
  constructor(private readonly o: KubePreviewsOptions) {}

  async pullRequest(namespace: string, name: string, event: PullRequestEvent, reason: string): Promise<PreviewAnswer> {
    const o = this.o;
    const repo = await o.objects.find<RepositoryResource>('FunctionRepository', namespace, name);
    if (!repo?.spec) return { outcome: 'ignored', message: `no repository ${namespace}/${name}` };
    const settings = previewSettingsOf(repo.spec.previews);
    if ('error' in settings) {
      o.logger?.warn(`pull request delivery for ${namespace}/${name} ignored: ${settings.error} [${reason}]`);
      return { outcome: 'ignored', message: settings.error };
    }
    // Open: the previews in status and those recorded but not built yet (a close right after an open removes it).
    const open = new Map((repo.status?.previews ?? []).map((p) => [p.number, { number: p.number, head: p.head }]));
    for (const r of previewRequests(repo.metadata?.annotations)) {
      if (r.event.action !== 'closed' && r.event.action !== 'merged' && !open.has(r.number)) open.set(r.number, { number: r.number, head: '' });
    }
    // Namespaces are the leader's to check (it decides again before it builds).
    const d = decidePreview({ event, namespace, watchedBranch: repo.spec.branch ?? 'main', settings, open: [...open.values()], takenByOther: () => false });
    if (d.kind === 'ignore') {
      o.logger?.info?.(`pull request delivery for ${namespace}/${name} ignored: ${d.message} [${reason}]`);
      return { outcome: 'ignored', message: d.message };
    }
    // A refusal is recorded too: the leader posts its commit status (it holds the poster and its retries).
    const { key, value } = previewRequestAnnotation(d.number, event, o.now().toISOString());
    await o.objects.patch('FunctionRepository', namespace, name, { metadata: { annotations: { [key]: value } } }, `repository ${namespace}/${name}`);
    const line = `${namespace}/${name}: ${d.message} [${reason}]`;
    if (d.kind === 'refuse') {
      o.logger?.warn(`pull request #${d.number} of ${line}`);
      return { outcome: 'refused', message: d.message };
    }
    o.logger?.info?.(line);
    return { outcome: 'accepted', message: d.message };
  }
}
