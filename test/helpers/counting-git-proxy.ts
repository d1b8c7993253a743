// A plain HTTP proxy in front of the shared git test server that records `METHOD path` of every request
// (the repository's own name left out: `POST /R/git-upload-pack`), to count what a sync asks of git.
//
//   const proxy = await countingGitProxy();
//   const url = `${proxy.url}${new URL(repo.url).pathname}`;   // give this to the code under test
//   proxy.seen.length = 0; ...; assert.deepEqual(proxy.seen, ['POST /R/git-upload-pack']);
//   await proxy.close();
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sharedGitServer } from './git-server.ts';

export interface CountingGitProxy {
  readonly url: string;
  readonly seen: string[];
  close(): Promise<void>;
}

export async function countingGitProxy(): Promise<CountingGitProxy> {
  const target = new URL(sharedGitServer().url);
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${(req.url ?? '').replace(/\?.*$/, '').replace(/^\/[^/]+\.git\//, '/R/')}`);
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
