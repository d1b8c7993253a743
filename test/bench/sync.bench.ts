// Sync benchmark (not part of npm test):
//   node --import tsx test/bench/sync.bench.ts [--functions 1000] [--runs 7]
// A generated repository with N function folders of 5 files each, served by git http-backend on
// 127.0.0.1. Measures, each as the median of several runs:
//   cold sync       fresh cache: ls-remote + shallow fetch + snapshot + plan
//   warm, no change ls-remote + snapshot + plan (the fetch is skipped)
//   warm, 1 change  after a push changing one function: fetch + snapshot + plan; the plan must
//                   name exactly that function; also with the new head named up front (a webhook
//                   names it: no ls-remote)
// next to the git CLI doing the same in the same run (`git clone --depth 1`, `git fetch --depth 1`),
// and the cold sync once more with isomorphic-git alone (`gitCli: false`, the fallback where no git
// binary is installed). Prints the load average: the machine is shared.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { planChanges } from '../../src/plan/plan-changes.ts';
import { SnapshotBuilder } from '../../src/source/build-snapshot.ts';
import { GitSource } from '../../src/source/git-source.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';
import type { Snapshot } from '../../src/source/types.ts';
import { createRepo, git, startGitServer, WorkClone } from '../helpers/git-server.ts';

const { values } = parseArgs({ options: { functions: { type: 'string', default: '1000' }, runs: { type: 'string', default: '7' } } });
const FUNCTIONS = Number(values.functions);
const RUNS = Number(values.runs);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;
const filler = (bytes: number): string => randomBytes(bytes).toString('base64');

function functionFiles(i: number): Record<string, string> {
  const dir = `functions/fn-${String(i).padStart(4, '0')}`;
  return {
    [`${dir}/function.yaml`]: `runtime: nodejs20\nmemory_mb: 128\nenv:\n  INDEX: "${i}"\n`,
    [`${dir}/handler.js`]: `// ${filler(1200)}\nexports.handle = async () => ({ i: ${i} });\n`,
    [`${dir}/lib/util.js`]: `// ${filler(1500)}\nmodule.exports = {};\n`,
    [`${dir}/package.json`]: JSON.stringify({ name: `fn-${i}`, version: '1.0.0', description: filler(300) }, null, 2),
    [`${dir}/README.md`]: `# fn-${i}\n\n${filler(1200)}\n`,
  };
}

