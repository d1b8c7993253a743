// A sless app in its own process, for measurements that must not mix with the test's own memory
// (RSS while streaming) and for the benchmark. argv: upstream base URL, optional body limit.
// Prints {"port": N} once listening; answers "rss" on stdin with {"baseline","peak"} in bytes,
// and "reset" starts a new baseline.
import { createInterface } from 'node:readline';
import { listen, testApp } from './http-test-kit.ts';

const [upstreamUrl, limit] = process.argv.slice(2);
if (!upstreamUrl) throw new Error('usage: proxy-child.ts <upstream-url> [body-limit-bytes]');
const { app, platform } = await testApp({ limits: { proxyBodyBytes: Number(limit ?? 100 * 1024 * 1024) } });
platform.serve('dev', 'fn', upstreamUrl);
const base = await listen(app);
let baseline = process.memoryUsage().rss;
let peak = baseline;
setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 10).unref();
process.stdout.write(`${JSON.stringify({ port: Number(new URL(base).port) })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'reset') {
    baseline = peak = process.memoryUsage().rss;
    process.stdout.write('{"ok":true}\n');
  } else if (line === 'rss') {
    process.stdout.write(`${JSON.stringify({ baseline, peak })}\n`);
  }
}
await app.close();
