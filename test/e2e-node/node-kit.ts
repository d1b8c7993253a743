// Helpers for the suites that run on the real node (service `node`, `npm run test:node`): the
// admin client of test/helpers/kube.ts, plus running a busybox script in a pod and reading its
// real output through the kubelet.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BatchV1Api, CoreV1Api, DiscoveryV1Api, type KubeConfig, type V1PodSpec } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import type { NodeKit } from './sless-kit.ts';

/** Fails clearly when the suite runs without the real node. */
export function requireNode(): { registry: string; hostAddress: string; busybox: string } {
  const registry = process.env.SLESS_TEST_REGISTRY;
  const hostAddress = process.env.SLESS_TEST_BIND_HOST;
  const busybox = process.env.SLESS_TEST_NODE_BUSYBOX_IMAGE;
  if (process.env.SLESS_TEST_NODE !== '1' || !registry || !hostAddress || !busybox) {
    throw new Error('these tests need the real node: run them with `npm run test:node` (service `node`, root, .ci/install.d/25-node.sh)');
  }
  return { registry, hostAddress, busybox };
}

export interface ScriptResult {
  readonly phase: string;
  readonly log: string;
}

/** Runs `script` with busybox sh in a Job's pod and returns the pod's phase and log. */
export async function runScript(kc: KubeConfig, namespace: string, name: string, script: string, timeoutMs = 90_000): Promise<ScriptResult> {
  const { busybox } = requireNode();
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  await batch.createNamespacedJob({
    namespace,
    body: {
      metadata: { name },
      spec: {
        backoffLimit: 0,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [{ name: 'script', image: busybox, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', script] }],
          },
        },
      },
    },
  });
  const pod = await eventually(
    async () => {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
      const p = pods.items.find((i) => i.status?.phase === 'Succeeded' || i.status?.phase === 'Failed');
      if (!p) throw new Error(`job ${name}: pod not finished: ${JSON.stringify(pods.items.map((i) => i.status?.phase))}`);
      return p;
    },
    { timeoutMs, intervalMs: 500 },
  );
  const log = await core.readNamespacedPodLog({ namespace, name: pod.metadata!.name!, container: 'script' });
  return { phase: pod.status!.phase!, log };
}

/** A local package index for pods: the wheels of ~/.cache/sless-test/wheels (.ci/install.d/25-node.sh)
 * as a plain directory listing on the node's host address, for pip's `--find-links`. */
