// The web console's listing with many functions (not part of npm test). Run:
//   node --import tsx test/bench/console.bench.ts [--functions 1000] [--runs 30]
// The real app (buildApp) on the memory platform, through app.inject(): GET /funcs/<ns> as HTML
// (Eta render of every row), as plain text and as JSON, beside /v1's JSON list of the same
// functions as the baseline (same data, no template). Medians and p95 over the runs, after warm-up.
import { parseArgs } from 'node:util';
import { addManyFunctions } from '../helpers/many-functions.ts';
import { hs256Token, NS, testApp } from '../helpers/http-test-kit.ts';

const { values: args } = parseArgs({ options: { functions: { type: 'string', default: '1000' }, runs: { type: 'string', default: '30' } } });
const count = Number(args.functions);
const runs = Number(args.runs);

const { app, platform } = await testApp();
addManyFunctions(platform, NS, count);
const auth = { authorization: `Bearer ${await hs256Token()}` };

async function measure(url: string, accept: string): Promise<{ median: number; p95: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs + 5; i++) {
    const t0 = process.hrtime.bigint();
    const res = await app.inject({ url, headers: { ...auth, accept } });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}`);
    bytes = res.rawPayload.length;
    if (i >= 5) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)] as number, p95: times[Math.floor(times.length * 0.95)] as number, bytes };
}

const rows: Array<[string, string, string]> = [
  ['console HTML', `/funcs/${NS}`, 'text/html'],
  ['console plain text', `/funcs/${NS}`, '*/*'],
  ['console JSON', `/funcs/${NS}`, 'application/json'],
  ['/v1 JSON (baseline)', `/v1/namespaces/${NS}/functions`, 'application/json'],
];
console.log(`${count} functions, ${runs} runs each (after 5 warm-up runs)`);
for (const [what, url, accept] of rows) {
  const r = await measure(url, accept);
  console.log(`${what.padEnd(22)} median ${r.median.toFixed(1).padStart(7)} ms   p95 ${r.p95.toFixed(1).padStart(7)} ms   ${(r.bytes / 1024).toFixed(0)} KiB`);
}
await app.close();
