// Issue 31 item 2's hostile input, shared by the `sless dev` and the controller suites: a .slessignore
// repeating `**/` 16 times beside a file 30 folders deep (the matching library used to backtrack for
// hours), as a function folder for git and as a zip for /v1, and the /healthz probe that shows the
// process kept answering meanwhile.
import assert from 'node:assert/strict';
import { writeZip } from '../../src/http/write-zip.ts';

const HOSTILE = `# hostile\n${'**/'.repeat(16)}x\n`;
const DEEP = `${Array.from({ length: 30 }, (_, i) => `d${i}`).join('/')}/deep.js`;
const CODE = 'exports.handle = async () => 1;\n';

/** A function folder `<name>/` with the hostile .slessignore, for WorkClone.write. */
export function hostileFunctionFolder(name: string): Record<string, string> {
  return { [`${name}/function.yaml`]: 'runtime: nodejs20\n', [`${name}/index.js`]: CODE, [`${name}/.slessignore`]: HOSTILE, [`${name}/${DEEP}`]: '1;\n' };
}

/** Creates Function `name` through /v1 and uploads the hostile zip to it: how the upload was answered, and in how many ms. */
export async function uploadHostileZip(
  baseUrl: string,
  namespace: string,
  name: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ readonly status: number; readonly body: string; readonly ms: number }> {
  const fn = `${baseUrl}/v1/namespaces/${namespace}/functions`;
  const created = await fetch(fn, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ name, runtime: 'nodejs20' }) });
  assert.ok(created.status < 300, `create answered ${created.status}: ${await created.text()}`);
  const files: Array<[string, string]> = [['index.js', CODE], ['.slessignore', HOSTILE], [DEEP, '1;\n']];
  const zip = writeZip(files.map(([path, content]) => ({ path, mode: '100644' as const, content: Buffer.from(content) })));
  const t = Date.now();
  const res = await fetch(`${fn}/${name}/upload`, { method: 'POST', headers: { ...headers, 'content-type': 'application/zip' }, body: zip, signal: AbortSignal.timeout(timeoutMs) });
  const ms = Date.now() - t;
  return { status: res.status, body: await res.text(), ms };
}

/** Polls `<url>/healthz` every `everyMs` until stopped (each answer must be 200); stop() gives the slowest answer in ms. */
export function probeHealth(url: string, everyMs: number, timeoutMs = 10_000): { stop: () => Promise<number> } {
  let on = true;
  let slowest = 0;
  const loop = (async () => {
    while (on) {
      const t = Date.now();
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      assert.equal(res.status, 200);
      slowest = Math.max(slowest, Date.now() - t);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return slowest;
    },
  };
}
