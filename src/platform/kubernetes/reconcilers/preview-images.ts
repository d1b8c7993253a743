// The leader's removal of a closed preview's images (docs/previews.md "Removal"): stops the preview's
// builds still running (a build that pushed after the deletion would leave its image), then starts the
// `sless-build-tools delete` Job in the build namespace (preview-images-job.ts). Never throws: the
// preview's namespace is gone either way; a Job that could not be started is logged with what stays.
import { LABELS } from '../objects/meta.ts';
import type { ReconcileContext } from './reconcile-context.ts';
import { previewImageRepositories, previewImagesJob } from '../previews/preview-images-job.ts';
import type { PreviewIdentity } from '../previews/preview-objects.ts';

export class PreviewImages {
  constructor(private readonly ctx: Pick<ReconcileContext, 'kube' | 'caches' | 'settings' | 'logger'>) {}

  /**
   * Empties the repositories of the preview's functions `names`; `incarnation` tells this removal from an
   * earlier one of the same PR (previewImagesJobName). Answers the Job's name, or undefined when none was started.
   */
  async remove(
    previewNamespace: string,
    preview: PreviewIdentity,
    names: Iterable<string>,
    incarnation: string,
  ): Promise<string | undefined> {
    const ctx = this.ctx;
    const others = ctx.caches.functions
      .list()
      .map((f) => ({ namespace: f.metadata?.namespace ?? '', name: f.metadata?.name ?? '' }));
    const { repositories, shared } = previewImageRepositories(ctx.settings, previewNamespace, names, others);
    const about = `the images of preview ${previewNamespace} (pull request #${preview.number})`;
    if (shared.length > 0) {
      ctx.logger.warn(
        `${about}: ${shared.join(', ')} kept: a Function of another namespace has the same image repository (<namespace>-<name>)`,
      );
    }
    if (repositories.length === 0) return undefined;
    const buildNs = ctx.settings.buildNamespace;
    const job = previewImagesJob(ctx.settings, { previewNamespace, preview, repositories, incarnation });
    const name = job.metadata?.name ?? '';
    try {
      const builds = ctx.caches.jobs
        .list(buildNs)
        .filter(
          (j) =>
            j.metadata?.labels?.[LABELS.component] === 'build' &&
            j.metadata.labels[LABELS.functionNamespace] === previewNamespace,
        );
      for (const b of builds)
        await ctx.kube.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: b.metadata ?? {} });
      const created = await ctx.kube.createIfAbsent(job);
      ctx.logger.info(
        `${about}: deleting ${repositories.length} repositories' tags (Job ${buildNs}/${name}${created === 'exists' ? ', already started' : ''}; ${builds.length} build Job(s) stopped)`,
      );
      return name;
    } catch (err) {
      ctx.logger.warn(
        `${about}: could not start Job ${buildNs}/${name}, the images stay in the registry: ${err instanceof Error ? err.message : String(err)}`,
      );
      return undefined;
    }
  }
}
