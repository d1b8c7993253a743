import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChildGroup, type CommandSpec } from './child-group.ts';
import type { Logger } from './logger.ts';
import { SupervisedProcess } from './supervised-process.ts';

// A tiny runtime-like server: /health, /pid, and /crash (exits 3).
const SERVER = `
const http = require('node:http');
http.createServer((req, res) => {
  if (req.url === '/crash') { res.end('bye'); setTimeout(() => process.exit(3), 5); return; }
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(req.url === '/health' ? { status: 'ok' } : { pid: process.pid }));
}).listen(Number(process.env.PORT), '127.0.0.1');
`;

function serverCommand(port: number, script = SERVER): CommandSpec {
  return { command: process.execPath, args: ['-e', script], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '', PORT: String(port) } };
}

function memoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail('condition not met in time');
}

test('a started process is healthy, serves on its base URL, and is gone after stop', async () => {
  const children = new ChildGroup();
  const p = new SupervisedProcess({ label: 't/ok', command: (port) => serverCommand(port), children, logger: memoryLogger() });
  await p.start();
  assert.equal(p.state, 'ready');
  const body = (await (await fetch(`${p.baseUrl}/`)).json()) as { pid: number };
  assert.equal(body.pid, p.pid);
  const pid = p.pid as number;
  await p.stop();
  assert.equal(p.baseUrl, undefined);
  assert.equal(alive(pid), false);
  assert.equal(children.size, 0);
});

test('a crashed process is restarted with backoff and serves again', async () => {
  const children = new ChildGroup();
  const logger = memoryLogger();
  const p = new SupervisedProcess({
    label: 't/crashy',
    command: (port) => serverCommand(port),
    children,
    logger,
    backoff: { baseMs: 100, maxMs: 1000 },
  });
  await p.start();
  const first = p.pid;
  await fetch(`${p.baseUrl}/crash`).then((r) => r.text());
  await eventually(() => p.state === 'ready' && p.pid !== first);
  assert.ok(logger.lines.some((l) => /t\/crashy exited with 3; restarting in 100 ms/.test(l)), logger.lines.join('\n'));
  const body = (await (await fetch(`${p.baseUrl}/`)).json()) as { pid: number };
  assert.equal(body.pid, p.pid);
  await p.stop();
});

test('a process that exits before it is healthy fails to start and says why', async () => {
  const children = new ChildGroup();
  const p = new SupervisedProcess({
    label: 't/broken',
    command: (port) => serverCommand(port, 'console.error("cannot import handler"); process.exit(1)'),
    children,
    logger: memoryLogger(),
  });
  await assert.rejects(p.start(), /t\/broken did not start: exited before it was healthy \(code 1\): cannot import handler/);
  assert.equal(children.size, 0);
});

test('stopping a child also stops the processes it started (its process group)', async () => {
  const children = new ChildGroup();
  const script = `
    const { spawn } = require('node:child_process');
    const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    console.log('grandchild ' + g.pid);
    setInterval(() => {}, 1000);`;
  const child = children.spawn(
    { command: process.execPath, args: ['-e', script], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' } },
    { label: 't/tree', logger: memoryLogger(), captureStdout: true },
  );
  await eventually(() => /grandchild \d+/.test(child.stdout()));
  const grandchild = Number(/grandchild (\d+)/.exec(child.stdout())?.[1]);
  assert.ok(alive(grandchild));
  await children.stopAll(2000);
  await eventually(() => !alive(grandchild) && !alive(child.pid));
});

test('a child dies with its parent even when the parent is SIGKILLed (no handler runs)', async () => {
  const script = `
    import { ChildGroup } from ${JSON.stringify(new URL('./child-group.ts', import.meta.url).href)};
    const g = new ChildGroup();
    const c = g.spawn({ command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], cwd: process.cwd(), env: { PATH: process.env.PATH } },
      { label: 'x', logger: { info() {}, warn() {}, error() {} } });
    console.log('child ' + c.pid);
    setInterval(() => {}, 1000);`;
  const children = new ChildGroup();
  const parent = children.spawn(
    { command: process.execPath, args: ['--import', 'tsx', '--input-type=module', '-e', script], cwd: process.cwd(), env: { PATH: process.env.PATH ?? '' } },
    { label: 't/parent', logger: memoryLogger(), captureStdout: true },
  );
  await eventually(() => /child \d+/.test(parent.stdout()), 20_000);
  const child = Number(/child (\d+)/.exec(parent.stdout())?.[1]);
  assert.ok(alive(child));
  process.kill(parent.pid, 'SIGKILL');
  await eventually(() => !alive(child));
  await children.stopAll();
});

test('once the group stops (sless dev is stopping), a process whose child it killed is never restarted', async () => {
  const children = new ChildGroup();
  const logger = memoryLogger();
  const p = new SupervisedProcess({ label: 't/late', command: (port) => serverCommand(port), children, logger, backoff: { baseMs: 20, maxMs: 40 } });
  await p.start();
  // What a deploy finishing during shutdown leaves: a process its runner never got to stop.
  await children.stopAll();
  await eventually(() => p.state === 'stopped', 3000);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(p.state, 'stopped');
  assert.ok(!logger.lines.some((l) => /restarting in/.test(l)), logger.lines.join('\n'));
});
