// `npm run cluster:up [-- --no-controllers]`: starts a test cluster that outlives this command,
// applies crds/, and writes .sless-test/kubeconfig and .sless-test/cluster.json (what
// `npm run cluster:down` stops). A cluster already running from an earlier `up` is replaced.
import { access, constants } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { binaryPaths, startCluster } from './cluster.ts';
import { installCrds } from './install-crds.ts';
import { STATE_DIR, readState, stopFromState, writeState } from './state.ts';

const t0 = Date.now();
await stopFromState();
const withControllerManager =
  !process.argv.includes('--no-controllers') &&
  (await access(binaryPaths().controllerManager, constants.X_OK).then(
    () => true,
    () => false,
  ));
const cluster = await startCluster({ dir: STATE_DIR, withControllerManager });
await writeState({ kubeconfigPath: cluster.kubeconfigPath, server: cluster.server, processes: cluster.processes });
const kc = new KubeConfig();
kc.loadFromFile(cluster.kubeconfigPath);
try {
  await installCrds(kc);
} catch (error) {
  await cluster.stop();
  throw error;
}
const state = await readState();
console.log(
  `test cluster up in ${((Date.now() - t0) / 1000).toFixed(1)}s at ${cluster.server}` +
    ` (${state?.processes.map((p) => `${p.name}:${p.pid}`).join(' ')})\n` +
    `  export KUBECONFIG=${cluster.kubeconfigPath}\n  stop it with: npm run cluster:down`,
);
