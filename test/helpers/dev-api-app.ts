// `sless dev`'s HTTP app in process: the local platform over a folder, /v1 with the test HS256 secret.
import type { FastifyInstance } from 'fastify';
import path from 'node:path';
import { Registry } from 'prom-client';
import { buildApp } from '../../src/app/build-app.ts';
import { LocalPlatform } from '../../src/platform/local/local-platform.ts';
import { localRuntimes } from '../../src/platform/local/local-runtimes.ts';
import { silentLogger } from '../../src/platform/local/logger.ts';
import { openRepository } from '../../src/platform/local/open-repository.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { SECRET } from './http-test-kit.ts';

export interface DevApiApp {
  readonly platform: LocalPlatform;
  readonly app: FastifyInstance;
  close(): Promise<void>;
}

/** Starts the local platform on `repo` (a plain folder) with its state in `dataDir`. */
export async function startDevApiApp(opts: { repo: string; dataDir: string; namespace?: string }): Promise<DevApiApp> {
  const platform = new LocalPlatform({
    dataDir: opts.dataDir,
    namespace: opts.namespace ?? 'dev',
    repoName: 'local',
    repository: await openRepository({ repo: opts.repo, path: '', cacheDir: path.join(opts.dataDir, 'git'), logger: silentLogger }),
    runtimes: localRuntimes(),
    pollIntervalMs: 3_600_000,
    logger: silentLogger,
    publicUrl: () => 'http://localhost:8080',
  });
  await platform.start();
  const app = await buildApp({
    platform,
    invocationLog: createMemoryInvocationLog(),
    buildLog: createMemoryBuildLog(),
    auth: { key: { kind: 'hs256', secret: SECRET } },
    registry: new Registry(),
    logger: false,
  });
  return { platform, app, close: async () => (await app.close(), await platform.close()) };
}
