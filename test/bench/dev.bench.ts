// How fast `sless dev` turns a push into a served answer. Not part of `npm test`:
//
//   node --import tsx test/bench/dev.bench.ts [runs=10] [functions=20]
//
// A real git server (git http-backend) and the real CLI; a repository of N Node functions. Each run
// commits and pushes a change to one function (not timed), then times from sending the signed Gitea
// webhook to the first /fn answer that shows the change (polled every 5 ms):
//   code change   -> fetch, snapshot, plan, prepare a new folder, start a process, health, switch
//   config change -> fetch, snapshot, plan, start a process from the same folder, health, switch
import { callFunction, giteaPush, startDevProcess, disposeBenchRun } from '../e2e/dev-harness.ts';
import { benchRepository, stats } from './dev-bench-kit.ts';

const runs = Number(process.argv[2] ?? 10);
const functions = Number(process.argv[3] ?? 20);

const manifest = (greeting: string) => `runtime: nodejs20\nenv:\n  GREETING: "${greeting}"\n`;
const handler = (version: string) => `exports.handle = async () => ({ version: '${version}', greeting: process.env.GREETING });\n`;

async function main(): Promise<void> {
  const files: Record<string, string> = {};
  for (let i = 0; i < functions; i++) {
    files[`functions/f${i}/function.yaml`] = manifest('g0');
    files[`functions/f${i}/handler.js`] = handler('v0');
  }
  const { server, repo, clone } = await benchRepository('dev-bench', files);
  const dev = await startDevProcess({ repo: repo.url, path: 'functions' });
  try {
    await dev.waitForLog(/synced rev/, { timeoutMs: 120_000 });

    const measure = async (label: string, change: (i: number) => Record<string, string>, expect: (body: string, i: number) => boolean) => {
      const times: number[] = [];
      for (let i = 1; i <= runs; i++) {
        await clone.write(change(i));
        const sha = await clone.commitAndPush(`${label} ${i}`);
        const t0 = performance.now();
        const res = await giteaPush(dev, { after: sha });
        if (res.status !== 202) throw new Error(`webhook answered ${res.status}`);
        for (;;) {
          const r = await callFunction(dev.url, 'f0');
          if (r.status !== 200) throw new Error(`f0 answered ${r.status} during the swap: ${r.body}`);
          if (expect(r.body, i)) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        times.push(performance.now() - t0);
        // Let the old process drain and stop before the next run.
        await new Promise((r) => setTimeout(r, 1200));
      }
      console.log(`${label.padEnd(14)} ${stats(times)}`);
    };

    console.log(`sless dev, ${functions} Node functions, webhook -> new answer on /fn/dev/f0, ${runs} runs each:`);
    await measure(
      'code change',
      (i) => ({ 'functions/f0/handler.js': handler(`v${i}`) }),
      (body, i) => body.includes(`"version":"v${i}"`),
    );
    await measure(
      'config change',
      (i) => ({ 'functions/f0/function.yaml': manifest(`g${i}`) }),
      (body, i) => body.includes(`"greeting":"g${i}"`),
    );
    const syncMs = [...dev.log().matchAll(/synced rev \S+ \(.*\) in (\d+) ms \[/g)].map((m) => Number(m[1]));
    console.log(`sync durations as logged by dev (fetch..switch), code runs then config runs: ${syncMs.join(' ')}`);
    const rebuilt = (dev.log().match(/f0: building/g) ?? []).length;
    console.log(`prepared folders built for f0: ${rebuilt} (1 initial + ${runs} code changes expected)`);
  } finally {
    await disposeBenchRun(dev, clone, server);
  }
}

await main();
