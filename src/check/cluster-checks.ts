// The Kubernetes side of `sless check`: the cluster's version and what an install needs (--pre), then
// the installed pieces: CRDs current with crds/, the controller running and leading, the build
// namespace's NetworkPolicy.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_LEASE_NAME } from '../platform/kubernetes/leader-election.ts';
import { fail, messageOf, pass, type CheckResult } from './check-result.ts';
import { crdDrift, type CrdLike } from './crd-drift.ts';
import type { KubeReader } from './kube-reader.ts';
import { kubeVersionSupported, MIN_KUBERNETES, parseKubeVersion } from './kube-version.ts';
import { leaseVerdict, type LeaseLike } from './leader-lease.ts';

const CONTROLLER_SELECTOR = 'app.kubernetes.io/name=sless-controller';
const INSTALL_FIX = 'install or upgrade: kubectl apply -k deploy/ (or the Helm chart deploy/chart/), see docs/install.md';

export async function checkKubeVersion(kube: KubeReader): Promise<CheckResult> {
  const name = 'Kubernetes version';
  try {
    const v = (await kube.get<{ major?: string; minor?: string; gitVersion?: string }>('/version')) ?? {};
    const parsed = parseKubeVersion(v);
    if (!parsed) return fail(name, `the API server answered no version (${JSON.stringify(v)})`, 'check the kubeconfig (--kubeconfig / KUBECONFIG) points at a Kubernetes API server');
    const want = `>= ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor}`;
    return kubeVersionSupported(parsed)
      ? pass(name, `${v.gitVersion ?? `${parsed.major}.${parsed.minor}`} (${want})`)
      : fail(name, `${v.gitVersion ?? `${parsed.major}.${parsed.minor}`}, sless needs ${want} (ValidatingAdmissionPolicy)`, `upgrade the cluster to Kubernetes ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} or newer`);
  } catch (err) {
    return fail(name, `the API server did not answer: ${messageOf(err)}`, 'check the kubeconfig (--kubeconfig / KUBECONFIG) and that the cluster is up');
  }
}

/** Before install: the APIs the manifests use and the rights to create what they create. */
export async function checkPrerequisites(kube: KubeReader): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  const vap = await kube.get<{ resources?: Array<{ name?: string }> }>('/apis/admissionregistration.k8s.io/v1').catch(() => undefined);
  results.push(
    vap?.resources?.some((r) => r.name === 'validatingadmissionpolicies')
      ? pass('ValidatingAdmissionPolicy API', 'admissionregistration.k8s.io/v1 serves validatingadmissionpolicies')
      : fail('ValidatingAdmissionPolicy API', 'admissionregistration.k8s.io/v1 has no validatingadmissionpolicies', `Kubernetes >= ${MIN_KUBERNETES.major}.${MIN_KUBERNETES.minor} serves it; upgrade the cluster`),
  );
  const wanted: Array<[string, string, string]> = [
    ['create', 'apiextensions.k8s.io', 'customresourcedefinitions'],
    ['create', 'rbac.authorization.k8s.io', 'clusterroles'],
    ['create', 'rbac.authorization.k8s.io', 'clusterrolebindings'],
    ['create', 'admissionregistration.k8s.io', 'validatingadmissionpolicies'],
    ['create', '', 'namespaces'],
  ];
  const denied: string[] = [];
  for (const [verb, group, resource] of wanted) {
    const review = await kube
      .post<{ status?: { allowed?: boolean } }>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb, group, resource } },
      })
      .catch(() => undefined);
    if (!review?.status?.allowed) denied.push(`${verb} ${resource}${group ? `.${group}` : ''}`);
  }
  results.push(
    denied.length === 0
      ? pass('install rights', 'this user may create CRDs, ClusterRoles, bindings, admission policies and namespaces')
      : fail('install rights', `this user may not: ${denied.join(', ')}`, 'install as a cluster admin (the kubeconfig user needs cluster-admin for the install)'),
  );
  const classes = await kube.get<{ items?: Array<{ metadata?: { name?: string; annotations?: Record<string, string> } }> }>('/apis/storage.k8s.io/v1/storageclasses').catch(() => undefined);
  const defaultClass = classes?.items?.find((c) => c.metadata?.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
  results.push(
    defaultClass
      ? pass('default StorageClass', `${defaultClass.metadata?.name ?? '?'} (the controller's git cache volume)`)
      : fail('default StorageClass', 'none: the controller StatefulSet\'s git-cache claim would stay Pending', 'mark a StorageClass default, or set storageClassName (or an emptyDir) for the git cache in an overlay / the chart values'),
  );
  return results;
}

