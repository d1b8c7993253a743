// The leader's deletion of a preview's images (docs/previews.md "Removal"): when the preview goes, and when
// a push prunes functions from it (they drop out of its status: its removal would never name them). Stops
// the builds of those functions still in the build namespace (a build that pushed after the deletion would
// leave its image), then starts the `sless-build-tools delete` Job in the build namespace
// (preview-images-job.ts). Never throws: the namespace or the Functions are gone either way; a Job that
// could not be started is logged with what stays.
import type { ReconcileContext } from './reconcile-context.ts';
import { previewBuildJobs, previewImageRepositories, previewImagesJob } from '../previews/preview-images-job.ts';
import type { PreviewIdentity } from '../previews/preview-objects.ts';

export class PreviewImages {
  constructor(private readonly ctx: Pick<ReconcileContext, 'kube' | 'caches' | 'settings' | 'logger'>) {}

  /**
   * The preview goes: empties the repositories of its functions `names` and stops all its builds;
   * `incarnation` tells this removal from an earlier one of the same PR (removalIncarnation). Answers the
   * Job's name, or undefined when none was started.
   */
  remove(previewNamespace: string, preview: PreviewIdentity, names: Iterable<string>, incarnation: string): Promise<string | undefined> {
    const about = `the images of preview ${previewNamespace} (pull request #${preview.number})`;
    return this.delete(previewNamespace, preview, [...names], incarnation, { about, builds: undefined });
  }

  /**
   * A build of the preview pruned its Functions `names`: empties their repositories and stops their builds
   * only; `incarnation`: pruneIncarnation. Answers the Job's name, or undefined when none was started.
   */
  pruned(previewNamespace: string, preview: PreviewIdentity, names: readonly string[], incarnation: string): Promise<string | undefined> {
    const about = `the images of ${names.join(', ')}, pruned from preview ${previewNamespace} (pull request #${preview.number})`;
    return this.delete(previewNamespace, preview, names, incarnation, { about, builds: new Set(names) });
  }

  private async delete(
    previewNamespace: string,
    preview: PreviewIdentity,
    names: readonly string[],
    incarnation: string,
    opts: { readonly about: string; readonly builds: ReadonlySet<string> | undefined },
  ): Promise<string | undefined> {
    const ctx = this.ctx;
    const { about } = opts;
    const others = ctx.caches.functions
      .list()
      .map((f) => ({ namespace: f.metadata?.namespace ?? '', name: f.metadata?.name ?? '' }));
    const { repositories, shared } = previewImageRepositories(ctx.settings, previewNamespace, names, others);
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
      const builds = previewBuildJobs(ctx.caches.jobs.list(buildNs), previewNamespace, opts.builds);
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
