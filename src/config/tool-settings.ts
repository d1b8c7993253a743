// Settings of the tool commands `sless token` and `sless check`: the controller's own specs where they
// read the same thing (config.ts), plus what each command asks for.
import { z } from 'zod';
import { DEFAULT_SYSTEM_NAMESPACE } from '../platform/tenant-rules.ts';
import { assertAuthConsistent, commonSpecs, controllerSpecs, describeSettings, describeSpecs } from './config.ts';
import { ConfigError, dnsLabel, flag, resolveSettings, type SettingSpec } from './resolve-settings.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** A token lifetime as written: `30d`, `12h`, `90m`, `3600s` (tokenTtlSeconds reads it). */
const tokenTtl = z.string().regex(/^[1-9]\d{0,6}(s|m|h|d)$/, 'a lifetime like 30d, 12h, 90m or 3600s');

/** `30d` -> 2592000. */
export function tokenTtlSeconds(ttl: string): number {
  return Number(ttl.slice(0, -1)) * { s: 1, m: 60, h: 3600, d: 86_400 }[ttl.slice(-1) as 's' | 'm' | 'h' | 'd'];
}

/** `sless token`: the controller's token settings (the same variables) plus what to sign. */
const tokenSpecs = {
  jwtSecret: commonSpecs.jwtSecret,
  jwksUrl: commonSpecs.jwksUrl,
  jwtPublicKey: commonSpecs.jwtPublicKey,
  jwtIssuer: commonSpecs.jwtIssuer,
  jwtAudience: commonSpecs.jwtAudience,
  adminClaim: commonSpecs.adminClaim,
  authInsecure: commonSpecs.authInsecure,
  subject: { flag: 'subject', schema: z.string().min(1), describe: 'the token\'s "sub": who it is for; it decides the namespace (sless-<hash>)' },
  admin: { flag: 'admin', schema: flag, default: false, boolean: true, describe: 'add the admin claim (SLESS_ADMIN_CLAIM: true): every namespace' },
  ttl: { flag: 'ttl', schema: tokenTtl, default: '30d', describe: 'lifetime: 30d, 12h, 90m or 3600s' },
} satisfies Record<string, SettingSpec<unknown>>;

/** `sless check`: where the installed controller is and where its settings come from. */
const checkSpecs = {
  kubeconfig: controllerSpecs.kubeconfig,
  namespace: { flag: 'namespace', schema: dnsLabel, default: DEFAULT_SYSTEM_NAMESPACE, describe: "the controller's namespace" },
  pre: { flag: 'pre', schema: flag, default: false, boolean: true, describe: 'before install: the cluster version, the APIs and rights an install needs' },
  settingsFrom: {
    flag: 'settings-from',
    schema: z.enum(['cluster', 'env']),
    default: 'cluster' as const,
    describe: "cluster: the ConfigMap and Secret the controller StatefulSet's envFrom names; env: this shell's SLESS_* variables",
  },
} satisfies Record<string, SettingSpec<unknown>>;

export function loadTokenConfig(argv: readonly string[], env: Env = process.env) {
  const { settings, positionals } = resolveSettings(tokenSpecs, argv, env);
  if (positionals.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[0])}; give the subject as --subject`);
  assertAuthConsistent(settings);
  return settings;
}
export type TokenConfig = ReturnType<typeof loadTokenConfig>;

export function loadCheckConfig(argv: readonly string[], env: Env = process.env) {
  const { settings, positionals } = resolveSettings(checkSpecs, argv, env);
  if (positionals.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  return settings;
}

/** `sless <command> --help` for the commands with settings. */
export function describeCommandSettings(command: 'controller' | 'dev' | 'token' | 'check'): string {
  if (command === 'token') return describeSpecs(tokenSpecs);
  if (command === 'check') return describeSpecs(checkSpecs);
  return describeSettings(command);
}
