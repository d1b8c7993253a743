// How fast `sless dev --previews` turns a pull request into a served preview, next to the main
// branch's push-to-serve in the same run. Not part of `npm test`:
//
//   flock /work/.bench.lock node --import tsx test/bench/dev-previews.bench.ts [runs=5] [functions=20]
//
// A real git server (git http-backend), the real CLI, a repository of N Node functions; deliveries are
// signed exactly as Gitea signs them. Timed from sending the delivery to the first /fn answer that
// shows the change (polled every 5 ms):
//   main push       push webhook -> /fn/dev/f1 answers the new version (the baseline)
//   PR opened       pull_request "opened" -> /fn/dev-pr-<N>/f0 answers the PR's version (fetch of both
//                   branches, merge base, plan, prepare, start); then closed (not timed)
//   push to PR      pull_request "synchronized" -> /fn/dev-pr-100/f0 answers the pushed version
import { git as gitIn } from '../helpers/git-server.ts';
import { callFunction, giteaPullRequest, giteaPush, startDevProcess, type DevProcess, disposeBenchRun } from '../e2e/dev-harness.ts';
import { benchRepository } from './dev-bench-kit.ts';

const runs = Number(process.argv[2] ?? 5);
const functions = Number(process.argv[3] ?? 20);

const handler = (version: string) => `exports.handle = async () => ({ version: '${version}' });\n`;

function median(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const m = s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  return `median ${m.toFixed(0)} ms  (min ${s[0]?.toFixed(0)}, max ${s.at(-1)?.toFixed(0)}; n=${s.length})`;
}

async function pullRequest(dev: DevProcess, action: string, number: number, branch: string, sha: string): Promise<void> {
  const res = await giteaPullRequest(dev, { action, number, branch, sha });
  if (res.status !== 202) throw new Error(`pull_request ${action} answered ${res.status}: ${await res.text()}`);
}

async function answers(dev: DevProcess, namespace: string, name: string, version: string, t0: number): Promise<number> {
  for (;;) {
    const r = await callFunction(dev.url, name, undefined, namespace);
    if (r.status === 200 && r.body.includes(`"version":"${version}"`)) return performance.now() - t0;
    if (performance.now() - t0 > 120_000) throw new Error(`/fn/${namespace}/${name} did not answer ${version} within 120 s (last: ${r.status} ${r.body})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function main(): Promise<void> {
  const files: Record<string, string> = {};
  for (let i = 0; i < functions; i++) {
    files[`functions/f${i}/function.yaml`] = 'runtime: nodejs20\n';
    files[`functions/f${i}/handler.js`] = handler('v0');
  }
  const { server, repo, clone } = await benchRepository('previews-bench', files);
  const dev = await startDevProcess({ repo: repo.url, path: 'functions', extraArgs: ['--previews'] });
  const git = (...args: string[]) => gitIn(args, clone.dir);
  try {
    await dev.waitForLog(/synced rev/, { timeoutMs: 120_000 });
    const main: number[] = [];
    const opened: number[] = [];
    const pushed: number[] = [];
    // The long-lived PR the "push to PR" runs push to.
    await git('checkout', '-q', '-b', 'pr-100');
    await clone.write({ 'functions/f0/handler.js': handler('p100-0') });
    let sha = await clone.commitAndPush('pr 100', { branch: 'pr-100' });
    await pullRequest(dev, 'opened', 100, 'pr-100', sha);
    await answers(dev, 'dev-pr-100', 'f0', 'p100-0', performance.now());
    for (let i = 1; i <= runs; i++) {
      // main push (baseline)
      await git('checkout', '-q', 'main');
      await clone.write({ 'functions/f1/handler.js': handler(`m${i}`) });
      sha = await clone.commitAndPush(`main ${i}`);
      let t0 = performance.now();
      const res = await giteaPush(dev, { after: sha });
      if (res.status !== 202) throw new Error(`push webhook answered ${res.status}`);
      main.push(await answers(dev, 'dev', 'f1', `m${i}`, t0));
      await new Promise((r) => setTimeout(r, 1200));
      // PR opened
      await git('checkout', '-q', '-b', `pr-${i}`, 'main');
      await clone.write({ 'functions/f0/handler.js': handler(`pr${i}`) });
      sha = await clone.commitAndPush(`pr ${i}`, { branch: `pr-${i}` });
      t0 = performance.now();
      await pullRequest(dev, 'opened', i, `pr-${i}`, sha);
      opened.push(await answers(dev, `dev-pr-${i}`, 'f0', `pr${i}`, t0));
      await pullRequest(dev, 'closed', i, `pr-${i}`, sha);
      await new Promise((r) => setTimeout(r, 1200));
      // push to the open PR
      await git('checkout', '-q', 'pr-100');
      await clone.write({ 'functions/f0/handler.js': handler(`p100-${i}`) });
      sha = await clone.commitAndPush(`pr 100 push ${i}`, { branch: 'pr-100' });
      t0 = performance.now();
      await pullRequest(dev, 'synchronized', 100, 'pr-100', sha);
      pushed.push(await answers(dev, 'dev-pr-100', 'f0', `p100-${i}`, t0));
      await new Promise((r) => setTimeout(r, 1200));
    }
    console.log(`sless dev --previews, ${functions} Node functions, delivery -> new answer, ${runs} runs each (alternating):`);
    console.log(`main push      ${median(main)}`);
    console.log(`PR opened      ${median(opened)}`);
    console.log(`push to PR     ${median(pushed)}`);
  } finally {
    await disposeBenchRun(dev, clone, server);
  }
}

await main();
