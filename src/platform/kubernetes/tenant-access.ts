// Namespaced rights, granted when a tenant namespace is first used (issue 11 item 4). The controller's
// ClusterRole lets it watch everywhere but write workloads and touch Secrets nowhere: in each tenant
// namespace it creates the RoleBinding `sless-tenant` to the ClusterRole of that name for its own
// ServiceAccount (its ClusterRole may `bind` only that role, so it cannot grant itself anything else).
// Platform namespaces (its own, the builds', kube-system, kube-public, kube-node-lease) are refused before anything is written, and a
// function's env_from_secrets are checked here against tenant-rules.ts.
import { CoreV1Api, RbacAuthorizationV1Api, type KubeConfig, type V1RoleBinding } from '@kubernetes/client-node';
import { envSecretProblem, reservedNamespaceProblem, type PlatformNamespaces } from '../tenant-rules.ts';
import type { ResolvedControllerSettings } from './settings.ts';
import { apiMessage, isStatus } from './api-client/kube-client.ts';
import { StalledError } from './stalled-error.ts';
import type { TenantRefusalReason } from '../reasons.ts';

/** The ClusterRole bound in every tenant namespace, and the name of that RoleBinding (deploy/base/rbac.yaml). */
export const TENANT_ROLE = 'sless-tenant';

/** How long an ensured namespace is trusted before its RoleBinding is checked again (a recreated namespace loses it). */
const ENSURED_TTL_MS = 5 * 60_000;

/** A namespace or Secret the platform refuses: the reconcilers turn it into Stalled/Failed, /v1 into 400/403. */
export type TenantRefusal = StalledError & { readonly reason: TenantRefusalReason };

function refusal(reason: TenantRefusalReason, message: string): TenantRefusal {
  return new StalledError(reason, message) as TenantRefusal;
}

/** Complete (resolveControllerSettings); tenantBinding stays optional: unset outside a cluster. */
export type TenantSettings = Pick<ResolvedControllerSettings, 'buildNamespace' | 'systemNamespace' | 'tenantBinding' | 'registrySecretName' | 'imagePullSecrets'>;

export class TenantAccess {
  private readonly rbac: RbacAuthorizationV1Api;
  private readonly core: CoreV1Api;
  private readonly ensured = new Map<string, number>();
  /** Checks in flight per namespace. */
  private readonly checking = new Map<string, Promise<void>>();
  readonly platformNamespaces: PlatformNamespaces;

  constructor(
    kubeConfig: KubeConfig,
    private readonly settings: TenantSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.rbac = kubeConfig.makeApiClient(RbacAuthorizationV1Api);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.platformNamespaces = { system: settings.systemNamespace, build: settings.buildNamespace };
  }

  /** Throws a TenantRefusal (StalledError) for a platform namespace; otherwise makes sure the controller may write there. */
  async ensure(namespace: string): Promise<void> {
    this.refuseReserved(namespace);
    const binding = this.settings.tenantBinding;
    if (!binding) return;
    const at = this.ensured.get(namespace);
    if (at !== undefined && this.now() - at < ENSURED_TTL_MS) return;
    // Reconciles of one namespace ask at once (a restarted controller: every Function and Trigger): one check.
    let checking = this.checking.get(namespace);
    if (!checking) {
      checking = this.bind(namespace, binding).finally(() => this.checking.delete(namespace));
      this.checking.set(namespace, checking);
    }
    await checking;
  }

  private async bind(namespace: string, binding: NonNullable<TenantSettings['tenantBinding']>): Promise<void> {
    // Read first: where the binding is in place (a restarted controller, the check every 5 minutes) nothing is written.
    if (!(await this.bound(namespace))) {
      const body: V1RoleBinding = {
        metadata: { name: TENANT_ROLE, namespace, labels: { 'app.kubernetes.io/managed-by': 'sless' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: TENANT_ROLE },
        subjects: [{ kind: 'ServiceAccount', name: binding.serviceAccount, namespace: binding.namespace }],
      };
      try {
        await this.rbac.createNamespacedRoleBinding({ namespace, body });
      } catch (err) {
        if (!isStatus(err, 409)) throw new Error(`cannot bind ClusterRole ${TENANT_ROLE} in namespace ${namespace}: ${apiMessage(err)}`, { cause: err });
      }
    }
    this.ensured.set(namespace, this.now());
  }

  /** Whether the RoleBinding exists; false also when this controller may not read it (an older deploy/base/rbac.yaml: create answers). */
  private async bound(namespace: string): Promise<boolean> {
    try {
      await this.rbac.readNamespacedRoleBinding({ namespace, name: TENANT_ROLE });
      return true;
    } catch (err) {
      if (isStatus(err, 404) || isStatus(err, 403)) return false;
      throw new Error(`cannot read RoleBinding ${namespace}/${TENANT_ROLE}: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** Throws a TenantRefusal (StalledError) for a platform namespace (pure: nothing is asked of the API server). */
  refuseReserved(namespace: string): void {
    const reserved = reservedNamespaceProblem(namespace, this.platformNamespaces);
    if (reserved) throw refusal('ReservedNamespace', reserved);
  }

  /** Throws a TenantRefusal (StalledError) when one of `names` is not a Secret a function of `namespace` may read. */
  async checkEnvSecrets(namespace: string, names: readonly string[]): Promise<void> {
    const platformNames = [this.settings.registrySecretName, ...this.settings.imagePullSecrets];
    for (const name of names) {
      const problem = envSecretProblem(namespace, name, await this.secretFacts(namespace, name), platformNames);
      if (problem) throw refusal(problem.reason, problem.message);
    }
  }

  /** Both: what a reconciler runs before it writes a function's workload. */
  async admitWorkload(namespace: string, envFromSecrets: readonly string[]): Promise<void> {
    await this.ensure(namespace);
    await this.checkEnvSecrets(namespace, envFromSecrets);
  }

  /** admitWorkload() for a reconciler: the refusal as a value (its status says why), API failures thrown (retried). */
  async refusalOf(namespace: string, envFromSecrets: readonly string[] = []): Promise<TenantRefusal | undefined> {
    try {
      await this.admitWorkload(namespace, envFromSecrets);
      return undefined;
    } catch (err) {
      if (err instanceof StalledError) return err as TenantRefusal;
      throw err;
    }
  }

  private async secretFacts(namespace: string, name: string): Promise<{ type: string } | undefined> {
    try {
      const s = await this.core.readNamespacedSecret({ namespace, name });
      return { type: s.type ?? 'Opaque' };
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw new Error(`cannot read Secret ${namespace}/${name} (env_from_secrets): ${apiMessage(err)}`, { cause: err });
    }
  }
}
