// Test service `kube`: one real control plane (etcd + kube-apiserver + kube-controller-manager, see
// test/cluster/cluster.ts) for the whole test run, with crds/ applied and Established.
// Exports SLESS_TEST_KUBECONFIG (admin kubeconfig) and SLESS_TEST_KUBE_CONTROLLERS ("1" when
// kube-controller-manager runs). SLESS_TEST_KUBE_CONTROLLERS=0 in the environment starts the
// apiserver alone: nothing then creates pods, collects garbage or finishes namespace deletion.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { TestService } from '../run.ts';
import { killProcessGroupsNow, startCluster } from '../cluster/cluster.ts';
import { installCrds } from '../cluster/install-crds.ts';

export const service: TestService = {
  name: 'kube',
  async start() {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-kube-'));
    const withControllerManager = process.env.SLESS_TEST_KUBE_CONTROLLERS !== '0';
    const cluster = await startCluster({ dir, withControllerManager });
    // If the runner dies without stopping its services, do not leave a control plane behind.
    const lastResort = (): void => killProcessGroupsNow(cluster.processes);
    process.once('exit', lastResort);
    const stop = async (): Promise<void> => {
      process.off('exit', lastResort);
      await cluster.stop();
      await rm(dir, { recursive: true, force: true });
    };
    try {
      const kc = new KubeConfig();
      kc.loadFromFile(cluster.kubeconfigPath);
      await installCrds(kc);
    } catch (error) {
      await stop();
      throw error;
    }
    return {
      env: {
        SLESS_TEST_KUBECONFIG: cluster.kubeconfigPath,
        SLESS_TEST_KUBE_CONTROLLERS: withControllerManager ? '1' : '0',
      },
      stop,
    };
  },
};
