// Builds hold no platform secrets (issue 11 item 1), shown on the real node: a node function whose
// package.json has a hostile `postinstall` (tenant code, run by the dependency install inside the kaniko
// step) looks for S3 keys, registry credentials and a service account token, and tries the API server
// (by name and by Service IP), S3 (unsigned write and list), the registry (a push to another function's
// repository) and the controller's /v1. It writes what it found into the image; the function serves
// that record, and the test asserts that each attempt failed.
//
// The images go to the node's registry that requires authentication (as in production), and the
// controller listens where pods reach it with /v1 tokens required (not the kit's insecure mode).
//
// What this node does not enforce: its CNI (bridge) ignores NetworkPolicy, so the probe's TCP
// connections to the API server, S3, the registry and the controller do connect here.
// deploy/base/build-network-policy.yaml refuses them where a CNI enforces it
// (test/unit/build-network-policy.test.ts checks the object). What stops the probe here is that it
// holds no credential: each of them answers 401/403. The cloud metadata address (169.254.169.254) is
// not probed: it is not on this machine (the tests reach only addresses here), and on a cloud only the
// NetworkPolicy (or the provider's metadata settings) keeps builds from it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CoreV1Api } from '@kubernetes/client-node';
import { requireNode } from './node-kit.ts';
import { podLogs, setupNodeKit, type NodeKit } from './sless-kit.ts';

interface Attempt {
  connected: boolean;
  status?: number;
  error?: string;
}

interface Probe {
  uid: number;
  envNames: string[];
  secretEnv: string[];
  files: Record<string, string>;
  environsWithKeys: string[];
  attempts: Record<string, Attempt>;
}

const S3_KEY = 'contexts/hostile-overwrite.tar.gz';
const REGISTRY_SECRET = 'e2e-hostile-registry-push';
const FILES = [
  '/var/run/secrets/kubernetes.io/serviceaccount/token',
  '/kaniko/.docker/config.json',
  '/docker/config.json',
  '/root/.docker/config.json',
  '/root/.aws/credentials',
  '/proc/1/environ',
];

interface Targets {
  s3: URL;
  bucket: string;
  registry: string;
  controller: URL;
  namespace: string;
}

/** The hostile install script: plain node, double quotes only (npm runs it through sh in single quotes). */
function hostileScript(t: Targets): string {
  const attempts: Record<string, { mod: 'http' | 'https'; host: string; port: number; method: string; path: string; body?: string }> = {
    'api by name': { mod: 'https', host: 'kubernetes.default.svc.cluster.local', port: 443, method: 'GET', path: '/api/v1/namespaces/kube-system/secrets' },
    'api by Service IP': { mod: 'https', host: '10.0.0.1', port: 443, method: 'GET', path: '/api/v1/secrets' },
    's3 unsigned write': { mod: 'http', host: t.s3.hostname, port: Number(t.s3.port || 80), method: 'PUT', path: `/${t.bucket}/${S3_KEY}`, body: 'hostile' },
    's3 unsigned list': { mod: 'http', host: t.s3.hostname, port: Number(t.s3.port || 80), method: 'GET', path: `/${t.bucket}?list-type=2` },
    'registry push': { mod: 'http', host: t.registry.split(':')[0]!, port: Number(t.registry.split(':')[1]), method: 'POST', path: '/v2/fn/another-tenant/blobs/uploads/' },
    'controller /v1': { mod: 'http', host: t.controller.hostname, port: Number(t.controller.port), method: 'GET', path: `/v1/namespaces/${t.namespace}/functions` },
  };
  return `
const fs = require("fs"), http = require("http"), https = require("https");
const out = { uid: process.getuid(), envNames: Object.keys(process.env).sort(), files: {}, environsWithKeys: [], attempts: {} };
out.secretEnv = out.envNames.filter((k) => /AWS|S3|SECRET|PASSWORD|TOKEN|DOCKER|REGISTRY|AUTH/.test(k));
for (const f of ${JSON.stringify(FILES)}) {
  try { fs.readFileSync(f); out.files[f] = "READ"; } catch (e) { out.files[f] = e.code; }
}
for (const p of fs.readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
  let names = [];
  try { names = fs.readFileSync("/proc/" + p + "/environ", "utf8").split("\\0").map((kv) => kv.split("=")[0]); } catch { continue; }
  if (names.some((k) => /^(AWS_|S3_|DOCKER_CONFIG$|REGISTRY)/.test(k))) out.environsWithKeys.push(p);
}
const req = (a) => new Promise((done) => {
  const mod = a.mod === "https" ? https : http;
  const q = mod.request({ host: a.host, port: a.port, method: a.method, path: a.path, rejectUnauthorized: false, timeout: 8000,
    headers: a.body ? { "content-length": String(a.body.length) } : {} }, (res) => { res.resume(); done({ connected: true, status: res.statusCode }); });
  q.on("timeout", () => { q.destroy(); done({ connected: false, error: "timeout" }); });
  q.on("error", (e) => done({ connected: false, error: e.code || e.message }));
  if (a.body) q.write(a.body);
  q.end();
});
(async () => {
  const attempts = ${JSON.stringify(attempts)};
  for (const [name, a] of Object.entries(attempts)) out.attempts[name] = await req(a);
  fs.writeFileSync("probe.json", JSON.stringify(out));
  console.log("HOSTILE-PROBE " + JSON.stringify(out));
})();
`.trim();
}

