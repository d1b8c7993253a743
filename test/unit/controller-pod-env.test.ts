// The controller pod's memory settings (issue 15: RSS < 200 MB at 1,000 functions): the StatefulSet's
// NODE_OPTIONS replaces the image's (the kubelet sets the variable, it does not append), so every flag the
// image chose must be in the StatefulSet's too, and the benchmarks run the controller with the result.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { controllerMemoryEnv, imageEnv, podEnv } from '../helpers/controller-pod-env.ts';

const read = (name: string) => readFile(new URL(`../../deploy/${name}`, import.meta.url), 'utf8');
const flags = (options: string | undefined) => new Map((options ?? '').split(/\s+/).filter(Boolean).map((f) => [f.split('=')[0]!, f] as const));

describe('controller pod env (deploy/)', () => {
  it('reads ENV of the final image stage only, quoted values and several pairs per line', () => {
    const env = imageEnv('FROM a AS build\nENV X=build\nFROM b\nENV A=1 B="two words"\nENV C=--x=1\\\n  D=4\n');
    assert.deepEqual(env, { A: '1', B: 'two words', C: '--x=1', D: '4' });
  });

  it("the StatefulSet's NODE_OPTIONS keeps every flag of the image's (it replaces them)", async () => {
    const image = flags(imageEnv(await read('Dockerfile')).NODE_OPTIONS);
    const pod = podEnv(await read('base/statefulset.yaml')).NODE_OPTIONS;
    if (pod === undefined) return;
    const kept = flags(pod);
    for (const [name] of image) assert.ok(kept.has(name), `the StatefulSet's NODE_OPTIONS "${pod}" drops the image's ${name}`);
  });

  it('sizes the old generation below the container memory limit', async () => {
    const sts = await read('base/statefulset.yaml');
    const limit = /limits:\s*\{\s*memory:\s*(\d+)(Mi|Gi)\s*\}/.exec(sts);
    assert.ok(limit, 'the controller container has a memory limit');
    const limitMb = Number(limit[1]) * (limit[2] === 'Gi' ? 1024 : 1);
    const old = /--max-old-space-size=(\d+)/.exec((await controllerMemoryEnv()).NODE_OPTIONS ?? '');
    assert.ok(old, 'the pod sets --max-old-space-size (V8 would size it, and its growing factor, from the node)');
    assert.ok(Number(old[1]) <= limitMb * 0.8, `--max-old-space-size=${old[1]} leaves room below the ${limitMb} MB limit`);
  });
});
