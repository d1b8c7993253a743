// The environment the client commands (get, describe, invoke, sync, login...) read. Kept here because
// src/config/ is the only reader of process.env; the commands take this record, so tests pass their own.
import os from 'node:os';

export interface ClientEnv {
  /** SLESS_ENDPOINT: the sless server's base URL. */
  readonly endpoint: string | undefined;
  /** SLESS_API_TOKEN: a bearer token for /v1. */
  readonly token: string | undefined;
  /** SLESS_NAMESPACE: another namespace than the token's own (an admin token, or sless dev's `dev`). */
  readonly namespace: string | undefined;
  /** Where `sless login` stores its settings: $XDG_CONFIG_HOME/sless, else ~/.config/sless. */
  readonly configDir: string;
}

export function clientEnv(env: NodeJS.ProcessEnv = process.env): ClientEnv {
  const nonEmpty = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const configHome = nonEmpty(env.XDG_CONFIG_HOME) ?? `${nonEmpty(env.HOME) ?? os.homedir()}/.config`;
  return {
    endpoint: nonEmpty(env.SLESS_ENDPOINT),
    token: nonEmpty(env.SLESS_API_TOKEN),
    namespace: nonEmpty(env.SLESS_NAMESPACE),
    configDir: `${configHome}/sless`,
  };
}
