// Production can be configured (issue 11 item 10), shown on the real node: function images go to a
// registry that requires authentication (the node's second registry: htpasswd Basic auth, plain HTTP).
// The controller is configured only by its SLESS_* variables, as in a pod: SLESS_REGISTRY_SECRET names
// the docker-config Secret of the build namespace the build's push step pushes with, and
// SLESS_IMAGE_PULL_SECRETS the Secret (in each function namespace) the function pods pull with.
// The runtime base images stay on the node's open registry, so kaniko pulls them without a credential.
//
//   - the registry refuses anonymous requests; the push step pushed (so with the Secret), the image is
//     there by digest, the pods pulled it with the pull secret and /fn answers;
//   - with a wrong pull secret a code change cannot be pulled: the Function is Ready=False with the
//     kubelet's reason (ErrImagePull / ImagePullBackOff) and the previous version keeps serving.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { registryManifestStatus } from './node-kit.ts';
import { podLogs, setupNodeKit, type NodeKit } from './sless-kit.ts';

const REGISTRY_SECRET = 'e2e-registry-push';
const PULL_SECRET = 'e2e-registry-pull';

interface AuthRegistry {
  readonly address: string;
  readonly username: string;
  readonly password: string;
}

function authRegistry(): AuthRegistry {
  const e = process.env;
  if (!e.SLESS_TEST_AUTH_REGISTRY || !e.SLESS_TEST_AUTH_REGISTRY_USER || !e.SLESS_TEST_AUTH_REGISTRY_PASSWORD) {
    throw new Error('SLESS_TEST_AUTH_REGISTRY(_USER/_PASSWORD) are not set: run this file through `npm run test:node` (service node)');
  }
  return { address: e.SLESS_TEST_AUTH_REGISTRY, username: e.SLESS_TEST_AUTH_REGISTRY_USER, password: e.SLESS_TEST_AUTH_REGISTRY_PASSWORD };
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** A `kubernetes.io/dockerconfigjson` Secret body for one registry. */
function dockerConfigSecret(name: string, registry: string, username: string, password: string) {
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  return {
    metadata: { name },
    type: 'kubernetes.io/dockerconfigjson',
    stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry]: { username, password, auth } } }) },
  };
}

const fn = (answer: string): Record<string, string> => ({
  'functions/hello/function.yaml': 'runtime: nodejs22\nentrypoint: handler.handle\n',
  'functions/hello/handler.js': `exports.handle = async () => ({ answer: ${JSON.stringify(answer)} });\n`,
});

describe('function images in a registry that requires authentication (real node)', { timeout: 600_000 }, () => {
  let kit: NodeKit;
  let reg: AuthRegistry;
  let core: CoreV1Api;

  before(async () => {
    reg = authRegistry();
    kit = await setupNodeKit('e2e-node-regauth', {
      env: { SLESS_REGISTRY: `${reg.address}/fn`, SLESS_REGISTRY_SECRET: REGISTRY_SECRET, SLESS_IMAGE_PULL_SECRETS: PULL_SECRET },
    });
    core = kit.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace: kit.buildNs, body: dockerConfigSecret(REGISTRY_SECRET, reg.address, reg.username, reg.password) });
    await core.createNamespacedSecret({ namespace: kit.ns, body: dockerConfigSecret(PULL_SECRET, reg.address, reg.username, reg.password) });
    await kit.startController();
    await kit.push(fn('first'), 'a function whose image goes to the authenticated registry');
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it('the registry refuses anonymous requests', async () => {
    const res = await fetch(`http://${reg.address}/v2/`);
    assert.equal(res.status, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Basic /);
  });

  it('pushes with the registry Secret, pulls with the pull secret, and serves', async () => {
    const ready = await kit.waitFunction('hello', (f) => f.status?.phase === 'Ready' || f.status?.phase === 'Failed');
    const [job] = await kit.buildJobs('hello');
    assert.equal(ready.status?.phase, 'Ready', `${JSON.stringify(ready.status)}\n${await podLogs(kit.kc, kit.buildNs, `job-name=${job?.metadata?.name ?? ''}`)}`);
    const image = ready.status?.imageRef ?? '';
    assert.ok(image.startsWith(`${reg.address}/fn/`), image);
    assert.match(image, /@sha256:[0-9a-f]{64}$/, 'deployed by digest');
    assert.equal(await registryManifestStatus(image), 401, 'the image is not readable without a credential');
    assert.equal(await registryManifestStatus(image, basic(reg.username, reg.password)), 200, 'the push step pushed it (with the Secret)');

    const res = await kit.callFn('hello');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { answer: 'first' });
    const deployment = await kit.kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ namespace: kit.ns, name: 'hello' });
    assert.deepEqual(deployment.spec?.template.spec?.imagePullSecrets?.map((s) => s.name), [PULL_SECRET]);
  });

  it('with a wrong pull secret, a new version is Ready=False with the pull error and the previous one serves', async () => {
    const wrong = dockerConfigSecret(PULL_SECRET, reg.address, reg.username, 'not-the-password');
    await core.replaceNamespacedSecret({ namespace: kit.ns, name: PULL_SECRET, body: wrong });
    const before = (await kit.getFunction('hello'))?.status?.imageRef;
    await kit.push(fn('second'), 'a code change the pods cannot pull');
    await kit.webhook('fns');
    const failed = await kit.waitFunction('hello', (f) => f.status?.imageRef !== before && f.status?.phase === 'Failed');
    const readyCondition = failed.status?.conditions?.find((c) => c.type === 'Ready');
    assert.equal(readyCondition?.status, 'False', JSON.stringify(failed.status));
    assert.ok(['ErrImagePull', 'ImagePullBackOff'].includes(readyCondition?.reason ?? ''), JSON.stringify(readyCondition));
    assert.match(failed.status?.message ?? '', /ErrImagePull|ImagePullBackOff/);
    assert.match(failed.status?.message ?? '', /previous version keeps serving/);
    process.stderr.write(`wrong pull secret: ${readyCondition?.reason}: ${failed.status?.message}\n`);

    const res = await kit.callFn('hello');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { answer: 'first' }, 'the old ReplicaSet still serves');
  });
});
