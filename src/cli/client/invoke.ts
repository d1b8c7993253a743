// `sless invoke NAME [-X METHOD] [-d DATA|@file] [-H 'k: v'] [--path /rest]`: one call through
// /fn/{ns}/{name}; prints the body as it came. Exit 1 on a 5xx answer (after printing it), and the
// status on stderr for any non-2xx. The API token is not sent: /fn is public, and the function
// would see it.
import { readFile } from 'node:fs/promises';
import type { CommandIo } from '../io.ts';
import { option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError, oneLine } from './errors.ts';

const usage = "sless invoke NAME [-X METHOD] [-d DATA|@FILE] [-H 'name: value']... [--path /rest] [-n NS]";

/** `'k: v'` → [k, v]; a CliError for anything without a colon or with an empty name. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon > 0 ? text.slice(0, colon).trim() : '';
  if (name === '' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
    throw new CliError(`-H "${text}" is not a header; write it as -H 'name: value'`);
  return [name, text.slice(colon + 1).trim()];
}

/** The request body: DATA as given, or the bytes of FILE for `@FILE`. */
export async function readData(data: string | undefined): Promise<Buffer | undefined> {
  if (data === undefined) return undefined;
  if (!data.startsWith('@')) return Buffer.from(data, 'utf8');
  const file = data.slice(1);
  try {
    return await readFile(file);
  } catch (err) {
    throw new CliError(`cannot read -d @${file}: ${oneLine(err)}`);
  }
}

/** `/fn/{ns}/{name}` plus the rest path (with its query string) given by --path. */
export function invokePath(namespace: string, name: string, rest: string | undefined): string {
  const base = `/fn/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  if (rest === undefined || rest === '' || rest === '/') return base;
  return `${base}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

export const invokeCommand: ClientCommand = {
  name: 'invoke',
  usage,
  help: `Calls the function through /fn/{namespace}/{name} and prints the answer's body. Exit 1 when it
answers 5xx (the status goes to stderr for every non-2xx answer).
  -X, --request METHOD   default GET, or POST when -d is given
  -d, --data DATA|@FILE  the request body (JSON gets content-type application/json unless -H sets one)
  -H, --header 'k: v'    a request header; repeat for more
  --path /rest           appended to the function's URL (a query string may follow)`,
  options: { request: { short: 'X' }, data: { short: 'd' }, header: { short: 'H' }, path: {} },
  remote: true,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const [name] = positionals(args, usage, 1) as [string];
    const body = await readData(option(args, 'data'));
    const method = (option(args, 'request') ?? (body === undefined ? 'GET' : 'POST')).toUpperCase();
    if (!/^[A-Z]+$/.test(method)) throw new CliError(`-X ${method} is not an HTTP method`);
    if (body !== undefined && (method === 'GET' || method === 'HEAD'))
      throw new CliError(`a ${method} request has no body; drop -d or use -X POST`);
    const headers = (args.options.get('header') ?? []).map(parseHeader);
    if (body !== undefined && !headers.some(([k]) => k.toLowerCase() === 'content-type')) {
      headers.push(['content-type', looksLikeJson(body) ? 'application/json' : 'application/octet-stream']);
    }
    const urlPath = invokePath(ctx.api.target.namespace, name, option(args, 'path'));
    const res = await ctx.api.send(method, urlPath, { headers, body, bearer: false });
    const answer = Buffer.from(await res.arrayBuffer());
    ctx.io.stdout.write(answer);
    if (answer.length > 0 && answer[answer.length - 1] !== 0x0a && isTerminal(ctx.io))
      ctx.io.stdout.write('\n');
    if (res.status >= 300) ctx.io.stderr.write(`sless invoke: ${method} ${urlPath} answered ${res.status}\n`);
    return res.status >= 500 ? 1 : 0;
  },
};

function looksLikeJson(body: Buffer): boolean {
  try {
    JSON.parse(body.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

function isTerminal(io: CommandIo): boolean {
  return (io.stdout as { isTTY?: boolean }).isTTY === true;
}

export const run = (argv: string[], io: CommandIo) => runClientCommand(invokeCommand, argv, io);
