// Every runtime server takes the address to listen on from SLESS_BIND_ADDRESS, as it takes PORT:
// `sless dev` sets loopback so nothing reaches a function around the proxy's limits and log; in an
// image it is unset and the server listens on all interfaces (the kubelet and Service need that).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLoopback, listeningAddresses } from '../helpers/listening.ts';
import { startServer, TARGETS } from './runtimes-support.ts';

for (const target of TARGETS) {
  describe(`${target.runtime} runtime server: bind address`, { timeout: 360_000 }, () => {
    it('listens on loopback only with SLESS_BIND_ADDRESS=127.0.0.1', async () => {
      await target.prepare();
      const server = await startServer(target.contextHandler(), { SLESS_BIND_ADDRESS: '127.0.0.1' });
      try {
        const addresses = await listeningAddresses(server.pid);
        assert.ok(addresses.length > 0, 'found its listening socket');
        assert.ok(addresses.every(isLoopback), addresses.join(', '));
      } finally {
        await server.stop();
      }
    });

    it('listens on all interfaces without it (the image default)', async () => {
      const server = await startServer(target.contextHandler(), {});
      try {
        const addresses = await listeningAddresses(server.pid);
        assert.ok(addresses.some((a) => /^0\.0\.0\.0:|^\[::\]:/.test(a)), addresses.join(', '));
      } finally {
        await server.stop();
      }
    });
  });
}
