// `sless describe function NAME`: a function's spec and status (phase and message: /v1 has no
// conditions list yet), its last builds and its recent invocations, from three /v1 requests.
import type { CommandIo } from '../io.ts';
import { option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError } from './errors.ts';
import { COLUMNS, formatOutput, formatTable, parseOutputFormat } from './format.ts';
import { ApiError } from './http-client.ts';

const usage = 'sless describe function NAME [-o text|json|yaml] [-n NS]';

type Json = Record<string, unknown>;

export interface FunctionDescription {
  readonly function: Json;
  readonly builds: readonly Json[];
  readonly invocations: readonly Json[];
  /** Its kept revisions (an older server has none: empty). */
  readonly revisions: readonly Json[];
}

const SPEC_FIELDS = [
  'runtime',
  'entrypoint',
  'memory_mb',
  'timeout_sec',
  'http_enabled',
  'managed_by',
  'env_vars',
  'env_from_secrets',
] as const;
const STATUS_FIELDS = ['phase', 'message', 'code_hash', 'image_ref', 'last_built_at', 'url', 'pinned'] as const;

function lines(record: Json, fields: readonly string[]): string {
  const present = fields.filter((f) => record[f] !== undefined && record[f] !== null);
  const width = Math.max(0, ...present.map((f) => f.length));
  return present
    .map((f) => {
      const v = record[f];
      const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
      return `  ${`${f}:`.padEnd(width + 2)}${text}`;
    })
    .join('\n');
}

/** The text form (pure). */
export function describeText(d: FunctionDescription): string {
  const f = d.function;
  const indent = (text: string) =>
    text
      .trimEnd()
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n');
  return (
    [
      `Name:       ${String(f.name)}`,
      `Namespace:  ${String(f.namespace)}`,
      'Spec:',
      lines(f, SPEC_FIELDS),
      'Status:',
      lines(f, STATUS_FIELDS),
      `Builds (last ${d.builds.length}):`,
      d.builds.length > 0 ? indent(formatTable(d.builds, COLUMNS.builds)) : '  none',
      `Invocations (last ${d.invocations.length}):`,
      d.invocations.length > 0 ? indent(formatTable(d.invocations, COLUMNS.invocations)) : '  none',
      `Revisions (${d.revisions.length} kept):`,
      d.revisions.length > 0 ? indent(formatTable(d.revisions, COLUMNS.revisions)) : '  none',
    ].join('\n') + '\n'
  );
}

export const describeCommand: ClientCommand = {
  name: 'describe',
  usage,
  help: `Shows a function's settings and status (phase, message, code hash, image, URL), its last 5
builds, last 10 calls through /fn and its kept revisions (a pinned function says so).
  -o, --output text|json|yaml   text (default), or {"function","builds","invocations","revisions"} as JSON or YAML`,
  options: { output: { short: 'o' } },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const out = option(args, 'output');
    const format = out === 'text' ? 'table' : parseOutputFormat(out);
    const [kind, name] = positionals(args, usage, 2) as [string, string];
    if (kind !== 'function' && kind !== 'functions' && kind !== 'fn')
      throw new CliError(`cannot describe "${kind}": only functions are described; usage: ${usage}`);
    const { api } = ctx;
    const fn = await api.get<Json>(api.nsPath('functions', name));
    const [builds, invocations, revisions] = await Promise.all([
      api.get<Json[]>(`${api.nsPath('functions', name, 'builds')}?limit=5`),
      api.get<Json[]>(`${api.nsPath('functions', name, 'invocations')}?limit=10`),
      // The function exists (read above): a 404 here is a server older than revisions. Describe what it has.
      api.get<Json[]>(api.nsPath('functions', name, 'revisions')).catch((err: unknown) => {
        if (err instanceof ApiError && err.status === 404) return [];
        throw err;
      }),
    ]);
    const d: FunctionDescription = { function: fn, builds, invocations, revisions };
    ctx.io.stdout.write(format === 'table' ? describeText(d) : formatOutput(d, format, []));
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(describeCommand, argv, io);
