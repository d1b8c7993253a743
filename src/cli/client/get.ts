// `sless get functions|triggers|jobs|repositories|builds|revisions [NAME] [-o table|json|yaml]`: lists (or
// shows one of) a kind of object in the namespace, from /v1. `builds` and `revisions` take a function's NAME.
import { option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError } from './errors.ts';
import { COLUMNS, formatOutput, parseOutputFormat } from './format.ts';
import { ApiError } from './http-client.ts';
import type { CommandIo } from '../io.ts';

export const KINDS = ['functions', 'triggers', 'jobs', 'repositories', 'builds', 'revisions'] as const;
export type Kind = (typeof KINDS)[number];

/** `function`, `fn`, `repo`... → the kind; undefined for anything else. */
export function kindOf(text: string): Kind | undefined {
  const aliases: Record<string, Kind> = {
    function: 'functions',
    fn: 'functions',
    trigger: 'triggers',
    job: 'jobs',
    repository: 'repositories',
    repo: 'repositories',
    repos: 'repositories',
    build: 'builds',
    revision: 'revisions',
    rev: 'revisions',
  };
  return (KINDS as readonly string[]).includes(text) ? (text as Kind) : aliases[text];
}

const usage = `sless get ${KINDS.join('|')} [NAME] [-o table|json|yaml] [-n NS]`;

async function fetchKind(ctx: CommandContext, kind: Kind, name: string | undefined): Promise<unknown> {
  const { api } = ctx;
  if (kind === 'builds') {
    if (name === undefined) throw new CliError(`builds belong to a function: sless get builds FUNCTION`);
    return api.get(`${api.nsPath('functions', name, 'builds')}?limit=20`);
  }
  if (kind === 'revisions') {
    if (name === undefined) throw new CliError(`revisions belong to a function: sless get revisions FUNCTION`);
    return api.get(api.nsPath('functions', name, 'revisions'));
  }
  if (name !== undefined) return api.get(api.nsPath(kind, name));
  try {
    return await api.get(api.nsPath(kind));
  } catch (err) {
    // Listing jobs is newer than the rest of /v1: an older server has no such route.
    if (kind === 'jobs' && err instanceof ApiError && err.status === 404) {
      throw new CliError(
        `this server cannot list jobs (GET ${api.nsPath('jobs')} answered 404); upgrade sless, or show one job with sless get jobs NAME`,
      );
    }
    throw err;
  }
}

export const getCommand: ClientCommand = {
  name: 'get',
  usage,
  help: `Lists the functions, triggers, jobs or repositories of the namespace, or shows the one NAME
names; \`builds FUNCTION\` lists a function's recent builds, newest first; \`revisions FUNCTION\`
its kept revisions (the last 10 that went live; LIVE-UNTIL "-" is the live one).
  -o, --output table|json|yaml   table (default) or /v1's JSON, or the same as YAML`,
  options: { output: { short: 'o' } },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const format = parseOutputFormat(option(args, 'output'));
    const [kindText, name] = positionals(args, usage, 1, 2) as [string, string | undefined];
    const kind = kindOf(kindText);
    if (kind === undefined) throw new CliError(`cannot get "${kindText}": name one of ${KINDS.join(', ')}`);
    const value = await fetchKind(ctx, kind, name);
    ctx.io.stdout.write(formatOutput(value, format, COLUMNS[kind]));
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(getCommand, argv, io);
