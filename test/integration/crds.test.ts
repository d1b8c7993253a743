// The CRDs in crds/ against the real kube-apiserver of the `kube` test service: accepted, defaults
// applied, invalid objects refused with the server's own messages, status kept apart from spec, and
// kubectl's printer columns.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import {
  GROUP,
  KINDS,
  VERSION,
  type FunctionJobResource,
  type FunctionRepositoryResource,
  type FunctionResource,
  type SlessKind,
  type TriggerResource,
} from '../../src/platform/kubernetes/crd-types.ts';
import { freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';

const execFileP = promisify(execFile);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

let kc: KubeConfig;
let api: CustomObjectsApi;
let ns: TestNamespace;

before(async () => {
  kc = testKubeConfig();
  api = kc.makeApiClient(CustomObjectsApi);
  ns = await freshNamespace(kc, 'crds');
});
after(async () => ns?.cleanup());

function create<T>(kind: SlessKind, body: object, fieldValidation?: 'Strict'): Promise<T> {
  return api.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: KINDS[kind].plural,
    body: { apiVersion: `${GROUP}/${VERSION}`, kind, ...body },
    fieldValidation,
  }) as Promise<T>;
}

function get<T>(kind: SlessKind, name: string): Promise<T> {
  return api.getNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: KINDS[kind].plural,
    name,
  }) as Promise<T>;
}

/** The server's refusal: its HTTP status and Status.message. */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ApiException, `expected an ApiException, got ${String(error)}`);
    const status = JSON.parse(String(error.body)) as { message: string };
    return { code: error.code, message: status.message };
  }
  assert.fail('the server accepted an invalid object');
}

describe('CRDs', () => {
  test('all four are Established with their names, short names and the sless category', async () => {
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    for (const k of Object.values(KINDS)) {
      const crd = await ext.readCustomResourceDefinition({ name: `${k.plural}.${GROUP}` });
      assert.equal(crd.spec.scope, 'Namespaced');
      assert.equal(crd.spec.names.kind, k.kind);
      assert.deepEqual(crd.spec.names.shortNames, [...k.shortNames]);
      assert.deepEqual(crd.spec.names.categories, ['sless']);
      assert.ok(crd.spec.versions.every((v) => v.subresources?.status !== undefined), `${k.kind} has a status subresource`);
      const established = crd.status?.conditions?.find((c) => c.type === 'Established');
      assert.equal(established?.status, 'True');
    }
  });
});

describe('valid objects are stored with their defaults', () => {
  test('Function: entrypoint, memoryMB and timeoutSec default', async () => {
    await create('Function', {
      metadata: { name: 'hello-node' },
      spec: { runtime: 'nodejs20', env: { GREETING: 'hello' }, envFromSecrets: ['db-credentials'] },
    });
    const fn = await get<FunctionResource>('Function', 'hello-node');
    assert.deepEqual(fn.spec, {
      runtime: 'nodejs20',
      entrypoint: 'handler.handle',
      memoryMB: 128,
      timeoutSec: 30,
      env: { GREETING: 'hello' },
      envFromSecrets: ['db-credentials'],
    });
  });

  test('Function: env in the old CRD’s shape, a list of {name, value}, is taken as it is', async () => {
    const env = [
      { name: 'GREETING', value: 'hello' },
      { name: 'EMPTY', value: '' },
    ];
    await create('Function', { metadata: { name: 'old-env' }, spec: { runtime: 'nodejs20', env } });
    assert.deepEqual((await get<FunctionResource>('Function', 'old-env')).spec.env, env);
  });

  test('Function: a full spec from a repository round-trips unchanged', async () => {
    const spec = {
      runtime: 'python3.12',
      entrypoint: 'main.handle',
      memoryMB: 8192,
      timeoutSec: 900,
      env: {},
      envFromSecrets: [],
      codeHash: `sha256:${'a'.repeat(64)}`,
      s3Bucket: 'sless-builds',
      s3Key: 'ns/fn/sha256-aaaa.tar.gz',
      source: { repository: 'shop', path: 'functions/fn', revision: 'b'.repeat(40) },
    };
    await create('Function', { metadata: { name: 'from-git', labels: { 'sless.kube5s.ru/repository': 'shop' } }, spec });
    assert.deepEqual((await get<FunctionResource>('Function', 'from-git')).spec, spec);
  });

  test('FunctionRepository: branch main, interval 1m, prune on, not suspended', async () => {
    await create('FunctionRepository', {
      metadata: { name: 'shop' },
      spec: { url: 'https://git.example.com/team/shop.git', secretRef: { name: 'shop-git' } },
    });
    const repo = await get<FunctionRepositoryResource>('FunctionRepository', 'shop');
    assert.deepEqual(repo.spec, {
      url: 'https://git.example.com/team/shop.git',
      branch: 'main',
      interval: '1m',
      prune: true,
      suspend: false,
      secretRef: { name: 'shop-git' },
    });
  });

  test('Trigger: enabled by default; a cron trigger keeps schedule, timezone and event', async () => {
    await create('Trigger', { metadata: { name: 'hello-http' }, spec: { type: 'http', functionRef: 'hello-node' } });
    assert.equal((await get<TriggerResource>('Trigger', 'hello-http')).spec.enabled, true);
    const cron = {
      type: 'cron',
      functionRef: 'hello-node',
      schedule: '0 3 * * *',
      timezone: 'Europe/Moscow',
      eventJSON: '{"kind":"nightly"}',
      enabled: false,
    };
    await create('Trigger', { metadata: { name: 'hello-nightly' }, spec: cron });
    assert.deepEqual((await get<TriggerResource>('Trigger', 'hello-nightly')).spec, cron);
  });

  test('Trigger: a queue trigger gets the queue defaults (declare false, prefetch 10, retries 5)', async () => {
    await create('Trigger', { metadata: { name: 'hello-queue-orders' }, spec: { type: 'queue', functionRef: 'hello-node', queue: { url: 'amqp://rabbit:5672/%2f', queue: 'orders' } } });
    assert.deepEqual((await get<TriggerResource>('Trigger', 'hello-queue-orders')).spec.queue, { url: 'amqp://rabbit:5672/%2f', queue: 'orders', declare: false, prefetch: 10, retries: 5 });
  });

  test('FunctionJob: runID defaults to 0 (do not run)', async () => {
    await create('FunctionJob', {
      metadata: { name: 'seed-db' },
      spec: { functionRef: 'hello-node', eventJSON: '{"input":[100,200,300]}' },
    });
    const job = await get<FunctionJobResource>('FunctionJob', 'seed-db');
    assert.deepEqual(job.spec, { functionRef: 'hello-node', eventJSON: '{"input":[100,200,300]}', runID: 0 });
  });
});

