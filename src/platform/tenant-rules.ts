// The rules that keep tenants out of the platform (issue 11 item 4), pure so that /v1, the console and
// the controller's reconcilers apply the same ones:
// - reserved namespaces: the controller's own (sless-system), the build namespace and Kubernetes' own
//   (kube-system, kube-public, kube-node-lease). No token,
//   admin or not, acts there, and the controller neither binds itself nor deploys anything there;
// - env_from_secrets: only Secrets of the function's own namespace that are not platform Secrets (the
//   controller's, git credentials made for sless, service account tokens, the registry pull Secrets).

/**
 * The type a Secret must have for a FunctionRepository's spec.secretRef to use it (issue 11 item 3):
 * the controller sends its values as Basic auth to the URL the repository names, so a Secret made for
 * something else (database credentials) must never qualify. A type cannot be changed on an existing
 * Secret, so only whoever creates the Secret decides it is one for sless.
 */
export const GIT_CREDENTIALS_SECRET_TYPE = 'sless.kube5s.ru/git-credentials';
/** The build namespace's docker-config Secret with push rights (SLESS_REGISTRY_SECRET). */
export const DEFAULT_REGISTRY_SECRET = 'sless-registry';
/** What versions before presigned build contexts kept in the build namespace (the controller deletes it). */
export const LEGACY_BUILD_S3_SECRET = 'sless-build-s3';
/** Where builds run unless SLESS_BUILD_NAMESPACE says otherwise. */
export const DEFAULT_BUILD_NAMESPACE = 'sless-builds';

/** Secret types a function may never read: repository credentials (sent to git servers only) and API tokens. */
export const FORBIDDEN_ENV_SECRET_TYPES: readonly string[] = [GIT_CREDENTIALS_SECRET_TYPE, 'kubernetes.io/service-account-token'];

/** The controller's own Secrets (deploy/base/secret.yaml, the build's registry Secret): never a function's env. */
export const PLATFORM_SECRET_NAMES: readonly string[] = ['sless-controller-secrets', DEFAULT_REGISTRY_SECRET, LEGACY_BUILD_S3_SECRET];

export interface PlatformNamespaces {
  /** Where the controller runs (POD_NAMESPACE; default sless-system). */
  readonly system: string;
  /** Where builds run (SLESS_BUILD_NAMESPACE). */
  readonly build: string;
}

export const DEFAULT_SYSTEM_NAMESPACE = 'sless-system';

/** Kubernetes' own namespaces (exact names: a tenant namespace may well start with `kube-`). */
export const KUBERNETES_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];

/** Why `namespace` belongs to the platform, or undefined for a tenant namespace. */
export function reservedNamespaceProblem(namespace: string, platform: PlatformNamespaces | undefined): string | undefined {
  if (KUBERNETES_NAMESPACES.includes(namespace)) return `namespace ${namespace} belongs to Kubernetes itself; sless functions live in tenant namespaces`;
  if (!platform) return undefined;
  if (namespace === platform.system) return `namespace ${namespace} is where the sless controller runs; sless functions live in tenant namespaces`;
  if (namespace === platform.build) return `namespace ${namespace} is where sless builds run; sless functions live in tenant namespaces`;
  return undefined;
}

/** What the rule needs to know about a Secret (undefined: it does not exist). */
export interface SecretFacts {
  readonly type: string;
}

export interface EnvSecretRefusal {
  /** SecretNotFound may pass later (once the Secret exists); SecretNotAllowed never does. */
  readonly reason: 'SecretNotAllowed' | 'SecretNotFound';
  readonly message: string;
}

/**
 * Why a function may not take its environment from the Secret `name`, or undefined when it may.
 * `extraPlatformNames`: more Secrets of the platform (SLESS_REGISTRY_SECRET, SLESS_IMAGE_PULL_SECRETS).
 */
export function envSecretProblem(namespace: string, name: string, secret: SecretFacts | undefined, extraPlatformNames: readonly string[] = []): EnvSecretRefusal | undefined {
  if (PLATFORM_SECRET_NAMES.includes(name) || extraPlatformNames.includes(name)) {
    return { reason: 'SecretNotAllowed', message: `env_from_secrets: Secret ${name} is one of the platform's own Secrets; a function may read only its namespace's application Secrets` };
  }
  if (!secret) {
    return { reason: 'SecretNotFound', message: `env_from_secrets: Secret ${namespace}/${name} does not exist; create it in the function's namespace (it is checked again on the next reconcile)` };
  }
  if (FORBIDDEN_ENV_SECRET_TYPES.includes(secret.type)) {
    return {
      reason: 'SecretNotAllowed',
      message: `env_from_secrets: Secret ${namespace}/${name} has type ${secret.type}, which a function may not read (repository credentials and service account tokens stay with the platform)`,
    };
  }
  return undefined;
}