export async function startWheelIndex(): Promise<{ url: string; stop(): Promise<void> }> {
  const { hostAddress } = requireNode();
  const dir = path.join(process.env.SLESS_TEST_CACHE ?? path.join(os.homedir(), '.cache', 'sless-test'), 'wheels');
  const server = http.createServer((req, res) => {
    void (async () => {
      const name = decodeURIComponent((req.url ?? '/').split('?')[0]!.replace(/^\/+/, ''));
      const files = (await readdir(dir)).filter((f) => f.endsWith('.whl'));
      if (name === '') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><body>${files.map((f) => `<a href="${f}">${f}</a><br>`).join('\n')}</body></html>\n`);
      } else if (files.includes(name)) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(await readFile(path.join(dir, name)));
      } else {
        res.writeHead(404).end();
      }
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, hostAddress, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${hostAddress}:${port}/`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** GET the manifest of `image` (`host:port/repo[:tag][@sha256:...]`) from its registry, with or without credentials. */
export async function registryManifestStatus(image: string, authorization?: string): Promise<number> {
  const [named = '', digest] = image.split('@');
  const host = named.slice(0, named.indexOf('/'));
  const path = named.slice(host.length + 1);
  const colon = path.lastIndexOf(':');
  const repo = colon < 0 ? path : path.slice(0, colon);
  const ref = digest ?? path.slice(colon + 1);
  const res = await fetch(`http://${host}/v2/${repo}/manifests/${ref}`, {
    headers: {
      accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
      ...(authorization ? { authorization } : {}),
    },
  });
  await res.arrayBuffer();
  return res.status;
}

/** A Function's imageRef names `registry`'s image by tag and digest, and the registry has that digest. */
export async function assertImageByDigest(imageRef: string, registry: string): Promise<void> {
  const m = /^([^/]+)\/[^:@]+:[^@]+@sha256:[0-9a-f]{64}$/.exec(imageRef);
  assert.ok(m, `imageRef ${imageRef} is a registry image by digest`);
  assert.equal(m[1], registry);
  assert.equal(await registryManifestStatus(imageRef), 200, `the registry has ${imageRef}`);
}

/** Waits for `name` to be Ready, built by one succeeded build Job into an image by digest in the kit's registry; answers that image and the Job's pod spec. */
export async function readyAfterOneBuild(kit: NodeKit, name: string): Promise<{ imageRef: string; pod: V1PodSpec | undefined }> {
  const fn = await kit.waitFunction(name, (f) => f.status?.phase === 'Ready');
  const imageRef = fn.status?.imageRef ?? '';
  await assertImageByDigest(imageRef, kit.registry);
  const jobs = await kit.buildJobs(name);
  assert.equal(jobs.length, 1, 'one build Job');
  assert.equal(jobs[0]!.status?.succeeded, 1);
  return { imageRef, pod: jobs[0]!.spec?.template.spec };
}

/**
 * What a test needs to say where a call to `/fn/{ns}/{name}` went when it did not answer as expected:
 * the response's headers, the Service and its EndpointSlices, the function's pods, and the same call
 * sent from the host straight to each pod's port (skipping kube-proxy and cluster DNS). An empty-body
 * 404 for a Ready function was seen twice in CI and never explained; this is the evidence to keep.
 */
export async function describeServing(kit: NodeKit, name: string, res: Response): Promise<string> {
  const core = kit.kc.makeApiClient(CoreV1Api);
  const discovery = kit.kc.makeApiClient(DiscoveryV1Api);
  const lines = [`response ${res.status} headers ${JSON.stringify(Object.fromEntries(res.headers))}`];
  const service = await core.readNamespacedService({ namespace: kit.ns, name }).catch((e: unknown) => String(e));
  lines.push(typeof service === 'string' ? `Service: ${service}` : `Service clusterIP ${service.spec?.clusterIP} ports ${JSON.stringify(service.spec?.ports)}`);
  const slices = await discovery.listNamespacedEndpointSlice({ namespace: kit.ns, labelSelector: `kubernetes.io/service-name=${name}` }).catch(() => ({ items: [] }));
  for (const s of slices.items) lines.push(`EndpointSlice ${s.metadata?.name}: ${JSON.stringify(s.endpoints?.map((e) => ({ addresses: e.addresses, conditions: e.conditions })))} ports ${JSON.stringify(s.ports)}`);
  const pods = await core.listNamespacedPod({ namespace: kit.ns, labelSelector: `sless.kube5s.ru/function=${name}` }).catch(() => ({ items: [] }));
  for (const p of pods.items) {
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const port = p.spec?.containers[0]?.ports?.[0]?.containerPort ?? 8080;
    let direct: string;
    try {
      const r = await fetch(`http://${p.status?.podIP}:${port}/`, { signal: AbortSignal.timeout(5_000) });
      direct = `${r.status} ${(await r.text()).slice(0, 200)}`;
    } catch (e) {
      direct = String(e);
    }
    lines.push(`pod ${p.metadata?.name} ip ${p.status?.podIP} ready ${ready} image ${p.spec?.containers[0]?.image}; GET straight to ${p.status?.podIP}:${port}: ${direct}`);
  }
  const again = await kit.callFn(name).then(async (r) => `${r.status} ${(await r.text()).slice(0, 200)}`, (e: unknown) => String(e));
  lines.push(`the same call again through /fn: ${again}`);
  return lines.join('\n');
}