describe('invalid objects are refused by the server, which says why', () => {
  // 422 Invalid for schema violations; 400 BadRequest when strict decoding meets an unknown field.
  const cases: Array<{ what: string; kind: SlessKind; body: object; expect: RegExp; strict?: true; status?: number }> = [
    {
      what: 'an unknown runtime',
      kind: 'Function',
      body: { metadata: { name: 'ruby-fn' }, spec: { runtime: 'ruby3.3' } },
      expect: /spec\.runtime: Unsupported value: "ruby3\.3": supported values: "python3\.11", "python3\.12", "nodejs20", "nodejs22", "go1\.23"/,
    },
    {
      what: 'memoryMB 10',
      kind: 'Function',
      body: { metadata: { name: 'tiny' }, spec: { runtime: 'nodejs20', memoryMB: 10 } },
      expect: /spec\.memoryMB: Invalid value: 10: spec\.memoryMB in body should be greater than or equal to 64/,
    },
    {
      what: 'scale.min above scale.max',
      kind: 'Function',
      body: { metadata: { name: 'scaled' }, spec: { runtime: 'nodejs20', scale: { min: 3, max: 2 } } },
      expect: /spec\.scale: Invalid value: .*scale\.min must not be above scale\.max/,
    },
    {
      what: 'scale.idle that is no duration',
      kind: 'Function',
      body: { metadata: { name: 'scaled' }, spec: { runtime: 'nodejs20', scale: { idle: '5 minutes' } } },
      expect: /spec\.scale\.idle: Invalid value: "5 minutes"/,
    },
    {
      what: 'scale.concurrency 0',
      kind: 'Function',
      body: { metadata: { name: 'scaled' }, spec: { runtime: 'nodejs20', scale: { concurrency: 0 } } },
      expect: /spec\.scale\.concurrency: Invalid value: 0: spec\.scale\.concurrency in body should be greater than or equal to 1/,
    },
    {
      what: 'timeoutSec 901',
      kind: 'Function',
      body: { metadata: { name: 'slow' }, spec: { runtime: 'nodejs20', timeoutSec: 901 } },
      expect: /spec\.timeoutSec: Invalid value: 901: spec\.timeoutSec in body should be less than or equal to 900/,
    },
    {
      what: 'a name that is no DNS label',
      kind: 'Function',
      body: { metadata: { name: 'Hello_World' }, spec: { runtime: 'nodejs20' } },
      expect: /metadata\.name: Invalid value: "Hello_World"/,
    },
    {
      what: 'a function name over 53 characters',
      kind: 'Function',
      body: { metadata: { name: 'f'.repeat(54) }, spec: { runtime: 'nodejs20' } },
      expect: /metadata\.name must be a DNS-1123 label of at most 53 characters/,
    },
    {
      what: 'a dotted repository name (a subdomain, not a label)',
      kind: 'FunctionRepository',
      body: { metadata: { name: 'shop.v2' }, spec: { url: 'https://git.example.com/shop.git' } },
      expect: /metadata\.name must be a DNS-1123 label/,
    },
    {
      what: 'an unknown field (with fieldValidation=Strict, as kubectl sends)',
      kind: 'Function',
      body: { metadata: { name: 'colorful' }, spec: { runtime: 'nodejs20', color: 'blue' } },
      expect: /strict decoding error: unknown field "spec\.color"/,
      strict: true,
      status: 400,
    },
    {
      what: 'a missing runtime',
      kind: 'Function',
      body: { metadata: { name: 'no-runtime' }, spec: {} },
      expect: /spec\.runtime: Required value/,
    },
    {
      what: 'a malformed codeHash',
      kind: 'Function',
      body: { metadata: { name: 'bad-hash' }, spec: { runtime: 'go1.23', codeHash: 'md5:abc' } },
      expect: /spec\.codeHash: Invalid value: "md5:abc": spec\.codeHash in body should match/,
    },
    {
      what: 'a repository URL that is not http(s)',
      kind: 'FunctionRepository',
      body: { metadata: { name: 'ssh-repo' }, spec: { url: 'git@github.com:team/shop.git' } },
      expect: /spec\.url: Invalid value: "git@github\.com:team\/shop\.git": spec\.url in body should match/,
    },
    {
      what: 'a repository path that climbs out of the repository',
      kind: 'FunctionRepository',
      body: { metadata: { name: 'climber' }, spec: { url: 'https://git.example.com/shop.git', path: 'functions/../../etc' } },
      expect: /path must be relative to the repository root and must not contain '\.\.'/,
    },
    {
      what: 'an interval that is no duration',
      kind: 'FunctionRepository',
      body: { metadata: { name: 'often' }, spec: { url: 'https://git.example.com/shop.git', interval: 'often' } },
      expect: /spec\.interval: Invalid value: "often"/,
    },
    {
      what: 'a cron trigger without a schedule',
      kind: 'Trigger',
      body: { metadata: { name: 'no-schedule' }, spec: { type: 'cron', functionRef: 'hello-node' } },
      expect: /a cron trigger needs spec\.schedule/,
    },
    {
      what: 'an unknown trigger type',
      kind: 'Trigger',
      body: { metadata: { name: 'queue' }, spec: { type: 'kafka', functionRef: 'hello-node' } },
      expect: /spec\.type: Unsupported value: "kafka"/,
    },
    {
      what: 'a queue trigger without spec.queue',
      kind: 'Trigger',
      body: { metadata: { name: 'no-queue' }, spec: { type: 'queue', functionRef: 'hello-node' } },
      expect: /a queue trigger needs spec\.queue/,
    },
    {
      what: 'a queue URL carrying credentials',
      kind: 'Trigger',
      body: { metadata: { name: 'creds' }, spec: { type: 'queue', functionRef: 'hello-node', queue: { url: 'amqp://user:pw@rabbit:5672/%2f', queue: 'orders' } } },
      expect: /must not carry credentials/,
    },
    {
      what: 'prefetch 0',
      kind: 'Trigger',
      body: { metadata: { name: 'prefetch0' }, spec: { type: 'queue', functionRef: 'hello-node', queue: { url: 'amqp://rabbit:5672/%2f', queue: 'orders', prefetch: 0 } } },
      expect: /spec\.queue\.prefetch: Invalid value: 0/,
    },
    {
      what: 'spec.queue on an http trigger',
      kind: 'Trigger',
      body: { metadata: { name: 'http-queue' }, spec: { type: 'http', functionRef: 'hello-node', queue: { url: 'amqp://rabbit:5672/%2f', queue: 'orders' } } },
      expect: /spec\.queue belongs to type queue only/,
    },
    {
      what: 'a negative runID',
      kind: 'FunctionJob',
      body: { metadata: { name: 'negative' }, spec: { functionRef: 'hello-node', runID: -1 } },
      expect: /spec\.runID: Invalid value: -1: spec\.runID in body should be greater than or equal to 0/,
    },
  ];
  for (const c of cases) {
    test(`${c.kind} with ${c.what}`, async () => {
      const { code, message } = await refusal(create(c.kind, c.body, c.strict ? 'Strict' : undefined));
      assert.equal(code, c.status ?? 422, message);
      assert.match(message, c.expect);
    });
  }

  test('without Strict field validation an unknown field is dropped, never stored', async () => {
    await create('Function', { metadata: { name: 'pruned' }, spec: { runtime: 'nodejs20', color: 'blue' } });
    const fn = await get<FunctionResource>('Function', 'pruned');
    assert.equal('color' in fn.spec, false);
  });
});

