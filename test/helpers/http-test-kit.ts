// Shared setup for the HTTP tests: an app on the memory platform with an HS256 secret, tokens for
// a subject (or an admin), and real loopback upstream servers.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { Registry } from 'prom-client';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import type { AuthOptions } from '../../src/auth/token-verifier.ts';
import { buildApp, type AppDeps } from '../../src/app/build-app.ts';
import { createMemoryBuildLog, createMemoryInvocationLog } from '../../src/store/memory-log.ts';
import { MemoryPlatform } from './memory-platform.ts';

export const SECRET = 'test-secret-of-enough-length-0123456789';
export const SUBJECT = 'alice@example.com';
export const NS = namespaceForSubject(SUBJECT);

export async function hs256Token(claims: Record<string, unknown> = {}, options: { sub?: string; exp?: string | number; nbf?: string | number; secret?: string } = {}): Promise<string> {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(options.sub ?? SUBJECT).setIssuedAt();
  jwt = jwt.setExpirationTime(options.exp ?? '1h');
  if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
}

export interface TestApp {
  app: FastifyInstance;
  platform: MemoryPlatform;
  deps: AppDeps;
  registry: Registry;
}

export async function testApp(overrides: Partial<AppDeps> = {}, auth: AuthOptions = { key: { kind: 'hs256', secret: SECRET } }): Promise<TestApp> {
  const platform = new MemoryPlatform();
  const registry = new Registry();
  const deps: AppDeps = {
    platform,
    invocationLog: createMemoryInvocationLog(),
    buildLog: createMemoryBuildLog(),
    auth,
    registry,
    logger: false,
    ...overrides,
  };
  const app = await buildApp(deps);
  return { app, platform: (deps.platform as MemoryPlatform) ?? platform, deps, registry };
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real node:http upstream on a free loopback port. */
export async function upstream(handler: Handler): Promise<{ url: string; server: Server; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return `http://127.0.0.1:${port}`;
}
