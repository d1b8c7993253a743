// `npm run cluster:up [-- --no-controllers | --node]`: starts a test cluster that outlives this
// command, applies crds/, and writes .sless-test/kubeconfig. A control plane is recorded in
// .sless-test/cluster.json; a real node (--node, test/cluster/node/) in the machine's node record.
// `npm run cluster:down` stops either. A cluster already running from an earlier `up` is replaced.
import { access, constants } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { binaryPaths, startCluster } from './cluster.ts';
import { installCrds } from './install-crds.ts';
import { startNodeCluster } from './node/node-cluster.ts';
import { STATE_DIR, readState, stopFromState, stopOwnNode, writeState } from './state.ts';

const t0 = Date.now();

/** crds/ into the new cluster; a cluster whose CRDs cannot be installed is stopped, not left behind. */
async function installCrdsOrStop(kubeconfigPath: string, stop: () => Promise<void>): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  try {
    await installCrds(kc);
  } catch (error) {
    await stop();
    throw error;
  }
}

await stopFromState();
await stopOwnNode();

if (process.argv.includes('--node')) {
  // Another node on this machine (a test run) is waited for, but not for long: this is by hand.
  const node = await startNodeCluster({ dir: STATE_DIR, lockTimeoutMs: 60_000 });
  await installCrdsOrStop(node.kubeconfigPath, () => node.stop());
  console.log(
    `test cluster with a real node up in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${node.server}\n` +
      `  registry ${node.registry} (plain HTTP; with Basic auth: ${node.authRegistry.address}), host address for pods ${node.hostAddress}, logs ${node.logDir}\n` +
      `  export KUBECONFIG=${node.kubeconfigPath}\n  stop it with: npm run cluster:down`,
  );
  process.exit(0);
}

const withControllerManager =
  !process.argv.includes('--no-controllers') &&
  (await access(binaryPaths().controllerManager, constants.X_OK).then(
    () => true,
    () => false,
  ));
const cluster = await startCluster({ dir: STATE_DIR, withControllerManager });
await writeState({ kubeconfigPath: cluster.kubeconfigPath, server: cluster.server, processes: cluster.processes });
await installCrdsOrStop(cluster.kubeconfigPath, () => cluster.stop());
const state = await readState();
console.log(
  `test cluster up in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${cluster.server}` +
    ` (${state?.processes.map((p) => `${p.name}:${p.pid}`).join(' ')})\n` +
    `  export KUBECONFIG=${cluster.kubeconfigPath}\n  stop it with: npm run cluster:down`,
);
