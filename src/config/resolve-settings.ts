// Reads each setting from its flag, then its SLESS_* variable, then its default, and checks it with a
// zod schema. A bad or missing value stops the start with a message naming both spellings.
import { parseArgs } from 'node:util';
import { z } from 'zod';

export interface SettingSpec<T> {
  /** Long flag name without dashes, e.g. `port` for `--port`. */
  readonly flag?: string;
  readonly env?: string;
  readonly schema: z.ZodType<T>;
  readonly default?: T;
  /** Shown in errors and `--help`. */
  readonly describe: string;
  /** Boolean flags take no value (`--insecure`). */
  readonly boolean?: boolean;
}

export type SettingSpecs = Record<string, SettingSpec<unknown>>;
type Resolved<S extends SettingSpecs> = { readonly [K in keyof S]: S[K] extends SettingSpec<infer T> ? T : never };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function where(spec: SettingSpec<unknown>): string {
  const names = [spec.flag ? `--${spec.flag}` : undefined, spec.env].filter(Boolean);
  return names.join(' / ');
}

/** Parses argv against `specs`; positional arguments come back separately. */
export function resolveSettings<S extends SettingSpecs>(
  specs: S,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { settings: Resolved<S>; positionals: string[] } {
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const spec of Object.values(specs)) {
    if (spec.flag) options[spec.flag] = { type: spec.boolean ? 'boolean' : 'string' };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options, allowPositionals: true, strict: true });
  } catch (err) {
    const known = Object.keys(options);
    const given = /'(--?[^'=]+)/.exec((err as Error).message)?.[1];
    const close = given ? closestFlag(given.replace(/^-+/, ''), known) : undefined;
    const hint = close ? `did you mean --${close}? ` : '';
    throw new ConfigError(`${given ? `unknown flag ${given}; ${hint}` : `${(err as Error).message}; `}known flags: ${known.map((f) => `--${f}`).join(', ')}`, {
      cause: err,
    });
  }
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(specs)) {
    const fromFlag = spec.flag ? parsed.values[spec.flag] : undefined;
    const fromEnv = spec.env ? env[spec.env] : undefined;
    const raw: unknown = fromFlag ?? (fromEnv === '' ? undefined : fromEnv);
    if (raw === undefined) {
      if ('default' in spec) {
        out[key] = spec.default;
        continue;
      }
      const result = spec.schema.safeParse(undefined);
      if (!result.success) throw new ConfigError(`missing setting ${where(spec)}: ${spec.describe}`);
      out[key] = result.data;
      continue;
    }
    const result = spec.schema.safeParse(raw);
    if (!result.success) {
      const why = result.error.issues.map((i) => i.message).join('; ');
      throw new ConfigError(`bad setting ${where(spec)}=${JSON.stringify(raw)}: ${why} (${spec.describe})`);
    }
    out[key] = result.data;
  }
  return { settings: Object.freeze(out) as Resolved<S>, positionals: parsed.positionals };
}

/** The known flag nearest to a mistyped one (edit distance at most 2, or a prefix), if any. */
export function closestFlag(given: string, known: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row;
    }
    return prev[b.length] ?? 0;
  };
  const scored = known.map((k) => ({ k, d: k.startsWith(given) ? 0.5 : distance(given, k) })).sort((x, y) => x.d - y.d);
  return scored[0] && scored[0].d <= 2 ? scored[0].k : undefined;
}

// Shared schemas for values that arrive as strings.
export const port = z.coerce.number().int().min(0).max(65535);
export const flag = z.union([z.boolean(), z.enum(['1', 'true', 'yes', '0', 'false', 'no', ''])]).transform((v) =>
  typeof v === 'boolean' ? v : ['1', 'true', 'yes'].includes(v),
);
export const duration = z
  .string()
  .regex(/^\d+(ms|s|m|h)$/, 'a duration like 500ms, 30s, 5m or 1h')
  .transform((v) => {
    const m = /^(\d+)(ms|s|m|h)$/.exec(v)!;
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    return Number(m[1]) * unit;
  });
export const dnsLabel = z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a DNS-1123 label (lowercase letters, digits, -)');
