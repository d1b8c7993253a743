// The abusive tenant of kube-fair-shares.test.ts, in a process of its own: a real abuser's clients are
// not on the controller's event loop, and the test measures the controller, not the cost of sending the
// flood. argv[2]: the Flood below as JSON. It floods until stdin says "stop" (or closes), then prints
// its counts as one JSON line and exits. Prints {"ready":true} once its workers run.
//  - /v1: `v1Workers` loops GETting the abuser's function list with its own token, back to back;
//  - /hooks: `hookWorkers` loops posting signed deliveries for its repositories in turn (the last pushed head);
//  - git: a push every `pushEveryMs` to its repositories in turn, changing every function of the repository
//    (a new build per function per push).
import { createInterface } from 'node:readline';
import { git, writeFiles } from '../helpers/git-server.ts';
import { signedPushDelivery } from '../helpers/push-delivery.ts';

export interface Flood {
  /** The controller's HTTP surface, e.g. http://127.0.0.1:1234 */
  readonly base: string;
  /** The abuser's /v1 bearer token and the path it GETs. */
  readonly token: string;
  readonly v1Path: string;
  readonly v1Workers: number;
  readonly webhookSecret: string;
  readonly hookWorkers: number;
  readonly pushEveryMs: number;
  /** Each repository: its /hooks path, a working clone (remote origin set), the function folders it changes. */
  readonly repositories: readonly { readonly hookPath: string; readonly cloneDir: string; readonly functions: readonly string[] }[];
}

const flood = JSON.parse(process.argv[2] ?? '') as Flood;
const counts = { v1: 0, v1Limited: 0, hooks: 0, hooksLimited: 0, failed: 0, pushes: 0, seconds: 0, cpuSeconds: 0 };
let stop = false;

const loop = async (send: () => Promise<Response>, ok: 'v1' | 'hooks', limited: 'v1Limited' | 'hooksLimited') => {
  while (!stop) {
    const res = await send().catch(() => undefined);
    await res?.arrayBuffer().catch(() => undefined);
    if (!res) counts.failed++;
    else if (res.status === 429) counts[limited]++;
    else counts[ok]++;
  }
};
const lastSha = flood.repositories.map(() => '1'.repeat(40));
let nextHook = 0;
const started = Date.now();
const workers = [
  ...Array.from({ length: flood.v1Workers }, () =>
    loop(() => fetch(`${flood.base}${flood.v1Path}`, { headers: { authorization: `Bearer ${flood.token}` } }), 'v1', 'v1Limited'),
  ),
  ...Array.from({ length: flood.hookWorkers }, () =>
    loop(() => {
      const r = nextHook++ % flood.repositories.length;
      const { body, headers } = signedPushDelivery(flood.webhookSecret, lastSha[r] ?? '');
      return fetch(`${flood.base}${flood.repositories[r]?.hookPath ?? ''}`, { method: 'POST', headers, body });
    }, 'hooks', 'hooksLimited'),
  ),
  (async () => {
    for (let i = 0; !stop; i++) {
      const pushed = Date.now();
      const r = i % flood.repositories.length;
      const repo = flood.repositories[r]!;
      await writeFiles(repo.cloneDir, Object.fromEntries(repo.functions.map((f) => [`functions/${f}/handler.js`, `exports.handle = async () => ${i};\n`])));
      await git(['add', '-A'], repo.cloneDir);
      await git(['commit', '--quiet', '-m', `noise ${i}`], repo.cloneDir);
      lastSha[r] = await git(['rev-parse', 'HEAD'], repo.cloneDir);
      await git(['push', '--quiet', 'origin', 'HEAD:refs/heads/main'], repo.cloneDir);
      counts.pushes++;
      await new Promise((res) => setTimeout(res, Math.max(0, flood.pushEveryMs - (Date.now() - pushed))));
    }
  })(),
];
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const line of createInterface({ input: process.stdin })) if (line.trim() === 'stop') break;
stop = true;
await Promise.all(workers);
counts.seconds = Math.round((Date.now() - started) / 1000);
const cpu = process.cpuUsage();
counts.cpuSeconds = Math.round((cpu.user + cpu.system) / 1e5) / 10;
process.stdout.write(`${JSON.stringify(counts)}\n`);
