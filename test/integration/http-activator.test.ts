// /fn's activator (src/http/activator.ts) against real upstream servers: a call for a function at
// zero is held while the platform wakes it, then forwarded; many calls cause one wake; the wait is
// bounded (503 with Retry-After); a caller that leaves releases its slot; a disabled function never wakes.
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Endpoint, FunctionScaling } from '../../src/platform/types.ts';
import { listen, testApp, upstream } from '../helpers/http-test-kit.ts';
import { MemoryPlatform } from '../helpers/memory-platform.ts';

/** A memory platform whose functions can sit at zero; wake() starts a real server after `startMs`. */
class ScalingPlatform extends MemoryPlatform {
  readonly wakes: string[] = [];
  readonly inFlight = new Map<string, number>();
  readonly servers: Array<() => Promise<void>> = [];
  startMs = 300;
  /** Functions whose wake never finishes. */
  readonly stuck = new Set<string>();
  /** Functions whose lookup waits until this promise settles (an endpoint read from the API server). */
  readonly slowLookup = new Map<string, Promise<void>>();
  readonly scaling: FunctionScaling = {
    requestBegan: (namespace, name) => {
      const key = `${namespace}/${name}`;
      this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
      return () => this.inFlight.set(key, (this.inFlight.get(key) ?? 0) - 1);
    },
    wake: async (namespace, name) => {
      const key = `${namespace}/${name}`;
      this.wakes.push(key);
      if (this.stuck.has(key)) return new Promise<void>(() => {});
      await sleep(this.startMs);
      const up = await upstream((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => res.end(`woken ${name}: ${Buffer.concat(chunks).length} bytes`));
      });
      this.servers.push(up.close);
      this.serve(namespace, name, up.url, 30);
    },
  };

  override async resolveEndpoint(namespace: string, name: string): Promise<Endpoint> {
    await this.slowLookup.get(`${namespace}/${name}`);
    return super.resolveEndpoint(namespace, name);
  }

  idle(namespace: string, name: string, timeoutSec = 30): void {
    this.serve(namespace, name, 'http://127.0.0.1:9', timeoutSec);
    this.endpoints.set(`${namespace}/${name}`, { kind: 'idle', timeoutSec });
  }
}

function call(url: string, body?: string): Promise<{ status: number; body: string; retryAfter?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: body === undefined ? 'GET' : 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), ...(res.headers['retry-after'] ? { retryAfter: res.headers['retry-after'] } : {}) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('/fn activator', async () => {
  const platform = new ScalingPlatform();
  const { app, deps, registry } = await testApp({ platform, limits: { coldStartTimeoutMs: 1500 } });
  const base = await listen(app);
  after(async () => {
    await app.close();
    await Promise.all(platform.servers.map((close) => close()));
  });

  it('holds a call for a function at zero, wakes it, forwards it with its body, and records the wait', async () => {
    platform.idle('dev', 'sleepy');
    const res = await call(`${base}/fn/dev/sleepy/x`, 'hello body');
    assert.equal(res.status, 200);
    assert.equal(res.body, 'woken sleepy: 10 bytes');
    assert.deepEqual(platform.wakes, ['dev/sleepy']);
    const [logged] = await deps.invocationLog.list('dev', 'sleepy', 1);
    assert.ok(logged?.coldStartMs !== undefined && logged.coldStartMs >= 250, `coldStartMs ${logged?.coldStartMs}`);
    const text = await registry.metrics();
    assert.match(text, /sless_cold_start_seconds_count\{namespace="dev",function="sleepy"\} 1/);
    // Warm now: the next call waits for nothing and is not marked.
    assert.equal((await call(`${base}/fn/dev/sleepy`)).status, 200);
    const [warm] = await deps.invocationLog.list('dev', 'sleepy', 1);
    assert.equal(warm?.coldStartMs, undefined);
    assert.equal(platform.inFlight.get('dev/sleepy'), 0);
  });

  it('50 calls arriving together cause one wake and all get 200', async () => {
    platform.idle('dev', 'crowd');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => call(`${base}/fn/dev/crowd`, `call ${i}`)));
    assert.deepEqual(new Set(results.map((r) => r.status)), new Set([200]));
    assert.equal(platform.wakes.filter((w) => w === 'dev/crowd').length, 1);
    assert.equal(platform.inFlight.get('dev/crowd'), 0);
  });

  it('answers 503 with Retry-After when the function does not start within the bound', async () => {
    platform.idle('dev', 'stuck');
    platform.stuck.add('dev/stuck');
    const started = Date.now();
    const res = await call(`${base}/fn/dev/stuck`);
    assert.equal(res.status, 503);
    assert.equal(JSON.parse(res.body).code, 'cold_start_timeout');
    assert.equal(res.retryAfter, '5');
    assert.ok(Date.now() - started >= 1400, 'held for SLESS_COLD_START_TIMEOUT (1.5 s here)');
  });

  it("the function's timeout_sec bounds the wait when it is shorter", async () => {
    platform.idle('dev', 'quick', 1);
    platform.stuck.add('dev/quick');
    const started = Date.now();
    assert.equal((await call(`${base}/fn/dev/quick`)).status, 503);
    assert.ok(Date.now() - started < 1400, `waited ${Date.now() - started} ms`);
  });

  it('a caller that goes away stops waiting and releases its slot', async () => {
    platform.idle('dev', 'left');
    platform.stuck.add('dev/left');
    const req = httpRequest(`${base}/fn/dev/left`);
    req.on('error', () => {});
    req.end();
    await sleep(200);
    assert.equal(platform.inFlight.get('dev/left'), 1);
    req.destroy();
    await sleep(200);
    assert.equal(platform.inFlight.get('dev/left'), 0);
  });

  it('a caller that goes away while its function is looked up is not left in flight', async () => {
    const up = await upstream((_req, res) => res.end('ok'));
    platform.servers.push(up.close);
    platform.serve('dev', 'looked-up', up.url);
    let lookedUp!: () => void;
    platform.slowLookup.set('dev/looked-up', new Promise<void>((resolve) => (lookedUp = resolve)));
    const req = httpRequest(`${base}/fn/dev/looked-up`);
    req.on('error', () => {});
    req.end();
    await sleep(200);
    req.destroy();
    await sleep(200);
    lookedUp();
    await sleep(200);
    assert.equal(platform.inFlight.get('dev/looked-up') ?? 0, 0, 'its in-flight count ended with it');
  });

  it('a disabled function answers 503 and is never woken', async () => {
    platform.idle('dev', 'off');
    await platform.setTriggerEnabled('dev', (await platform.createTrigger('dev', { name: 'off-http', type: 'http', functionRef: 'off', enabled: false })).name, false);
    const res = await call(`${base}/fn/dev/off`);
    assert.equal(res.status, 503);
    assert.equal(JSON.parse(res.body).code, 'function_disabled');
    assert.ok(!platform.wakes.includes('dev/off'));
  });
});
