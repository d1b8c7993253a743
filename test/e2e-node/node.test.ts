// The real node itself: pods are scheduled, run, pass their probes and serve through Services;
// cluster DNS, ServiceAccount tokens, the API server's Service and the host's test servers work
// from inside a pod; a pod's log is its real output.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eventually, freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { requireNode, runScript } from './node-kit.ts';

describe('the real node', () => {
  const kc = testKubeConfig();
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  let ns: TestNamespace;
  let clusterIP: string;

  before(async () => {
    const { busybox } = requireNode();
    ns = await freshNamespace(kc, 'node');
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: ns.name,
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: busybox,
                  imagePullPolicy: 'Never',
                  command: ['/bin/sh', '-c', 'mkdir -p /www && echo "hello from $(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www'],
                  ports: [{ containerPort: 8080 }],
                  readinessProbe: { httpGet: { path: '/index.html', port: 8080 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
    });
    const service = await core.createNamespacedService({
      namespace: ns.name,
      body: { metadata: { name: 'web' }, spec: { selector: labels, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    clusterIP = service.spec!.clusterIP!;
  });
  after(() => ns?.cleanup());

  it('runs a Deployment whose pod becomes Ready and serves through its Service from the host', async () => {
    await eventually(
      async () => {
        const d = await apps.readNamespacedDeployment({ namespace: ns.name, name: 'web' });
        assert.equal(d.status?.availableReplicas, 1, `Deployment status: ${JSON.stringify(d.status?.conditions)}`);
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const pods = await core.listNamespacedPod({ namespace: ns.name, labelSelector: 'app=web' });
    const pod = pods.items[0]!;
    assert.equal(pod.status?.phase, 'Running');
    assert.equal(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.match(pod.status?.podIP ?? '', /^10\.244\.0\.\d+$/);

    const body = await eventually(
      async () => {
        const res = await fetch(`http://${clusterIP}/index.html`, { signal: AbortSignal.timeout(3_000) });
        assert.equal(res.status, 200);
        return res.text();
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    assert.equal(body.trim(), `hello from ${pod.metadata!.name}`);
  });

  // A Service address kube-proxy has not programmed (a new Service for a moment, a free one for good) must
  // be refused as one without endpoints is, never answered by whatever lies beyond the node: this
  // machine's gateway answers any TCP connection (HTTP 404, empty body, `server: keryx`), which /fn
  // once passed on as a Ready Go function's answer (test/cluster/node/plan.ts serviceGuardScript).
  it('refuses a Service address that no Service holds, on the host and from a pod', async () => {
    const used = new Set((await core.listServiceForAllNamespaces()).items.map((s) => s.spec?.clusterIP));
    const free = [...Array(40).keys()].map((i) => `10.0.0.${250 - i}`).find((a) => !used.has(a));
    assert.ok(free, 'a free address in the Service subnet');
    assert.equal(await probe(free, 80), 'ECONNREFUSED', `the host connecting to ${free}:80`);
    const { log } = await runScript(kc, ns.name, 'free-address', `nc -w 5 ${free} 80 </dev/null 2>&1; echo "rc $?"`);
    assert.match(log, /Connection refused/, `a pod connecting to ${free}:80: ${log}`);
  });

  it('refuses a new Service until kube-proxy programs it, then serves it: nothing else answers meanwhile', async () => {
    const service = await core.createNamespacedService({
      namespace: ns.name,
      body: { metadata: { name: 'web-new' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } },
    });
    const created = performance.now();
    const ip = service.spec!.clusterIP!;
    const seen: { ms: number; outcome: string }[] = [];
    for (;;) {
      const outcome = await probe(ip, 80, '/index.html');
      const ms = Math.round(performance.now() - created);
      if (seen.at(-1)?.outcome !== outcome) seen.push({ ms, outcome });
      if (outcome.startsWith('200 ') || ms > 30_000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // The time /fn's connect retry (5 s, src/http/proxy-request.ts) has to cover for a Service this new.
    console.error(`[node.test] a new Service ${ip}: ${seen.map((s) => `${s.outcome} from ${s.ms} ms`).join(', ')}`);
    const others = seen.filter((s) => s.outcome !== 'ECONNREFUSED' && !s.outcome.startsWith('200 '));
    assert.deepEqual(others, [], `what the host got from ${ip}:80 after the Service was made: ${JSON.stringify(seen)}`);
    assert.match(seen.at(-1)!.outcome, /^200 /);
  });

  it('gives pods cluster DNS, a ServiceAccount token, the API server and the host test servers', async () => {
    const { hostAddress } = requireNode();
    const git = new URL(process.env.SLESS_TEST_GIT_URL ?? `http://${hostAddress}:1`);
    const script = [
      `ip=$(nslookup web.${ns.name}.svc.cluster.local | sed -n 's/^Address: *//p' | tail -n 1)`,
      'echo "dns $ip"',
      `printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n' | nc -w 5 "$ip" 80 | tail -n 1`,
      'test -s /var/run/secrets/kubernetes.io/serviceaccount/token && echo token',
      // Plain HTTP to the API server's Service: it answers 400 "Client sent an HTTP request to an HTTPS server".
      `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 10.0.0.1 443 | head -n 1`,
      ...(process.env.SLESS_TEST_GIT_URL
        ? [`printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${git.hostname} ${git.port} | head -n 1`]
        : []),
    ].join('\n');
    const { phase, log } = await runScript(kc, ns.name, 'probe', script);
    assert.equal(phase, 'Succeeded', log);
    const lines = log.trim().split('\n');
    assert.equal(lines[0], `dns ${clusterIP}`);
    assert.match(lines[1] ?? '', /^hello from web-/);
    assert.equal(lines[2], 'token');
    assert.match(lines[3] ?? '', /^HTTP\/1\.[01] 400/);
    if (process.env.SLESS_TEST_GIT_URL) assert.match(lines[4] ?? '', /^HTTP\/1\.[01] \d{3}/);
  });
});

/** One GET on a fresh connection: `ECONNREFUSED` (or another error code), `timeout`, or the status, Server header and body start. */
function probe(host: string, port: number, path = '/'): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path, agent: false, timeout: 3_000 }, (res) => {
      let body = '';
      res.on('data', (b: Buffer) => (body += b.toString()));
      res.once('end', () => resolve(`${res.statusCode} server=${res.headers.server ?? ''} body=${JSON.stringify(body.slice(0, 60))}`));
      res.once('error', (e) => resolve(String(e)));
    });
    req.once('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}
