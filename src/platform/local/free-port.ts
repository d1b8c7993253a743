// Asks the kernel for an unused loopback port. Another process could take it before the child binds;
// the supervisor treats that like any failed start (the child exits, it retries on a new port).
import { createServer } from 'node:net';

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the port of a probe socket'))));
    });
  });
}
