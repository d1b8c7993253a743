// What a platform calls after each sync step of a repository that opted in to commit statuses: the
// state of each function of the revision → the statuses decided for it → posted in the background.
import type { CommitStatusPoster } from './commit-status-poster.ts';
import { decideCommitStatuses, type CommitStatus, type RevisionFunction } from './decide-commit-status.ts';
import type { StatusTarget } from './status-target.ts';

export interface RevisionReporterOptions {
  readonly target: StatusTarget;
  readonly poster: CommitStatusPoster;
  readonly namespace: string;
  /** Public base URL of sless for links to the console; read at each report (known only after listen). */
  readonly consoleBaseUrl: () => string | undefined;
}

export class RevisionReporter {
  constructor(private readonly o: RevisionReporterOptions) {}

  get target(): StatusTarget {
    return this.o.target;
  }

  /** Never throws, never waits for the network; returns what it asked to post. */
  report(revision: string, functions: readonly RevisionFunction[]): CommitStatus[] {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(revision)) return [];
    const baseUrl = this.o.consoleBaseUrl();
    const statuses = decideCommitStatuses({
      revision,
      namespace: this.o.namespace,
      functions,
      ...(baseUrl ? { consoleBaseUrl: baseUrl } : {}),
      postedContexts: this.o.poster.contexts(this.o.target, revision),
    });
    this.o.poster.post(this.o.target, revision, statuses);
    return statuses;
  }
}
