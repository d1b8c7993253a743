// The function stand-in for the benchmark: a plain node:http server answering a small JSON body.
// Prints {"port": N} once listening.
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ message: 'hello from the function', ok: true }));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