function dockerConfigSecret(name: string, registry: string, username: string, password: string) {
  const auth = Buffer.from(`${username}:${password}`).toString('base64');
  return { metadata: { name }, type: 'kubernetes.io/dockerconfigjson', stringData: { '.dockerconfigjson': JSON.stringify({ auths: { [registry]: { username, password, auth } } }) } };
}

describe('a build holds no platform secret (hostile postinstall on the real node)', { timeout: 600_000 }, () => {
  let kit: NodeKit;
  let s3: URL;
  let bucket: string;
  let probe: Probe;

  before(async () => {
    const e = process.env;
    const registry = e.SLESS_TEST_AUTH_REGISTRY;
    if (!registry || !e.SLESS_TEST_AUTH_REGISTRY_USER || !e.SLESS_TEST_AUTH_REGISTRY_PASSWORD) throw new Error('SLESS_TEST_AUTH_REGISTRY(_USER/_PASSWORD) are not set: run this file through `npm run test:node`');
    s3 = new URL(e.SLESS_TEST_S3_ENDPOINT ?? '');
    bucket = e.SLESS_TEST_S3_BUCKET ?? '';
    kit = await setupNodeKit('e2e-node-hostile', {
      env: {
        SLESS_REGISTRY: `${registry}/fn`,
        SLESS_REGISTRY_SECRET: REGISTRY_SECRET,
        SLESS_IMAGE_PULL_SECRETS: 'e2e-hostile-pull',
        // /v1 needs a signed token, and the controller listens where pods reach it.
        SLESS_AUTH_INSECURE: '',
        SLESS_JWT_SECRET: randomBytes(32).toString('hex'),
        SLESS_TEST_CONTROLLER_HOST: requireNode().hostAddress,
      },
    });
    const core = kit.kc.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({ namespace: kit.buildNs, body: dockerConfigSecret(REGISTRY_SECRET, registry, e.SLESS_TEST_AUTH_REGISTRY_USER, e.SLESS_TEST_AUTH_REGISTRY_PASSWORD) });
    await core.createNamespacedSecret({ namespace: kit.ns, body: dockerConfigSecret('e2e-hostile-pull', registry, e.SLESS_TEST_AUTH_REGISTRY_USER, e.SLESS_TEST_AUTH_REGISTRY_PASSWORD) });
    const controller = await kit.startController();
    const script = hostileScript({ s3, bucket, registry, controller: new URL(controller.url), namespace: kit.ns });
    const pkg = { name: 'hostile', version: '1.0.0', private: true, scripts: { postinstall: `node -e '${script}'` } };
    await kit.push(
      {
        'functions/hostile/function.yaml': 'runtime: nodejs22\nentrypoint: handler.handle\n',
        'functions/hostile/package.json': `${JSON.stringify(pkg, null, 2)}\n`,
        'functions/hostile/handler.js': 'exports.handle = async () => JSON.parse(require("fs").readFileSync(__dirname + "/probe.json", "utf8"));\n',
      },
      'a function with a hostile postinstall',
    );
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it('builds and serves what the probe found (it ran inside the kaniko step, as user 10001)', async () => {
    const fn = await kit.waitFunction('hostile', (f) => f.status?.phase === 'Ready' || f.status?.phase === 'Failed');
    const jobs = await kit.buildJobs('hostile');
    const logs = await podLogs(kit.kc, kit.buildNs, `job-name=${jobs[0]?.metadata?.name ?? ''}`);
    assert.equal(fn.status?.phase, 'Ready', `${JSON.stringify(fn.status)}\n${logs}`);
    assert.match(logs, /HOSTILE-PROBE /, 'the postinstall ran in the kaniko step');
    // Ready means serving; a 502 right after it (kube-proxy not yet routing to the new pod) was seen
    // once here: retried for a few seconds and reported, not hidden.
    let res = await kit.callFn('hostile');
    for (let i = 0; res.status === 502 && i < 10; i++) {
      process.stderr.write(`hostile: /fn answered 502 ${i + 1} time(s) after Ready\n`);
      await new Promise((r) => setTimeout(r, 1_000));
      res = await kit.callFn('hostile');
    }
    const body = await res.text();
    assert.equal(res.status, 200, `${body}\n${await podLogs(kit.kc, kit.ns, 'sless.kube5s.ru/function=hostile')}\n${kit.controllers[0]?.output().slice(-3000)}`);
    probe = JSON.parse(body) as Probe;
    process.stderr.write(`hostile probe: ${JSON.stringify(probe)}\n`);
    assert.equal(probe.uid, 10001, 'installs run as the function user, not root');
  });

  it('found no S3 key, registry credential or service account token', () => {
    assert.ok(probe, 'the probe record (previous test)');
    assert.deepEqual(probe.secretEnv, [], `no credential in the install's environment (${probe.envNames.join(' ')})`);
    assert.equal(probe.files['/var/run/secrets/kubernetes.io/serviceaccount/token'], 'ENOENT', 'no service account token');
    for (const f of ['/kaniko/.docker/config.json', '/docker/config.json', '/root/.docker/config.json', '/root/.aws/credentials']) {
      assert.ok(['ENOENT', 'EACCES'].includes(probe.files[f] ?? ''), `${f}: ${probe.files[f]}`);
    }
    assert.equal(probe.files['/proc/1/environ'], 'EACCES', "kaniko's own environment is root's");
    assert.deepEqual(probe.environsWithKeys, [], 'no process in reach carries S3 keys or registry auth');
  });

  it('got nothing from the API server, S3, the registry or the controller (each refused it: no credential)', () => {
    assert.ok(probe, 'the probe record (previous test)');
    const expected = ['api by name', 'api by Service IP', 's3 unsigned write', 's3 unsigned list', 'registry push', 'controller /v1'];
    assert.deepEqual(Object.keys(probe.attempts).sort(), [...expected].sort());
    for (const name of expected) {
      const a = probe.attempts[name]!;
      // Connected here (the bridge CNI enforces no NetworkPolicy); refused for want of a credential.
      if (a.connected) assert.ok([401, 403].includes(a.status ?? 0), `${name}: ${JSON.stringify(a)}`);
    }
  });

  it('left the store untouched, and the build pod had no service account token and kaniko no registry config', async () => {
    const client = new S3Client({
      endpoint: s3.origin,
      region: process.env.SLESS_TEST_S3_REGION ?? 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: process.env.SLESS_TEST_S3_ACCESS_KEY ?? '', secretAccessKey: process.env.SLESS_TEST_S3_SECRET_KEY ?? '' },
    });
    await assert.rejects(client.send(new HeadObjectCommand({ Bucket: bucket, Key: S3_KEY })), (err: { name?: string }) => err.name === 'NotFound');
    const [job] = await kit.buildJobs('hostile');
    const pods = await kit.kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: kit.buildNs, labelSelector: `job-name=${job?.metadata?.name ?? ''}` });
    const pod = pods.items[0];
    assert.equal(pod?.spec?.automountServiceAccountToken, false);
    const mounts = [...(pod?.spec?.initContainers ?? []), ...(pod?.spec?.containers ?? [])].flatMap((c) => (c.volumeMounts ?? []).map((m) => `${c.name}:${m.mountPath}`));
    assert.ok(!mounts.some((m) => m.includes('serviceaccount')), mounts.join(' '));
    assert.ok(!mounts.some((m) => m.startsWith('kaniko:') && /docker/.test(m)), `kaniko has no registry config mounted: ${mounts.join(' ')}`);
    const kaniko = pod?.spec?.initContainers?.find((c) => c.name === 'kaniko');
    assert.deepEqual((kaniko?.env ?? []).map((v) => v.name), [], 'kaniko gets no environment from the controller');
  });
});
