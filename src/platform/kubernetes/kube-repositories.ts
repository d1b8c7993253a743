// /v1 repositories on Kubernetes: FunctionRepository objects and the Secret with their git credentials
// and webhook secret (owned by the repository, removed with it); syncs are asked for by annotation.
import { CoreV1Api, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import { REPOSITORY_DEFAULTS } from '../../manifest/defaults.ts';
import { PlatformError, type RepositoryInput, type RepositoryRecord, type SyncHint, type WebhookTarget } from '../types.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { ANNOTATIONS, API_VERSION, GIT_CREDENTIALS_SECRET_TYPE } from './objects/meta.ts';
import type { RepositoryResource } from './objects/resources.ts';
import type { ServingCache } from './serving-cache.ts';
import { WebhookSecrets, type WebhookSecretsOptions } from './webhook-secrets.ts';
import { CRD_DEFAULTS, repositorySpecDefaults } from './objects/crd-defaults.ts';
import { repositoryRecord } from './records.ts';
import { API_LABELS, mergePatch, namespaceMissing, ownedBy, type SlessObjects } from './sless-objects.ts';

/** The Secret that holds a repository's git credentials and webhook secret. */
export function credentialsSecretName(repository: string): string {
  return `${repository}-credentials`;
}

export class KubeRepositories {
  private readonly core: CoreV1Api;

  private readonly secrets: WebhookSecrets;

  constructor(
    private readonly objects: SlessObjects,
    kubeConfig: KubeConfig,
    private readonly now: () => Date,
    /** The watches of /fn and /hooks; until they have listed, repositories are read. */
    private readonly serving?: ServingCache,
    secretTimes: Pick<WebhookSecretsOptions, 'ttlMs' | 'refreshMs'> = {},
    /** Makes sure the controller may write Secrets in a namespace (tenant-access.ts) before it does. */
    private readonly admit: (namespace: string) => Promise<void> = async () => {},
  ) {
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.secrets = new WebhookSecrets({
      ...secretTimes,
      read: async (namespace, secretName) => {
        try {
          return await this.core.readNamespacedSecret({ name: secretName, namespace });
        } catch (err) {
          if (apiStatusCode(err) === 404) return undefined;
          throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
        }
      },
    });
  }

  async list(namespace: string): Promise<RepositoryRecord[]> {
    return (await this.objects.list<RepositoryResource>('FunctionRepository', namespace)).map(repositoryRecord);
  }

  async get(namespace: string, name: string): Promise<RepositoryRecord> {
    return repositoryRecord(await this.objects.get<RepositoryResource>('FunctionRepository', namespace, name, `repository ${namespace}/${name}`));
  }

  async create(namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    const what = `repository ${namespace}/${input.name}`;
    if (await this.objects.find('FunctionRepository', namespace, input.name)) throw new PlatformError('already_exists', `${what} already exists`);
    const secretData = secretDataOf(input);
    const secretName = credentialsSecretName(input.name);
    // The Secret first, so the first sync already finds the credentials; owned by the repository
    // afterwards, so it goes when the repository goes.
    if (secretData) {
      await this.admit(namespace);
      await this.writeSecret(namespace, secretName, secretData);
    }
    const body: RepositoryResource = {
      apiVersion: API_VERSION,
      kind: 'FunctionRepository',
      metadata: { name: input.name, namespace, labels: { ...API_LABELS } },
      spec: {
        url: input.url,
        branch: input.branch ?? CRD_DEFAULTS.branch,
        ...(input.path ? { path: input.path } : {}),
        interval: input.interval ?? CRD_DEFAULTS.interval,
        suspend: input.suspend ?? REPOSITORY_DEFAULTS.suspend,
        prune: input.prune ?? REPOSITORY_DEFAULTS.prune,
        ...(secretData ? { secretRef: { name: secretName } } : {}),
      },
    };
    const repo = await this.objects.create('FunctionRepository', namespace, body, what);
    if (secretData) {
      try {
        await this.core.patchNamespacedSecret({ name: secretName, namespace, body: { metadata: { ownerReferences: [ownedBy(repo)] } } }, mergePatch);
      } catch (err) {
        throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
      }
    }
    return repositoryRecord(repo);
  }

  private async writeSecret(namespace: string, name: string, data: Record<string, string>): Promise<void> {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace, labels: { ...API_LABELS } },
      // The only Secrets a repository sync sends to a git server (see GIT_CREDENTIALS_SECRET_TYPE).
      type: GIT_CREDENTIALS_SECRET_TYPE,
      stringData: data,
    };
    try {
      await this.core.createNamespacedSecret({ namespace, body });
    } catch (err) {
      if (apiStatusCode(err) === 404) throw namespaceMissing(namespace, err);
      if (apiStatusCode(err) !== 409) throw toPlatformError(err, `Secret ${namespace}/${name}`);
      // Left over from an earlier repository of that name (checked absent above): replace it (delete
      // and create, since a Secret's type cannot change).
      try {
        await this.core.deleteNamespacedSecret({ name, namespace });
        await this.core.createNamespacedSecret({ namespace, body });
      } catch (replaceErr) {
        throw toPlatformError(replaceErr, `Secret ${namespace}/${name}`);
      }
    }
  }

  async delete(namespace: string, name: string): Promise<void> {
    const what = `repository ${namespace}/${name}`;
    const repo = await this.objects.get<RepositoryResource>('FunctionRepository', namespace, name, what);
    // prune: false keeps what the repository generated (the controller's finalizer also drops their
    // repository label, so /v1 manages them afterwards); the Orphan policy covers a repository that
    // the controller has not finalized yet.
    await this.objects.remove('FunctionRepository', namespace, name, what, repo.spec?.prune === false ? 'Orphan' : 'Background');
    // The garbage collector would remove it too; doing it now means the credentials do not outlive the repository.
    const secretName = repo.spec?.secretRef?.name;
    if (secretName === credentialsSecretName(name)) {
      try {
        await this.core.deleteNamespacedSecret({ name: secretName, namespace });
      } catch (err) {
        if (apiStatusCode(err) !== 404) throw toPlatformError(err, `Secret ${namespace}/${secretName}`);
      }
    }
  }

  async requestSync(namespace: string, name: string, hint: SyncHint = {}): Promise<void> {
    // The annotation's new value is the request; a request already pending is simply superseded, and so is
    // its head hint (null removes an older one: a request without a head must not carry a stale one).
    const at = this.now().toISOString();
    const annotations = { [ANNOTATIONS.requestedAt]: at, [ANNOTATIONS.requestedRevision]: hint.head ?? null };
    await this.objects.patch('FunctionRepository', namespace, name, { metadata: { annotations } }, `repository ${namespace}/${name}`);
  }

  /**
   * Where a delivery to /hooks/{namespace}/{name} goes. The repository comes from the watch once it has
   * listed (an unknown name costs no request), its webhook secret from a Secret read kept for a while
   * (webhook-secrets.ts); `refresh` (the signature did not match) may read the Secret again.
   */
  async webhookTarget(namespace: string, name: string, options: { refresh?: boolean } = {}): Promise<WebhookTarget | undefined> {
    const repo = this.serving?.synced
      ? this.serving.repositories.get(name, namespace)
      : await this.objects.find<RepositoryResource>('FunctionRepository', namespace, name);
    if (!repo) return undefined;
    const { branch } = repositorySpecDefaults(repo.spec);
    const secretName = repo.spec?.secretRef?.name;
    if (!secretName) return { branch };
    const found = await this.secrets.get(namespace, secretName, options);
    if (found.kind === 'not-sless') return undefined;
    return found.kind === 'found' && found.secret ? { branch, secret: found.secret } : { branch };
  }
}

function secretDataOf(input: RepositoryInput): Record<string, string> | undefined {
  const data: Record<string, string> = {};
  const c = input.credentials;
  if (c?.token) data.token = c.token;
  if (c?.username !== undefined) data.username = c.username;
  if (c?.password !== undefined) data.password = c.password;
  if (input.webhookSecret) data.webhookSecret = input.webhookSecret;
  return Object.keys(data).length > 0 ? data : undefined;
}
