// `sless check [--pre] [--kubeconfig P] [--namespace sless-system] [--settings-from cluster|env]`, in the
// spirit of `flux check`: one ✔/✖ line per piece, a fix under each ✖ naming the setting to change,
// exit 0 only when all pass. --pre (before install): the cluster's version, the APIs and the rights an
// install needs. Otherwise: the controller's settings, read from the ConfigMap and Secret its
// StatefulSet's envFrom names (--settings-from env: this shell's variables) and checked by the same
// loadControllerConfig the controller runs, then CRDs, controller and leader, S3, registry and push
// Secret, every image, auth and the build NetworkPolicy. S3 and the registry are probed from where
// this runs: with in-cluster endpoints, run it in the cluster or through a port-forward.
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { exitCodeOf, fail, formatResult, messageOf, pass, type CheckResult } from '../check/check-result.ts';
import { checkBuildNetworkPolicy, checkController, checkCrds, checkKubeVersion, checkPrerequisites } from '../check/cluster-checks.ts';
import { kubeReader, type KubeReader } from '../check/kube-reader.ts';
import { checkAuth, checkImages, checkRegistry, checkS3 } from '../check/service-checks.ts';
import { loadControllerConfig } from '../config/config.ts';
import { loadCheckConfig } from '../config/tool-settings.ts';
import { packageRoot } from '../package-root.ts';
import { controllerSettings } from './controller.ts';
import { resolveControllerSettings } from '../platform/kubernetes/settings.ts';
import type { CommandIo } from './io.ts';

type Env = Record<string, string | undefined>;

interface EnvSource {
  readonly configMapRef?: { readonly name?: string };
  readonly secretRef?: { readonly name?: string };
}

/** The controller container's environment as its StatefulSet gives it: envFrom ConfigMaps and Secrets, then literal env values. */
export async function clusterSettingsEnv(kube: KubeReader, namespace: string): Promise<{ env: Env; from: string }> {
  const set = await kube.get<{ spec?: { template?: { spec?: { containers?: Array<{ name?: string; envFrom?: EnvSource[]; env?: Array<{ name: string; value?: string }> }> } } } }>(
    `/apis/apps/v1/namespaces/${namespace}/statefulsets/sless-controller`,
  );
  const container = set?.spec?.template?.spec?.containers?.find((c) => c.name === 'controller');
  const sources: EnvSource[] = container?.envFrom ?? [{ configMapRef: { name: 'sless-controller-config' } }, { secretRef: { name: 'sless-controller-secrets' } }];
  const env: Env = { POD_NAMESPACE: namespace };
  const from: string[] = [];
  for (const s of sources) {
    if (s.configMapRef?.name) {
      const cm = await kube.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/configmaps/${s.configMapRef.name}`);
      from.push(`ConfigMap ${namespace}/${s.configMapRef.name}${cm ? '' : ' (missing)'}`);
      Object.assign(env, cm?.data ?? {});
    } else if (s.secretRef?.name) {
      const secret = await kube.get<{ data?: Record<string, string> }>(`/api/v1/namespaces/${namespace}/secrets/${s.secretRef.name}`);
      from.push(`Secret ${namespace}/${s.secretRef.name}${secret ? '' : ' (missing)'}`);
      for (const [k, v] of Object.entries(secret?.data ?? {})) env[k] = Buffer.from(v, 'base64').toString('utf8');
    }
  }
  for (const e of container?.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return { env, from: from.join(', ') || 'nothing' };
}

export interface CheckOptions {
  readonly kube: KubeReader;
  /** The controller's namespace. */
  readonly namespace: string;
  readonly pre: boolean;
  readonly settingsFrom: 'cluster' | 'env';
  /** The CRDs the cluster should have; default this package's crds/. */
  readonly crdsDir?: string;
  readonly env?: Env;
}

/** Runs the checks in order, handing each result to `print` as it comes; answers them all. */
export async function runChecks(options: CheckOptions, print: (r: CheckResult) => void = () => undefined): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const add = (r: CheckResult): void => {
    results.push(r);
    print(r);
  };
  const { kube, namespace } = options;
  const version = await checkKubeVersion(kube);
  add(version);
  if (!version.ok) return results; // nothing else answers without the API server
  if (options.pre) {
    for (const r of await checkPrerequisites(kube)) add(r);
    return results;
  }
  let env: Env = options.env ?? process.env;
  let from = "this shell's environment";
  if (options.settingsFrom === 'cluster') ({ env, from } = await clusterSettingsEnv(kube, namespace));
  for (const r of await checkCrds(kube, options.crdsDir ?? path.join(packageRoot, 'crds'))) add(r);
  const controller = await checkController(kube, namespace, Date.now());
  controller.results.forEach(add);
  let config;
  let settings;
  try {
    config = loadControllerConfig([], env);
    // The same checks of derived settings as at start, every default filled in as the controller does.
    settings = resolveControllerSettings(controllerSettings(config));
  } catch (err) {
    add(fail('controller settings', `from ${from}: ${messageOf(err)}`, 'change that setting there (sless controller --help lists them all)'));
    return results;
  }
  add(pass('controller settings', `from ${from}`));
  add(await checkS3(settings.s3));
  const registry = await checkRegistry(kube, settings);
  add(registry.result);
  for (const r of await checkImages(settings, registry.credentials, controller.image)) add(r);
  add(await checkAuth(config));
  add(await checkBuildNetworkPolicy(kube, settings.buildNamespace));
  return results;
}

export async function run(argv: string[], io: CommandIo): Promise<number> {
  const options = loadCheckConfig(argv);
  const kc = new KubeConfig();
  if (options.kubeconfig) kc.loadFromFile(options.kubeconfig);
  else kc.loadFromDefault();
  const results = await runChecks(
    { kube: kubeReader(kc), namespace: options.namespace, pre: options.pre, settingsFrom: options.settingsFrom },
    (r) => io.stdout.write(`${formatResult(r)}\n`),
  );
  const failed = results.filter((r) => !r.ok).length;
  io.stdout.write(failed === 0 ? `all ${results.length} checks passed\n` : `${failed} of ${results.length} checks failed\n`);
  return exitCodeOf(results);
}
