// Test service `node` (opt-in: SLESS_TEST_SERVICES=node,..., as `npm run test:node` does): one real
// single-node cluster (test/cluster/node/) for the whole run, with crds/ applied. It starts first,
// so the services after it (git, s3) listen on the node's bridge address, which pods reach.
// Exports SLESS_TEST_KUBECONFIG and SLESS_TEST_KUBE_CONTROLLERS as the `kube` service does (do
// not start both), plus:
//   SLESS_TEST_NODE=1               pods really run
//   SLESS_TEST_BIND_HOST            the address host services bind for pods to reach them
//   SLESS_TEST_REGISTRY             host:port of the image registry (plain HTTP; push from the
//                                   host, pull by containerd)
//   SLESS_TEST_AUTH_REGISTRY        host:port of a second registry that requires Basic auth (plain
//                                   HTTP), with its one user SLESS_TEST_AUTH_REGISTRY_USER/_PASSWORD
//   SLESS_TEST_NODE_BUSYBOX_IMAGE   a busybox image already on the node (imagePullPolicy: Never)
//   SLESS_TEST_NODE_LOGS            the components' logs
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { TestService } from '../run.ts';
import { installCrds } from '../cluster/install-crds.ts';
import { mountsUnder } from '../cluster/node/host.ts';
import { startNodeCluster } from '../cluster/node/node-cluster.ts';
import { killProcessGroupsNow } from '../cluster/processes.ts';

export const service: TestService = {
  name: 'node',
  optIn: true,
  order: 0,
  async start() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-node-'));
    const node = await startNodeCluster({ dir });
    // A runner that dies without stopping its services leaves nothing running; the next start
    // undoes the rest (mounts, chains) from the machine's node record.
    const lastResort = (): void => killProcessGroupsNow([...node.processes].reverse());
    process.once('exit', lastResort);
    const stop = async (): Promise<void> => {
      process.off('exit', lastResort);
      await node.stop();
      // The last run's logs stay for a look after a failure.
      const kept = path.join(os.tmpdir(), 'sless-node-last-logs');
      await rm(kept, { recursive: true, force: true });
      await cp(node.logDir, kept, { recursive: true }).catch(() => undefined);
      // Never delete through a mount that teardown could not remove (a pod's hostPath, ...).
      if (mountsUnder([dir]).length === 0) await rm(dir, { recursive: true, force: true });
    };
    try {
      const kc = new KubeConfig();
      kc.loadFromFile(node.kubeconfigPath);
      await installCrds(kc);
    } catch (error) {
      await stop();
      throw error;
    }
    return {
      env: {
        SLESS_TEST_KUBECONFIG: node.kubeconfigPath,
        SLESS_TEST_KUBE_CONTROLLERS: '1',
        SLESS_TEST_NODE: '1',
        SLESS_TEST_BIND_HOST: node.hostAddress,
        SLESS_TEST_REGISTRY: node.registry,
        SLESS_TEST_AUTH_REGISTRY: node.authRegistry.address,
        SLESS_TEST_AUTH_REGISTRY_USER: node.authRegistry.username,
        SLESS_TEST_AUTH_REGISTRY_PASSWORD: node.authRegistry.password,
        SLESS_TEST_NODE_BUSYBOX_IMAGE: node.images.busybox,
        SLESS_TEST_NODE_LOGS: node.logDir,
      },
      stop,
    };
  },
};
