// How soon `sless logs -f` shows what a function prints (issue 33). Not part of `npm test`:
//
//   node --import tsx test/bench/logs-follow.bench.ts [lines=30] [starts=5]
//
// A real `sless dev` serving a plain folder with one Node function that prints `marker N at <ms>`
// (Date.now() in the function process) per call. Measured on one machine, one clock:
//   print → shown (HTTP)  a /v1 .../logs?follow=1 reader: from the time in the line to its arrival
//   print → shown (CLI)   the same through a running `sless logs -f` child: to its stdout line
//   command → first line  `sless logs NAME -f --tail 1` started (node + tsx load the CLI) → first line
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDevProcess } from '../e2e/dev-harness.ts';
import { stats } from './dev-bench-kit.ts';

const lines = Number(process.argv[2] ?? 30);
const starts = Number(process.argv[3] ?? 5);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

async function main(): Promise<void> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'sless-logs-bench-'));
  await mkdir(path.join(folder, 'talker'));
  await writeFile(path.join(folder, 'talker/function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\n');
  await writeFile(path.join(folder, 'talker/handler.js'), 'exports.handle = async (e) => { console.log(`marker ${e.n} at ${Date.now()}`); return {}; };\n');
  const dev = await startDevProcess({ repo: folder });
  try {
    await dev.waitForLog(/talker: ready at/);
    const token = await dev.adminToken();
    const env = { ...process.env, SLESS_ENDPOINT: dev.url, SLESS_API_TOKEN: token, SLESS_NAMESPACE: 'dev', XDG_CONFIG_HOME: folder };
    const call = (n: number) => fetch(`${dev.url}/fn/dev/talker`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n }) }).then((r) => r.text());

    // HTTP reader and CLI reader side by side, both following.
    const arrivals = { http: new Map<number, number>(), cli: new Map<number, number>() };
    const note = (into: Map<number, number>, text: string) => {
      for (const m of text.matchAll(/marker (\d+) at (\d+)/g)) if (!into.has(Number(m[1]))) into.set(Number(m[1]), Date.now() - Number(m[2]));
    };
    const abort = new AbortController();
    const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/talker/logs?follow=1&tail=0`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    void (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) note(arrivals.http, decoder.decode(chunk));
      } catch {
        // aborted at the end
      }
    })();
    const cli = spawn(process.execPath, [path.join(root, 'bin/sless.js'), 'logs', 'talker', '-f', '--tail', '0'], { env });
    cli.stdout.setEncoding('utf8').on('data', (d: string) => note(arrivals.cli, d));
    // Both connected: a warm-up line seen by each.
    for (let n = 0; ; n++) {
      await call(n);
      await new Promise((r) => setTimeout(r, 200));
      if (arrivals.cli.has(n) && arrivals.http.has(n)) break;
      if (n > 200) throw new Error('the readers never connected');
    }
    const first = 1000;
    for (let n = first; n < first + lines; n++) {
      await call(n);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1000));
    cli.kill();
    abort.abort();
    const pick = (m: Map<number, number>) => [...m].filter(([n]) => n >= first).map(([, ms]) => ms);
    console.log(`print → shown (HTTP follow):  ${stats(pick(arrivals.http))}`);
    console.log(`print → shown (sless logs -f): ${stats(pick(arrivals.cli))}`);

    const firstLine: number[] = [];
    for (let i = 0; i < starts; i++) {
      const started = Date.now();
      const child = spawn(process.execPath, [path.join(root, 'bin/sless.js'), 'logs', 'talker', '-f', '--tail', '1'], { env });
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      firstLine.push(Date.now() - started);
      child.kill();
    }
    console.log(`command → first line (sless logs -f --tail 1, node + tsx start included): ${stats(firstLine)}`);
  } finally {
    await dev.dispose();
    await rm(folder, { recursive: true, force: true });
  }
}

await main();
