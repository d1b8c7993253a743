// The environment the controller's process gets in the pod deploy/ makes: the image's ENV (the final
// stage of deploy/Dockerfile) overlaid by the StatefulSet container's plain `value` env, as the kubelet
// does (a variable the pod sets replaces the image's, it does not add to it). The benchmarks run the
// controller with the memory-relevant part of it (NODE_OPTIONS, MALLOC_ARENA_MAX), so their RSS is the
// pod's; test/unit/controller-pod-env.test.ts checks the two files agree.
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';

const deployFile = (name: string) => new URL(`../../deploy/${name}`, import.meta.url);

/** `ENV` of the image's final stage (after the last FROM): `ENV a=1 b="x y"` lines, in order. */
export function imageEnv(dockerfile: string): Record<string, string> {
  const lines = dockerfile.replace(/\\\n/g, ' ').split('\n');
  const lastFrom = lines.map((l) => /^\s*FROM\s/i.test(l)).lastIndexOf(true);
  const env: Record<string, string> = {};
  for (const line of lines.slice(lastFrom + 1)) {
    const m = /^\s*ENV\s+(.*)$/i.exec(line);
    if (!m) continue;
    for (const pair of m[1]!.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
      const raw = pair[2]!;
      env[pair[1]!] = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
    }
  }
  return env;
}

interface Container {
  readonly name?: string;
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value?: string }>;
}

/** The StatefulSet's controller container's env given as plain values (valueFrom ones are left out). */
export function podEnv(statefulSetYaml: string): Record<string, string> {
  const sts = parse(statefulSetYaml) as { spec?: { template?: { spec?: { containers?: Container[] } } } };
  const containers = sts.spec?.template?.spec?.containers ?? [];
  const controller = containers.find((c) => c.name === 'controller') ?? containers[0];
  const env: Record<string, string> = {};
  for (const e of controller?.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

/** The variables of the deployed controller process that shape its memory, from deploy/ as it stands. */
export async function controllerMemoryEnv(): Promise<Record<string, string>> {
  const [dockerfile, sts] = await Promise.all([readFile(deployFile('Dockerfile'), 'utf8'), readFile(deployFile('base/statefulset.yaml'), 'utf8')]);
  const env = { ...imageEnv(dockerfile), ...podEnv(sts) };
  const out: Record<string, string> = {};
  for (const name of ['NODE_OPTIONS', 'MALLOC_ARENA_MAX']) if (env[name] !== undefined) out[name] = env[name];
  return out;
}