/** The git server of the tests listens on loopback. */
const LOCAL = TargetPolicy.anyTarget();
const server = await startGitServer();
const work: string[] = [server.root];
try {
  const repo = await createRepo(server, 'bench');
  const clone = await WorkClone.create(repo);
  work.push(clone.dir);
  let t0 = process.hrtime.bigint();
  const files: Record<string, string> = {};
  for (let i = 0; i < FUNCTIONS; i++) Object.assign(files, functionFiles(i));
  await clone.write(files);
  await clone.commitAndPush('generated');
  const packKb = Number((await git(['count-objects', '-v'], repo.gitdir)).match(/size-pack: (\d+)/)?.[1] ?? 0);
  console.log(`repository: ${FUNCTIONS} functions x 5 files, pack ${(packKb / 1024).toFixed(1)} MB, generated + pushed in ${ms(t0).toFixed(0)} ms`);

  const plan = (prev: Snapshot | undefined, next: Snapshot) => planChanges(prev, next);

  // Cold: a fresh cache and a fresh builder each run.
  const cold: number[] = [];
  const coldPhases = { fetch: [] as number[], snapshot: [] as number[] };
  const coldIso: number[] = [];
  const coldIsoPhases = { fetch: [] as number[], snapshot: [] as number[] };
  const gitClone: number[] = [];
  const coldSync = async (gitCli: boolean, total: number[], phases: typeof coldPhases) => {
    const cache = await mkdtemp(path.join(os.tmpdir(), 'sless-bench-'));
    work.push(cache);
    const source = new GitSource({ url: repo.url, cacheDir: cache, targets: LOCAL, gitCli });
    const start = process.hrtime.bigint();
    const { tree } = await source.sync();
    const t1 = process.hrtime.bigint();
    const snap = await new SnapshotBuilder().build(tree);
    phases.snapshot.push(ms(t1));
    phases.fetch.push(Number(t1 - start) / 1e6);
    const p = plan(undefined, snap);
    total.push(ms(start));
    if (p.added.length !== FUNCTIONS) throw new Error(`cold plan added ${p.added.length}, expected ${FUNCTIONS}`);
    await source.close();
    return cache;
  };
  for (let r = 0; r < Math.min(RUNS, 3); r++) {
    await coldSync(false, coldIso, coldIsoPhases);
    const cache = await coldSync(true, cold, coldPhases);
    const cliDir = path.join(cache, 'cli');
    t0 = process.hrtime.bigint();
    await git(['clone', '--quiet', '--depth', '1', '--single-branch', '--no-tags', '--bare', repo.url, cliDir]);
    gitClone.push(ms(t0));
  }

  // Warm: one long-lived source + builder, as the controller keeps them.
  const cache = await mkdtemp(path.join(os.tmpdir(), 'sless-bench-'));
  work.push(cache);
  const source = new GitSource({ url: repo.url, cacheDir: cache, targets: LOCAL });
  const builder = new SnapshotBuilder();
  let prev = await builder.build((await source.sync()).tree);
  const cliDir = path.join(cache, 'cli');
  await git(['clone', '--quiet', '--depth', '1', '--single-branch', '--no-tags', repo.url, cliDir]);

  const noChange: number[] = [];
  const gitNoChange: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    t0 = process.hrtime.bigint();
    const { tree, fetched } = await source.sync();
    const next = await builder.build(tree);
    const p = plan(prev, next);
    noChange.push(ms(t0));
    if (fetched || p.rebuild.length + p.redeploy.length + p.added.length + p.removed.length !== 0) throw new Error('no-change sync changed something');
    prev = next;
    t0 = process.hrtime.bigint();
    await git(['fetch', '--quiet', '--depth', '1', 'origin', 'main'], cliDir);
    gitNoChange.push(ms(t0));
  }

  const oneChange: number[] = [];
  const hintedChange: number[] = [];
  const phases = { fetch: [] as number[], snapshot: [] as number[], plan: [] as number[] };
  const hintedPhases = { fetch: [] as number[], snapshot: [] as number[], plan: [] as number[] };
  const gitOneChange: number[] = [];
  for (let r = 0; r < 2 * RUNS; r++) {
    // Even runs: ls-remote + fetch (polling); odd runs: the webhook named the head.
    const hinted = r % 2 === 1;
    const i = (r * 137) % FUNCTIONS;
    const name = `fn-${String(i).padStart(4, '0')}`;
    await clone.write({ [`functions/${name}/handler.js`]: `// ${filler(1200)}\nexports.handle = async () => ({ i: ${i}, r: ${r} });\n` });
    const head = await clone.commitAndPush(`change ${name}`);
    t0 = process.hrtime.bigint();
    const { tree } = await source.sync(hinted ? { head } : {});
    const t1 = process.hrtime.bigint();
    const next = await builder.build(tree);
    const t2 = process.hrtime.bigint();
    const p = plan(prev, next);
    (hinted ? hintedChange : oneChange).push(ms(t0));
    const into = hinted ? hintedPhases : phases;
    into.fetch.push(Number(t1 - t0) / 1e6);
    into.snapshot.push(Number(t2 - t1) / 1e6);
    into.plan.push(ms(t2));
    const touched = [...p.rebuild, ...p.redeploy, ...p.added, ...p.removed].map((f) => f.name);
    if (touched.length !== 1 || touched[0] !== name || p.rebuild[0]?.name !== name) {
      throw new Error(`one-change plan should rebuild exactly ${name}, got ${JSON.stringify(touched)}`);
    }
    prev = next;
    if (hinted) continue;
    // The same change for the CLI: push once more, then fetch.
    await clone.write({ [`functions/${name}/README.md`]: `# ${filler(600)}\n` });
    await clone.commitAndPush(`cli change ${name}`);
    prev = await builder.build((await source.sync()).tree);
    t0 = process.hrtime.bigint();
    await git(['fetch', '--quiet', '--depth', '1', 'origin', 'main'], cliDir);
    gitOneChange.push(ms(t0));
  }
  await source.close();

  const row = (label: string, ours: number[], cli: number[], cliLabel: string) =>
    console.log(`${label.padEnd(18)} ${median(ours).toFixed(0).padStart(6)} ms   | git CLI ${cliLabel.padEnd(22)} ${median(cli).toFixed(0).padStart(6)} ms   (runs: ${ours.length})`);
  const ratio = (ours: number[], cli: number[]) => (median(ours) / median(cli)).toFixed(2);
  console.log(`\nmedians (node ${process.version}, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')})`);
  row('cold sync', cold, gitClone, 'clone --depth 1 (bare)');
  row('cold, iso-git only', coldIso, gitClone, 'clone --depth 1 (bare)');
  row('warm, no change', noChange, gitNoChange, 'fetch --depth 1');
  row('warm, one change', oneChange, gitOneChange, 'fetch --depth 1');
  row('one change, hinted', hintedChange, gitOneChange, 'fetch --depth 1');
  console.log(
    `ratios to the git CLI: cold ${ratio(cold, gitClone)}x (isomorphic-git only ${ratio(coldIso, gitClone)}x), one change ${ratio(oneChange, gitOneChange)}x, one change after a webhook naming the head ${ratio(hintedChange, gitOneChange)}x`,
  );
  console.log(`\none-change sync goal < 1000 ms: ${median(oneChange) < 1000 ? 'met' : 'NOT met'}; every one-change plan named exactly the changed function`);
  console.log(`cold phases (median ms): ls-remote + fetch ${median(coldPhases.fetch).toFixed(0)}, snapshot ${median(coldPhases.snapshot).toFixed(0)}`);
  console.log(`cold phases, isomorphic-git only (median ms): ls-remote + fetch ${median(coldIsoPhases.fetch).toFixed(0)}, snapshot ${median(coldIsoPhases.snapshot).toFixed(0)}`);
  console.log(
    `one-change phases (median ms): ls-remote + fetch ${median(phases.fetch).toFixed(0)}, snapshot ${median(phases.snapshot).toFixed(0)}, plan ${median(phases.plan).toFixed(0)}`,
  );
  console.log(
    `hinted one-change phases (median ms): fetch ${median(hintedPhases.fetch).toFixed(0)}, snapshot ${median(hintedPhases.snapshot).toFixed(0)}, plan ${median(hintedPhases.plan).toFixed(0)}`,
  );
  console.log(`all one-change runs (ms): ${oneChange.map((x) => x.toFixed(0)).join(', ')}; hinted: ${hintedChange.map((x) => x.toFixed(0)).join(', ')}; git fetch: ${gitOneChange.map((x) => x.toFixed(0)).join(', ')}`);
} finally {
  await server.stop();
  for (const d of work) await rm(d, { recursive: true, force: true });
}
