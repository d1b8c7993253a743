// A namespace with many functions on the memory platform (the console's speed test and benchmark):
// each with a phase, a message on some, a URL, a build time, a code hash and an owner.
import { functionSettingsOf } from '../../src/platform/records.ts';
import type { FunctionRecord } from '../../src/platform/types.ts';
import type { MemoryPlatform } from './memory-platform.ts';

const PHASES: FunctionRecord['phase'][] = ['Ready', 'Ready', 'Ready', 'Building', 'Failed', 'Pending'];

export function addManyFunctions(platform: MemoryPlatform, namespace: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const name = `fn-${String(i).padStart(4, '0')}`;
    const phase = PHASES[i % PHASES.length] as FunctionRecord['phase'];
    platform.functions.set(`${namespace}/${name}`, {
      ...functionSettingsOf({ name, runtime: i % 2 ? 'python3.12' : 'nodejs20' }),
      namespace,
      phase,
      ...(phase === 'Failed' ? { message: `build failed: <step ${i}> exited with 1 & "quotes"` } : {}),
      codeHash: `sha256:${i.toString(16).padStart(64, '0')}`,
      lastBuiltAt: new Date(Date.UTC(2026, 11, 1, 8, 0, i % 60)).toISOString(),
      url: `https://fn.example.com/fn/${namespace}/${name}`,
      managedBy: i % 3 ? 'git:team-functions' : 'api',
    });
  }
}
