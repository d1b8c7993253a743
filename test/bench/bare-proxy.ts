// The yardstick: the least a Node streaming proxy does (node:http server + undici Pool, no
// framework, no logging, no metrics). argv: upstream base URL. Prints {"port": N}.
import { createServer } from 'node:http';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2] ?? 'http://127.0.0.1:1', { connections: 128, keepAliveTimeout: 60_000 });
const hop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);
const strip = (h: Record<string, string | string[] | undefined>) => Object.fromEntries(Object.entries(h).filter(([k]) => !hop.has(k)));
const server = createServer((req, res) => {
  const hasBody = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  pool.stream(
    { path: req.url ?? '/', method: req.method as 'GET', headers: strip(req.headers) as Record<string, string>, body: hasBody ? req : null },
    ({ statusCode, headers }) => (res.writeHead(statusCode, strip(headers)), res),
    (err) => err && (res.headersSent ? res.destroy() : res.writeHead(502).end()),
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`));
