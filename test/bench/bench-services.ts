// The test services a real-node benchmark needs, started unless SLESS_TEST_* variables point at running ones.
import type { TestService } from '../run.ts';

/** Starts the service of `modulePath` unless `wanted` is set; its stop goes first into `stops`. */
export async function serviceUnlessSet(modulePath: string, wanted: string, stops: Array<() => Promise<void>>): Promise<void> {
  if (process.env[wanted]) return;
  const { service } = (await import(modulePath)) as { service: TestService };
  const started = await service.start();
  stops.unshift(started.stop);
  Object.assign(process.env, started.env);
}
