// The commit status (context `sless/preview`) a pull request's head carries: where its preview stands,
// linked to the preview namespace in the console. Pure.
import { consoleUrl, messageOf, truncate, type CommitStatus, type FunctionDeployState } from '../commit-status/decide-commit-status.ts';
import type { PreviewFunctionState } from './preview-plan.ts';

export const PREVIEW_CONTEXT = 'sless/preview';

export interface PreviewStatusFunction {
  readonly name: string;
  readonly state: PreviewFunctionState;
  /** For built functions: where the build and start stand; for failed ones, the error. */
  readonly deploy?: FunctionDeployState;
}

export interface PreviewStatusInput {
  readonly namespace: string;
  readonly functions: readonly PreviewStatusFunction[];
  readonly consoleBaseUrl?: string;
}

/** Failure with the first failed function (by name) and why; pending while one builds; else the counts. */
export function previewStatus(input: PreviewStatusInput): CommitStatus {
  const fns = [...input.functions].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const link = consoleUrl(input.consoleBaseUrl, input.namespace);
  const status = (state: CommitStatus['state'], description: string): CommitStatus => ({
    context: PREVIEW_CONTEXT,
    state,
    description: truncate(description),
    ...(link ? { targetUrl: link } : {}),
  });
  const failed = fns.filter((f) => f.deploy?.kind === 'failed');
  const first = failed[0];
  if (first) {
    const more = failed.length > 1 ? ` (+${failed.length - 1} more failed)` : '';
    return status('failure', `${first.name}: ${messageOf(first.deploy as FunctionDeployState)}${more}`);
  }
  const built = fns.filter((f) => f.state === 'built');
  const pending = built.filter((f) => f.deploy?.kind !== 'serving');
  if (pending.length > 0) return status('pending', `building ${pending.length} of ${built.length} changed function${built.length === 1 ? '' : 's'}`);
  return status('success', summary(fns));
}

/** "2 built, 5 from production" (and ", 1 removed" when the PR deletes functions). */
export function summary(fns: readonly { readonly state: PreviewFunctionState }[]): string {
  const count = (s: PreviewFunctionState) => fns.filter((f) => f.state === s).length;
  const removed = count('removed');
  return `${count('built')} built, ${count('production')} from production${removed > 0 ? `, ${removed} removed` : ''}`;
}

/** A refused pull request's status (fork, maxOpen, namespace name): no preview, and why. */
export function refusedStatus(message: string): CommitStatus {
  return { context: PREVIEW_CONTEXT, state: 'failure', description: truncate(message) };
}
