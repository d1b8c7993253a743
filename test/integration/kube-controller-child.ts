// A controller in its own process, so a test can SIGKILL it mid-build (kube-kill.test.ts). Reads its
// options as JSON from SLESS_TEST_CHILD_OPTIONS and prints "ready" once its informers have synced.
import { KubeConfig } from '@kubernetes/client-node';
import { Controller } from '../../src/platform/kubernetes/controller.ts';
import type { ControllerSettings } from '../../src/platform/kubernetes/settings.ts';

interface ChildOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly settings: ControllerSettings;
}

const opts = JSON.parse(process.env.SLESS_TEST_CHILD_OPTIONS ?? '{}') as ChildOptions;
const kc = new KubeConfig();
kc.loadFromFile(opts.kubeconfig);
const line = (level: string) => (m: string) => process.stderr.write(`${level} ${m}\n`);
const controller = new Controller({
  kubeConfig: kc,
  logger: { info: line('info'), warn: line('warn'), error: line('error') },
  settings: opts.settings,
  watchNamespace: opts.namespace,
  backoff: { baseMs: 200, maxMs: 2_000 },
});
await controller.start();
process.stdout.write('ready\n');
