// Helm as .ci/install.d/45-helm.sh builds it, for the chart's tests (render, lint, install).
import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

/** The helm binary (SLESS_TEST_HELM_BIN overrides). */
export async function helmBin(): Promise<string> {
  const bin = process.env.SLESS_TEST_HELM_BIN ?? path.join(os.homedir(), '.cache', 'sless-test', 'bin', 'helm');
  try {
    await access(bin);
  } catch {
    throw new Error(`helm is not at ${bin}: run bash .ci/install.d/45-helm.sh (or set SLESS_TEST_HELM_BIN)`);
  }
  return bin;
}

/** `helm ARGS` from the repository root; `env` adds to the environment (KUBECONFIG for an install). */
export async function helm(args: readonly string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> {
  // HELM_*_HOME under a temp dir: no plugin, cache or repository of this machine's user is read.
  const home = path.join(os.tmpdir(), 'sless-test-helm-home');
  const helmEnv = { ...process.env, HELM_CACHE_HOME: `${home}/cache`, HELM_CONFIG_HOME: `${home}/config`, HELM_DATA_HOME: `${home}/data`, ...env };
  return run(await helmBin(), args, { cwd: root, env: helmEnv, maxBuffer: 32 * 1024 * 1024 });
}
