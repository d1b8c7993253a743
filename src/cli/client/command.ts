// What every client command shares: its options (plus -n/--namespace for those that talk to a server),
// `--help`, the target resolved from the settings, and errors printed as one line with exit 1.
import { clientEnv, type ClientEnv } from '../../config/client-env.ts';
import type { CommandIo } from '../io.ts';
import { option, parseArgs, type OptionSpecs, type ParsedArgs } from './args.ts';
import { CliError, oneLine } from './errors.ts';
import { ApiClient } from './http-client.ts';
import { resolveTarget } from './settings.ts';

export interface CommandContext {
  readonly io: CommandIo;
  readonly env: ClientEnv;
  /** Present when the command talks to a server (`remote: true`). */
  readonly api: ApiClient;
}

export interface ClientCommand {
  readonly name: string;
  /** One line: `sless <name> ...`. */
  readonly usage: string;
  /** The rest of `--help`: what it does, its options. */
  readonly help: string;
  readonly options: OptionSpecs;
  /** Talks to a sless server (needs endpoint, token, namespace). */
  readonly remote: boolean;
  execute(args: ParsedArgs, ctx: CommandContext): Promise<number>;
}

const NAMESPACE_OPTION: OptionSpecs = { namespace: { short: 'n' } };

export const CONNECTION_HELP = `Server: SLESS_ENDPOINT and SLESS_API_TOKEN, else what sless login stored.
Namespace: -n/--namespace NS, else SLESS_NAMESPACE, else the token's own.`;

export async function runClientCommand(
  command: ClientCommand,
  argv: string[],
  io: CommandIo,
  env: ClientEnv = clientEnv(),
): Promise<number> {
  const options = command.remote ? { ...NAMESPACE_OPTION, ...command.options } : command.options;
  try {
    const args = parseArgs(argv, options, command.usage);
    if (args.help) {
      io.stdout.write(
        `usage: ${command.usage}\n\n${command.help}\n${command.remote ? `\n${CONNECTION_HELP}\n` : ''}`,
      );
      return 0;
    }
    const api = command.remote
      ? new ApiClient(await resolveTarget(env, option(args, 'namespace')))
      : (undefined as unknown as ApiClient);
    return await command.execute(args, { io, env, api });
  } catch (err) {
    // A CliError already says what to do; anything else is unexpected but still gets one line.
    const message = err instanceof CliError ? err.message : `unexpected error: ${oneLine(err)}`;
    io.stderr.write(`sless ${command.name}: ${message}\n`);
    return 1;
  }
}

/** Exactly `count` positionals, else a usage error naming what is missing. */
export function positionals(args: ParsedArgs, usage: string, min: number, max = min): string[] {
  const p = [...args.positionals];
  if (p.length < min) throw new CliError(`missing argument; usage: ${usage}`);
  if (p.length > max) throw new CliError(`unexpected argument "${p[max]}"; usage: ${usage}`);
  return p;
}
