// The objects docs/install.md and the README tell a reader to apply are accepted by the real API server
// as written (server-side dry run; kube service, CRDs installed): the Ingress, the FunctionRepository
// of a namespace per team (with $NS as the shell would expand it) and the README's repository example.
// The HTTPRoute is checked for shape only: the test cluster serves no Gateway API.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { testKubeConfig } from '../helpers/kube.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: Record<string, unknown>;
}

async function kubectl(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const kubeconfig = process.env.SLESS_TEST_KUBECONFIG;
  if (!kubeconfig) throw new Error('SLESS_TEST_KUBECONFIG is not set: run this suite through `npm test` (it starts the kube service)');
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], { cwd: root, maxBuffer: 8 * 1024 * 1024 });
}

/** The ```yaml blocks of a Markdown file that are Kubernetes objects, and the heredocs `kubectl apply -f - <<EOF` feeds. */
function objectsIn(markdown: string): Obj[] {
  const blocks = [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const heredocs = [...markdown.matchAll(/kubectl apply -f - <<EOF\n([\s\S]*?)\nEOF/g)].map((m) => m[1]!);
  return [...blocks, ...heredocs].map((text) => parse(text) as Obj).filter((o) => typeof o?.apiVersion === 'string' && typeof o.kind === 'string' && !o.apiVersion.startsWith('kustomize'));
}

describe('the objects the install docs give', () => {
  let work: string;
  let install: Obj[];
  let readme: Obj[];
  // The team of docs/install.md section 9, with this run's own subject so runs do not share a namespace.
  const team = `team-a-${process.pid}-${Date.now().toString(36)}`;
  const ns = namespaceForSubject(team);
  const core = () => testKubeConfig().makeApiClient(CoreV1Api);

  before(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'sless-install-docs-'));
    const text = await readFile(path.join(root, 'docs', 'install.md'), 'utf8');
    install = objectsIn(text.replaceAll('$NS', ns));
    readme = objectsIn(await readFile(path.join(root, 'README.md'), 'utf8'));
    for (const name of ['sless-system', ns, 'team-a']) {
      await core()
        .createNamespace({ body: { metadata: { name, labels: { 'sless-test': 'true' } } } })
        .catch((err: { code?: number }) => {
          if (err.code !== 409) throw err;
        });
    }
  });
  after(async () => {
    await core().deleteNamespace({ name: ns }).catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
  });

  const dryRun = async (objects: readonly Obj[], name: string) => {
    const file = path.join(work, `${name}.json`);
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
    return kubectl(['apply', '--dry-run=server', '-f', file]);
  };

  it('finds the Ingress, the HTTPRoute and the FunctionRepository in docs/install.md', () => {
    assert.deepEqual(install.map((o) => o.kind).sort(), ['FunctionRepository', 'HTTPRoute', 'Ingress']);
  });

  it('the Ingress and the team FunctionRepository are accepted as written', async () => {
    const { stdout } = await dryRun(
      install.filter((o) => o.kind !== 'HTTPRoute'),
      'install',
    );
    assert.match(stdout, /ingress\.networking\.k8s\.io\/sless-controller created \(server dry run\)/, stdout);
    assert.match(stdout, /functionrepository\.sless\.kube5s\.ru\/functions created \(server dry run\)/, stdout);
    const repo = install.find((o) => o.kind === 'FunctionRepository')!;
    assert.equal(repo.metadata.namespace, ns, "the team's repository lives in the namespace its token maps to");
  });

  it("the team's git Secret command makes a Secret of sless' own type", async () => {
    const { stdout } = await kubectl([
      '-n', ns, 'create', 'secret', 'generic', 'functions-git', '--type=sless.kube5s.ru/git-credentials',
      '--from-literal=token=t0ken', '--from-literal=webhookSecret=s3cret', '--dry-run=server', '-o', 'json',
    ]);
    const secret = JSON.parse(stdout) as { type: string; data: Record<string, string> };
    assert.equal(secret.type, 'sless.kube5s.ru/git-credentials');
    assert.deepEqual(Object.keys(secret.data).sort(), ['token', 'webhookSecret']);
  });

  it('the HTTPRoute sends every path of the host to the Service', () => {
    const route = install.find((o) => o.kind === 'HTTPRoute') as Obj & {
      spec: { hostnames: string[]; rules: Array<{ backendRefs: Array<{ name: string; port: number }> }> };
    };
    assert.equal(route.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.deepEqual(route.spec.rules[0]?.backendRefs, [{ name: 'sless-controller', port: 80 }]);
  });

  it("the README's FunctionRepository is accepted as written", async () => {
    assert.deepEqual(readme.map((o) => o.kind), ['FunctionRepository']);
    const { stdout } = await dryRun(readme, 'readme');
    assert.match(stdout, /functionrepository\.sless\.kube5s\.ru\/team-functions created \(server dry run\)/, stdout);
  });
});
