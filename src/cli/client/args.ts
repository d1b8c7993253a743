// A small argument parser for the client commands (pure): `--name value`, `--name=value`, `-x value`,
// boolean switches, repeatable options, and positionals; an unknown option is a CliError that names
// the command's usage.
import { CliError } from './errors.ts';

export interface OptionSpec {
  /** The one-letter alias, without the dash. */
  readonly short?: string;
  /** A switch takes no value. */
  readonly switch?: boolean;
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export interface ParsedArgs {
  readonly positionals: readonly string[];
  /** Every value of each option given, in order (a switch: `['true']`). */
  readonly options: ReadonlyMap<string, readonly string[]>;
  readonly help: boolean;
}

export function parseArgs(argv: readonly string[], specs: OptionSpecs, usage: string): ParsedArgs {
  const byShort = new Map(
    Object.entries(specs).flatMap(([name, s]) => (s.short ? [[s.short, name] as const] : [])),
  );
  const positionals: string[] = [];
  const options = new Map<string, string[]>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const given = eq > 0 ? arg.slice(0, eq) : arg;
    const name = given.startsWith('--') ? given.slice(2) : byShort.get(given.slice(1));
    const spec = name === undefined ? undefined : specs[name];
    if (name === undefined || spec === undefined)
      throw new CliError(`unknown option ${given}; usage: ${usage}`);
    let value: string;
    if (spec.switch) {
      if (eq > 0) throw new CliError(`${given} takes no value; usage: ${usage}`);
      value = 'true';
    } else if (eq > 0) {
      value = arg.slice(eq + 1);
    } else {
      const next = argv[i + 1];
      if (next === undefined) throw new CliError(`${given} needs a value; usage: ${usage}`);
      value = next;
      i++;
    }
    options.set(name, [...(options.get(name) ?? []), value]);
  }
  return { positionals, options, help };
}

/** The last value of an option (a later flag wins), or undefined. */
export function option(args: ParsedArgs, name: string): string | undefined {
  return args.options.get(name)?.at(-1);
}

export function hasSwitch(args: ParsedArgs, name: string): boolean {
  return args.options.has(name);
}

/** `5m`, `30s`, `1h`, `250ms` or plain seconds → milliseconds. */
export function parseDuration(text: string, what: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!m) throw new CliError(`${what} "${text}" is not a duration; write it like 30s, 5m or 1h`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h']);
}
