// `sless sync REPOSITORY [--wait] [--timeout 5m]`: asks the server for a sync now; with --wait, polls
// the repository until its revision or last sync time moves and then until every function of it is
// Ready (exit 0) or one is Failed or invalid (exit 1, naming it).
import type { CommandIo } from '../io.ts';
import { hasSwitch, option, parseDuration, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError } from './errors.ts';
import { shortRevision } from './format.ts';

const usage = 'sless sync REPOSITORY [--wait] [--timeout 5m] [-n NS]';
export const DEFAULT_SYNC_TIMEOUT = '5m';
const POLL_MS = 500;

export interface RepositoryJson {
  readonly revision?: string;
  readonly last_sync_time?: string;
  readonly functions?: ReadonlyArray<{
    readonly name: string;
    readonly code_hash?: string;
    readonly error?: string;
  }>;
  readonly ready?: { readonly status: string; readonly reason?: string; readonly message?: string };
}
export interface FunctionJson {
  readonly name: string;
  readonly phase?: string;
  readonly message?: string;
  readonly code_hash?: string;
}

export type SyncProgress =
  | { readonly state: 'waiting'; readonly detail: string }
  | { readonly state: 'done' | 'failed'; readonly detail: string };

/**
 * Where a requested sync stands, from the repository before the request and now (pure). A function
 * counts as done when it is Ready with the code_hash the repository lists for it.
 */
export function syncProgress(
  before: RepositoryJson,
  now: RepositoryJson,
  functions: readonly FunctionJson[],
): SyncProgress {
  if (now.revision === before.revision && now.last_sync_time === before.last_sync_time) {
    return { state: 'waiting', detail: 'the repository has not synced yet' };
  }
  if (now.ready?.status === 'False')
    return {
      state: 'failed',
      detail: `repository not ready: ${now.ready.reason ?? ''} ${now.ready.message ?? ''}`.trim(),
    };
  const members = now.functions ?? [];
  const invalid = members.find((f) => f.error !== undefined && f.error !== '');
  if (invalid) return { state: 'failed', detail: `function ${invalid.name} is invalid: ${invalid.error}` };
  const byName = new Map(functions.map((f) => [f.name, f]));
  const waiting: string[] = [];
  for (const m of members) {
    const f = byName.get(m.name);
    if (f?.phase === 'Failed')
      return { state: 'failed', detail: `function ${m.name} failed${f.message ? `: ${f.message}` : ''}` };
    // A function still Ready with the code it had before the sync has not picked up the new revision yet.
    const stale = m.code_hash !== undefined && f?.code_hash !== undefined && f.code_hash !== m.code_hash;
    if (f?.phase !== 'Ready' || stale)
      waiting.push(`${m.name} (${stale ? 'previous code' : (f?.phase ?? 'not created yet')})`);
  }
  if (waiting.length > 0) return { state: 'waiting', detail: `waiting for ${waiting.join(', ')}` };
  return {
    state: 'done',
    detail: `revision ${shortRevision(now.revision) ?? '-'}: ${members.length} function${members.length === 1 ? '' : 's'} Ready`,
  };
}

export const syncCommand: ClientCommand = {
  name: 'sync',
  usage,
  help: `Asks the server to sync REPOSITORY now (POST .../repositories/REPOSITORY/sync).
  --wait          then wait until the repository's revision or last sync time changes and every
                  function of it is Ready; exit 1 naming the first one that Failed or is invalid
  --timeout 5m    how long --wait waits (exit 1 after it)`,
  options: { wait: { switch: true }, timeout: {} },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const [name] = positionals(args, usage, 1) as [string];
    const timeoutMs = parseDuration(option(args, 'timeout') ?? DEFAULT_SYNC_TIMEOUT, '--timeout');
    const { api, io } = ctx;
    const repoPath = api.nsPath('repositories', name);
    const before = args.options.has('wait') ? await api.get<RepositoryJson>(repoPath) : undefined;
    await api.json('POST', `${repoPath}/sync`);
    if (!hasSwitch(args, 'wait') || before === undefined) {
      io.stdout.write(`sync of ${name} requested\n`);
      return 0;
    }
    const deadline = Date.now() + timeoutMs;
    let progress: SyncProgress = { state: 'waiting', detail: 'the repository has not synced yet' };
    for (;;) {
      const now = await api.get<RepositoryJson>(repoPath);
      const functions =
        now.revision === before.revision && now.last_sync_time === before.last_sync_time
          ? []
          : await api.get<FunctionJson[]>(api.nsPath('functions'));
      progress = syncProgress(before, now, functions);
      if (progress.state === 'done') {
        io.stdout.write(`synced ${name}: ${progress.detail}\n`);
        return 0;
      }
      if (progress.state === 'failed')
        throw new CliError(
          `synced ${name}, but ${progress.detail}; sless describe function NAME shows its builds`,
        );
      if (Date.now() >= deadline) break;
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
    }
    throw new CliError(
      `${name} did not finish syncing within ${option(args, 'timeout') ?? DEFAULT_SYNC_TIMEOUT} (${progress.detail}); a sync without new commits may leave the revision and sync time as they were: check sless get repositories ${name}, or wait longer with --timeout`,
    );
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(syncCommand, argv, io);
