// Which commit statuses a synced revision should carry (Flux notification-controller style), decided
// without I/O: one status for the repository (context `sless`) and one per function that failed
// (`sless/<function>`). `pending` while a function of the revision builds or rolls out, `success`
// when every one serves it, `failure` with the first error (file:line of a broken function.yaml, or
// the build's / start's failure) as soon as one failed.

export type CommitState = 'pending' | 'success' | 'failure';

/** Where one function of the revision stands. */
export type FunctionDeployState =
  | { readonly kind: 'pending'; readonly message: string }
  | { readonly kind: 'serving' }
  /** Built, but a rollback pins the function to an earlier revision: this commit is not live there. */
  | { readonly kind: 'pinned'; readonly revision: number }
  | { readonly kind: 'failed'; readonly message: string };

export interface RevisionFunction {
  readonly name: string;
  /** The folder, repository-relative (for ordering: "first" error means first by path). */
  readonly path: string;
  readonly state: FunctionDeployState;
}

export interface CommitStatusInput {
  readonly revision: string;
  readonly namespace: string;
  readonly functions: readonly RevisionFunction[];
  /** Public base URL of sless (e.g. `https://fn.example.com`); without it statuses carry no link. */
  readonly consoleBaseUrl?: string;
  /** Contexts already posted on this revision: a function context that failed before and is fine now is set back. */
  readonly postedContexts?: readonly string[];
}

export interface CommitStatus {
  readonly context: string;
  readonly state: CommitState;
  /** At most 140 characters (GitHub refuses longer ones). */
  readonly description: string;
  readonly targetUrl?: string;
}

export const REPOSITORY_CONTEXT = 'sless';
export const MAX_DESCRIPTION = 140;

export function functionContext(name: string): string {
  return `${REPOSITORY_CONTEXT}/${name}`;
}

/** The console's page of a function's source (`/funcs/<namespace>/source/<fn>`), or of the namespace. */
export function consoleUrl(base: string | undefined, namespace: string, fn?: string): string | undefined {
  if (!base) return undefined;
  const root = base.replace(/\/+$/, '');
  const ns = encodeURIComponent(namespace);
  return fn === undefined ? `${root}/funcs/${ns}` : `${root}/funcs/${ns}/source/${encodeURIComponent(fn)}`;
}

export function decideCommitStatuses(input: CommitStatusInput): CommitStatus[] {
  const fns = [...input.functions].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.name < b.name ? -1 : 1));
  const failed = fns.filter((f) => f.state.kind === 'failed');
  const pending = fns.filter((f) => f.state.kind === 'pending');
  const pinned = fns.filter((f) => f.state.kind === 'pinned');
  const rev = shortRevision(input.revision);
  const link = (fn?: string) => consoleUrl(input.consoleBaseUrl, input.namespace, fn);
  const status = (context: string, state: CommitState, description: string, targetUrl: string | undefined): CommitStatus => ({
    context,
    state,
    description: truncate(description),
    ...(targetUrl ? { targetUrl } : {}),
  });

  const out: CommitStatus[] = [];
  const first = failed[0];
  if (first) {
    const more = failed.length > 1 ? ` (+${failed.length - 1} more failed)` : '';
    out.push(status(REPOSITORY_CONTEXT, 'failure', `${first.name}: ${messageOf(first.state)}${more}`, link(first.name)));
  } else if (pending.length > 0) {
    const what = pending.length === 1 ? `${pending[0]?.name}: ${messageOf(pending[0]!.state)}` : `${pending.length} of ${fns.length} functions building or rolling out`;
    out.push(status(REPOSITORY_CONTEXT, 'pending', what, link()));
  } else if (pinned.length > 0) {
    const names = pinned.map((f) => `${f.name} (revision ${(f.state as { revision: number }).revision})`).join(', ');
    out.push(status(REPOSITORY_CONTEXT, 'success', `${rev} built; pinned by a rollback, not live: ${names}; undo the rollback to serve it`, link()));
  } else {
    out.push(status(REPOSITORY_CONTEXT, 'success', `${fns.length} function${fns.length === 1 ? ' serves' : 's serve'} ${rev}`, link()));
  }

  for (const f of failed) out.push(status(functionContext(f.name), 'failure', messageOf(f.state), link(f.name)));
  // A pinned function says so on its own context: the commit built, but an earlier revision serves.
  for (const f of pinned) out.push(status(functionContext(f.name), 'success', messageOf(f.state), link(f.name)));
  const failedContexts = new Set([...failed, ...pinned].map((f) => functionContext(f.name)));
  for (const context of input.postedContexts ?? []) {
    if (context === REPOSITORY_CONTEXT || failedContexts.has(context)) continue;
    const f = fns.find((x) => functionContext(x.name) === context);
    if (!f) {
      out.push(status(context, 'success', `no longer part of ${rev}`, link()));
    } else if (f.state.kind === 'pending') {
      out.push(status(context, 'pending', messageOf(f.state), link(f.name)));
    } else {
      out.push(status(context, 'success', `serves ${rev}`, link(f.name)));
    }
  }
  return out;
}

/** True when no function is still building or rolling out: the statuses will not change by themselves. */
export function isFinal(statuses: readonly CommitStatus[]): boolean {
  return statuses.every((s) => s.state !== 'pending');
}

export function messageOf(state: FunctionDeployState): string {
  if (state.kind === 'serving') return 'serving';
  if (state.kind === 'pinned') return `built, not live: pinned to revision ${state.revision} by a rollback; undo it (sless rollback --undo) to serve this commit`;
  // The first line says what failed; a build log tail follows it.
  return state.message.split('\n').find((l) => l.trim() !== '')?.trim() ?? state.kind;
}

export function truncate(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= MAX_DESCRIPTION ? oneLine : `${oneLine.slice(0, MAX_DESCRIPTION - 1)}…`;
}

function shortRevision(rev: string): string {
  return /^[0-9a-f]{40,64}$/.test(rev) ? rev.slice(0, 12) : rev;
}
