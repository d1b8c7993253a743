// A real `sless controller` (startControllerServer: HTTP /fn, /v1, /hooks + leader election +
// reconcilers) in its own process on the host, configured by SLESS_* variables as in a pod, scoped
// to one test's namespace (SLESS_TEST_WATCH_NAMESPACE; its Lease lives in the kit's build namespace) so test files
// can run side by side on the one node. Prints `ready <url>` once it serves; SIGTERM stops it as
// the CLI does. Killing it with SIGKILL plays a crashed controller pod.
import './cluster-dns.ts';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startControllerServer } from '../../src/cli/controller.ts';
import { loadControllerConfig } from '../../src/config/config.ts';
import { COUNTS_PATH } from '../../src/platform/kubernetes/scaling/counts-endpoint.ts';

const watchNamespace = process.env.SLESS_TEST_WATCH_NAMESPACE;
if (!watchNamespace) throw new Error('SLESS_TEST_WATCH_NAMESPACE is not set');
// Comma-separated for more than one (a test's namespace and the preview namespaces it will open); the Lease lives in the first.
const watched = watchNamespace.split(',');
const config = loadControllerConfig([]);
// Loopback unless a test needs pods to reach it (SLESS_TEST_CONTROLLER_HOST = the node's host address).
const host = process.env.SLESS_TEST_CONTROLLER_HOST ?? '127.0.0.1';
// Host processes are in no metrics Service's EndpointSlices, so by default the leader counts only its own
// calls. With SLESS_TEST_PEERS_DIR each controller writes its metrics URL to <dir>/<POD_NAME> and the
// leader asks every other file's URL for its counts, as it asks the pods the EndpointSlices list in a
// cluster (a killed replica's file stays, as a dead pod stays listed until the slice is updated).
const peersDir = process.env.SLESS_TEST_PEERS_DIR;
const self = process.env.POD_NAME ?? 'controller';
const peers = async (): Promise<string[]> => {
  if (!peersDir) return [];
  const names = (await readdir(peersDir)).filter((n) => n !== self);
  return Promise.all(names.map(async (n) => `${(await readFile(path.join(peersDir, n), 'utf8')).trim()}${COUNTS_PATH}`));
};
const server = await startControllerServer(config, { stdout: process.stdout, stderr: process.stderr }, {
  host,
  controller: { watchNamespace: watched, backoff: { baseMs: 500, maxMs: 5_000 } },
  // Fast takeover after a SIGKILL: another replica leads within a few seconds.
  leaderElection: { namespace: watched[0] as string, leaseDurationMs: 4_000, renewIntervalMs: 500, renewDeadlineMs: 3_000 },
  ...(peersDir ? { scaling: { peers } } : {}),
});
if (peersDir) await writeFile(path.join(peersDir, self), server.metricsUrl);
process.stdout.write(`ready ${server.url.replace('127.0.0.1', host)}\n`);
const stop = (): void => {
  process.once('SIGTERM', () => process.exit(130));
  void server.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop).once('SIGINT', stop);