/** Each CRD of `crdsDir` is in the cluster, Established, with the same versions and schema. */
export async function checkCrds(kube: KubeReader, crdsDir: string): Promise<CheckResult[]> {
  const files = (await readdir(crdsDir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  const results: CheckResult[] = [];
  for (const file of files) {
    const docs = parseAllDocuments(await readFile(path.join(crdsDir, file), 'utf8')).map((d) => d.toJS() as CrdLike & { kind?: string });
    for (const wanted of docs.filter((d) => d.kind === 'CustomResourceDefinition')) {
      const crdName = wanted.metadata?.name ?? file;
      const name = `CRD ${crdName}`;
      try {
        const live = await kube.get<CrdLike>(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}`);
        if (!live) {
          results.push(fail(name, 'missing', `${INSTALL_FIX} (crds/${file})`));
          continue;
        }
        const drift = crdDrift(wanted, live);
        results.push(drift ? fail(name, `differs from crds/${file}: ${drift}`, `apply this release's CRDs: kubectl apply --server-side -f crds/${file}`) : pass(name, `current (crds/${file})`));
      } catch (err) {
        results.push(fail(name, `cannot read it: ${messageOf(err)}`, 'the kubeconfig user needs get on customresourcedefinitions'));
      }
    }
  }
  return results;
}

interface PodLike {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly containers?: ReadonlyArray<{ readonly image?: string }> };
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type?: string; readonly status?: string }> };
}
interface StatefulSetLike {
  readonly spec?: { readonly replicas?: number; readonly template?: { readonly spec?: { readonly containers?: ReadonlyArray<{ readonly name?: string; readonly image?: string }> } } };
  readonly status?: { readonly readyReplicas?: number };
}

/** The controller's StatefulSet and pods in `namespace`, and the leader Lease; also answers the controller image. */
export async function checkController(kube: KubeReader, namespace: string, nowMs: number): Promise<{ results: CheckResult[]; image?: string }> {
  const results: CheckResult[] = [];
  let image: string | undefined;
  try {
    const set = await kube.get<StatefulSetLike>(`/apis/apps/v1/namespaces/${namespace}/statefulsets/sless-controller`);
    const pods = (await kube.get<{ items?: PodLike[] }>(`/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(CONTROLLER_SELECTOR)}`))?.items ?? [];
    const ready = pods.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    image = set?.spec?.template?.spec?.containers?.find((c) => c.name === 'controller')?.image;
    const name = `controller (${namespace})`;
    if (!set) results.push(fail(name, 'no StatefulSet sless-controller', `${INSTALL_FIX}; or --namespace names where it runs`));
    else if (ready.length === 0) results.push(fail(name, `no replica Ready of ${set.spec?.replicas ?? '?'} (pods: ${pods.map((p) => p.metadata?.name).join(', ') || 'none'})`, `kubectl -n ${namespace} describe pods -l ${CONTROLLER_SELECTOR}; kubectl -n ${namespace} logs -l ${CONTROLLER_SELECTOR} (a bad setting names itself there)`));
    else results.push(pass(name, `${ready.length} of ${set.spec?.replicas ?? '?'} replicas Ready, image ${image ?? '?'}`));
    const lease = await kube.get<LeaseLike>(`/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${DEFAULT_LEASE_NAME}`);
    const verdict = leaseVerdict(lease, nowMs);
    results.push(
      verdict.ok
        ? pass('controller leader', `${verdict.holder} (renewed the Lease ${verdict.ageSec} s ago)`)
        : fail('controller leader', verdict.why, `kubectl -n ${namespace} logs -l ${CONTROLLER_SELECTOR}: a replica leads once it starts; the ServiceAccount needs leases in ${namespace} (deploy/rbac.yaml)`),
    );
  } catch (err) {
    results.push(fail(`controller (${namespace})`, `cannot read it: ${messageOf(err)}`, 'the kubeconfig user needs get/list on statefulsets, pods and leases there'));
  }
  return { results, ...(image ? { image } : {}) };
}

interface NetworkPolicyLike {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly podSelector?: { readonly matchLabels?: object; readonly matchExpressions?: readonly unknown[] }; readonly policyTypes?: readonly string[] };
}

/** A NetworkPolicy in the build namespace selects every build pod and limits their egress (deploy/build-network-policy.yaml). */
export async function checkBuildNetworkPolicy(kube: KubeReader, buildNamespace: string): Promise<CheckResult> {
  const name = `build NetworkPolicy (${buildNamespace})`;
  try {
    const ns = await kube.get(`/api/v1/namespaces/${buildNamespace}`);
    if (!ns) return fail(name, `no namespace ${buildNamespace}`, `${INSTALL_FIX}; or SLESS_BUILD_NAMESPACE names the build namespace`);
    const list = (await kube.get<{ items?: NetworkPolicyLike[] }>(`/apis/networking.k8s.io/v1/namespaces/${buildNamespace}/networkpolicies`))?.items ?? [];
    const all = list.find((p) => Object.keys(p.spec?.podSelector?.matchLabels ?? {}).length === 0 && (p.spec?.podSelector?.matchExpressions ?? []).length === 0 && p.spec?.policyTypes?.includes('Egress'));
    return all
      ? pass(name, `${all.metadata?.name ?? '?'} limits every build pod's egress (enforced only by a CNI that implements NetworkPolicy)`)
      : fail(name, 'none selects every build pod with an Egress policy: tenant install steps could reach the API server and cluster services', `${INSTALL_FIX} (it holds the build NetworkPolicy; for another SLESS_BUILD_NAMESPACE, put it in ${buildNamespace})`);
  } catch (err) {
    return fail(name, `cannot read it: ${messageOf(err)}`, 'the kubeconfig user needs list on networkpolicies');
  }
}