describe('status is a subresource', () => {
  test('status sent with create is ignored; status patches leave spec and generation alone', async () => {
    await create('Function', {
      metadata: { name: 'status-fn' },
      spec: { runtime: 'go1.23' },
      status: { phase: 'Ready' },
    });
    const created = await get<FunctionResource>('Function', 'status-fn');
    assert.equal(created.status, undefined);
    assert.equal(created.metadata.generation, 1);

    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await api.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns.name,
        plural: 'functions',
        name: 'status-fn',
        body: {
          status: {
            phase: 'Ready',
            imageRef: 'registry.local/sless/status-fn@sha256:' + 'c'.repeat(64),
            observedGeneration: 1,
            conditions: [{ type: 'Ready', status: 'True', reason: 'Deployed', message: 'ok', lastTransitionTime: now }],
            spec: 'ignored',
          },
          spec: { memoryMB: 512 },
        },
      },
      mergePatch,
    );
    const afterStatus = await get<FunctionResource>('Function', 'status-fn');
    assert.equal(afterStatus.spec.memoryMB, 128, 'spec is not written through /status');
    assert.equal(afterStatus.metadata.generation, 1, 'a status write does not bump generation');
    assert.equal(afterStatus.status?.phase, 'Ready');
    assert.equal(afterStatus.status?.conditions?.[0]?.reason, 'Deployed');
  });

  test('spec patches bump generation and leave status alone', async () => {
    await api.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns.name,
        plural: 'functions',
        name: 'status-fn',
        body: { spec: { memoryMB: 256 }, status: { phase: 'Failed' } },
      },
      mergePatch,
    );
    const fn = await get<FunctionResource>('Function', 'status-fn');
    assert.equal(fn.spec.memoryMB, 256);
    assert.equal(fn.metadata.generation, 2);
    assert.equal(fn.status?.phase, 'Ready', 'status is not written through the main resource');
    assert.equal(fn.status?.observedGeneration, 1);
  });

  test('a status with an unknown phase or a malformed condition is refused', async () => {
    const patch = (status: object) =>
      api.patchNamespacedCustomObjectStatus(
        { group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions', name: 'status-fn', body: { status } },
        mergePatch,
      );
    assert.match((await refusal(patch({ phase: 'Exploded' }))).message, /status\.phase: Unsupported value: "Exploded"/);
    assert.match(
      (await refusal(patch({ conditions: [{ type: 'Ready', status: 'Yes', reason: 'x', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }] })))
        .message,
      /status\.conditions\[0\]\.status: Unsupported value: "Yes"/,
    );
  });
});

