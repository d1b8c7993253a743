// `sless logs NAME [-f] [--since 10m] [--tail N]`: the function's output from every replica through
// /v1 .../logs (newline-delimited JSON), each line printed as `[replica] line`. With -f it keeps
// printing until the server ends the answer or the user presses Ctrl-C. Bad --since/--tail values are
// the server's to judge (one rule, logs-route.ts): its 400 comes back as one line.
import type { CommandIo } from '../io.ts';
import { hasSwitch, option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError, oneLine } from './errors.ts';

const usage = 'sless logs NAME [-f] [--since 10m] [--tail N] [-n NS]';

interface WireLine {
  time?: unknown;
  replica?: unknown;
  stream?: unknown;
  line?: unknown;
}

/** One NDJSON record as the line the user reads; undefined for a record that is not a log line. */
export function formatLogLine(record: string): string | undefined {
  let parsed: WireLine;
  try {
    parsed = JSON.parse(record) as WireLine;
  } catch {
    return undefined;
  }
  if (typeof parsed.line !== 'string' || typeof parsed.replica !== 'string') return undefined;
  const stream = parsed.stream === 'stderr' ? ' stderr' : '';
  return `[${parsed.replica}${stream}] ${parsed.line}`;
}

/** The query string of the request, from the options. */
export function logsQuery(args: ParsedArgs): string {
  const params = new URLSearchParams();
  if (hasSwitch(args, 'follow')) params.set('follow', '1');
  const since = option(args, 'since');
  if (since !== undefined) params.set('since', since);
  const tail = option(args, 'tail');
  if (tail !== undefined) params.set('tail', tail);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export const logsCommand: ClientCommand = {
  name: 'logs',
  usage,
  help: `Prints what the function wrote, from every replica (pods on Kubernetes, processes in sless dev),
oldest first, each line prefixed with the replica that wrote it ([replica stderr] for stderr).
  -f, --follow     keep printing new lines as they are written (Ctrl-C stops)
  --since DURATION only lines written since then: 30s, 10m, 2h, 1d, or an RFC 3339 time
  --tail N         only the last N lines (per replica with -f)`,
  options: { follow: { short: 'f', switch: true }, since: {}, tail: {} },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const [name] = positionals(args, usage, 1) as [string];
    const res = await ctx.api.stream(`${ctx.api.nsPath('functions', name, 'logs')}${logsQuery(args)}`);
    if (!res.body) return 0;
    const decoder = new TextDecoder();
    let rest = '';
    try {
      for await (const chunk of res.body) {
        const records = (rest + decoder.decode(chunk as Uint8Array, { stream: true })).split('\n');
        rest = records.pop() ?? '';
        const out = records.flatMap((r) => formatLogLine(r) ?? []);
        if (out.length > 0) ctx.io.stdout.write(`${out.join('\n')}\n`);
      }
    } catch (err) {
      throw new CliError(`the log stream of ${name} broke off: ${oneLine(err)}; run the command again`);
    }
    const last = formatLogLine(rest);
    if (last !== undefined) ctx.io.stdout.write(`${last}\n`);
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(logsCommand, argv, io);
