// `sless rollback NAME [--to REVISION]` and `sless rollback NAME --undo` (docs/rollback.md): serves a
// kept revision at once, no build, and pins the function to it (no --to: the revision before the live
// one); --undo removes the pin so the function's own version (git's head, the last upload) serves again.
// Both wait until that version serves (--no-wait: answer at once).
import type { CommandIo } from '../io.ts';
import { hasSwitch, option, parseDuration, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError } from './errors.ts';
import { shortCommit } from '../../platform/revisions.ts';

const usage = 'sless rollback NAME [--to REVISION | --undo] [--no-wait] [--timeout 2m] [-n NS]';
const POLL_MS = 250;

export interface RevisionJson {
  readonly revision: number;
  readonly code_hash?: string;
  readonly commit?: string;
  readonly live_until?: string | null;
}
interface FunctionJson {
  readonly name: string;
  readonly phase?: string;
  readonly message?: string;
  readonly code_hash?: string;
  readonly pinned?: { readonly revision: number; readonly since: string } | null;
}

/** `--to` as a revision number, or a one-line error. */
export function parseRevision(text: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text)) throw new CliError(`--to ${text} is not a revision number; see sless get revisions NAME`);
  return Number(text);
}

/** The revision that serves now, from GET .../revisions (pure). */
export function liveOf(revisions: readonly RevisionJson[]): RevisionJson | undefined {
  return revisions.find((r) => r.live_until === null || r.live_until === undefined);
}

/** Whether the wanted version serves: revision `revision` (a rollback), or the function's own code (an undo). */
export function serves(revisions: readonly RevisionJson[], want: { readonly revision: number } | { readonly codeHash: string }): boolean {
  const live = liveOf(revisions);
  if (!live) return false;
  return 'revision' in want ? live.revision === want.revision : live.code_hash === want.codeHash;
}

function describeRevision(r: RevisionJson): string {
  // As the Pinned condition quotes it: 7 hex digits of a git commit.
  return `revision ${r.revision}${r.commit ? ` (commit ${shortCommit(r.commit)})` : ''}`;
}

async function waitFor(
  ctx: CommandContext,
  name: string,
  want: { readonly revision: number } | { readonly codeHash: string },
  timeoutMs: number,
): Promise<RevisionJson> {
  const { api } = ctx;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const revisions = await api.get<RevisionJson[]>(api.nsPath('functions', name, 'revisions'));
    const live = liveOf(revisions);
    if (live && serves(revisions, want)) return live;
    if (Date.now() > deadline) {
      const fn = await api.get<FunctionJson>(api.nsPath('functions', name));
      throw new CliError(
        `${name} does not serve ${'revision' in want ? `revision ${want.revision}` : 'its own version'} yet after ${Math.round(timeoutMs / 1000)} s (phase ${fn.phase ?? '?'}${fn.message ? `: ${fn.message}` : ''}); see sless describe function ${name}`,
      );
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

export const rollbackCommand: ClientCommand = {
  name: 'rollback',
  usage,
  help: `Serves an earlier revision of function NAME at once (no build) and pins the function to it:
new pushes (or uploads) still build but do not go live until the rollback is undone.
  --to REVISION     the revision to serve (sless get revisions NAME); default: the one before the live one
  --undo            remove the pin: the function's own version (git's head, the last upload) serves again
  --no-wait         answer once the server took the request, without waiting for the version to serve
  --timeout 2m      how long to wait (default 2m)`,
  options: { to: {}, undo: { switch: true }, 'no-wait': { switch: true }, timeout: {} },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const [name] = positionals(args, usage, 1) as [string];
    const to = option(args, 'to');
    const undo = hasSwitch(args, 'undo');
    if (undo && to !== undefined) throw new CliError(`--to and --undo exclude each other; usage: ${usage}`);
    const revision = to === undefined ? undefined : parseRevision(to);
    const timeoutMs = parseDuration(option(args, 'timeout') ?? '2m', '--timeout');
    const wait = !hasSwitch(args, 'no-wait');
    const { api } = ctx;
    const path = api.nsPath('functions', name, 'rollback');
    const started = Date.now();
    const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
    if (undo) {
      const fn = await api.json<FunctionJson>('DELETE', path);
      if (!wait || !fn.code_hash) {
        ctx.io.stdout.write(`${name}: rollback undone; its own version serves once it is up\n`);
        return 0;
      }
      const live = await waitFor(ctx, name, { codeHash: fn.code_hash }, timeoutMs);
      ctx.io.stdout.write(`${name}: rollback undone; serving its own version, ${describeRevision(live)}, after ${seconds()} s\n`);
      return 0;
    }
    const fn = await api.json<FunctionJson>('POST', path, revision === undefined ? {} : { revision });
    const pinned = fn.pinned?.revision;
    if (pinned === undefined) throw new CliError(`the server answered without a pin; is it older than sless rollback? (POST ${path})`);
    const live = wait ? await waitFor(ctx, name, { revision: pinned }, timeoutMs) : { revision: pinned };
    ctx.io.stdout.write(
      `${name}: ${wait ? 'serving' : 'rolling back to'} ${describeRevision(live)}${wait ? ` after ${seconds()} s` : ''}; pinned: new versions build but wait (sless rollback ${name} --undo)\n`,
    );
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(rollbackCommand, argv, io);