describe('kubectl', () => {
  test('`kubectl get functions -A` prints runtime, phase and image columns', async () => {
    const kubeconfig = process.env.SLESS_TEST_KUBECONFIG ?? '';
    const { stdout } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, 'get', 'functions', '-A']);
    const [header = '', ...rows] = stdout.trim().split('\n');
    assert.deepEqual(header.split(/\s{2,}/), ['NAMESPACE', 'NAME', 'RUNTIME', 'PHASE', 'IMAGE', 'REPLICAS', 'AGE']);
    const statusRow = rows.find((r) => r.includes('status-fn'));
    assert.ok(statusRow, stdout);
    assert.match(statusRow, new RegExp(`^${ns.name}\\s+status-fn\\s+go1\\.23\\s+Ready\\s+registry\\.local/sless/status-fn@sha256:c+\\s+\\d+s$`), 'no replicas column value while the status has none');
  });

  test('short names and the sless category reach every kind', async () => {
    const kubeconfig = process.env.SLESS_TEST_KUBECONFIG ?? '';
    const { stdout: fn } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, '-n', ns.name, 'get', 'fn', '-o', 'name']);
    assert.match(fn, /function\.sless\.kube5s\.ru\/hello-node/);
    const { stdout: all } = await execFileP('kubectl', ['--kubeconfig', kubeconfig, '-n', ns.name, 'get', 'sless', '-o', 'name']);
    for (const expected of ['function.sless.kube5s.ru/hello-node', 'functionrepository.sless.kube5s.ru/shop', 'trigger.sless.kube5s.ru/hello-http', 'functionjob.sless.kube5s.ru/seed-db']) {
      assert.ok(all.includes(expected), `${expected} in:\n${all}`);
    }
  });
});
