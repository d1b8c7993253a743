// scripts/images.sh, the command that builds and pushes the images a cluster needs, against a real
// registry (docker-registry on 127.0.0.1): kaniko compiled from the pinned fork's source, laid out as
// the official image and pushed, and the settings printed; wrong usage exits 2 naming the problem.
// The full build (build tools, runtimes, controller: kaniko in runc) runs in the real-node install
// test, which needs the test base images (test/images/build.sh).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildToolsImageOf } from '../../src/build/runtime-catalog.ts';
import { manifestStatus, parseImageRef } from '../../src/check/registry-client.ts';
import { startLocalRegistry, type LocalRegistry } from '../helpers/local-registry.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const script = path.join(root, 'scripts', 'images.sh');
const env = { ...process.env, PATH: `${path.join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}:/usr/local/go/bin` };
/** The fork the test images use (test/images/README.md: the default fork is not on the Go module proxy here). */
const KANIKO_SOURCE = 'go:github.com/chainguard-dev/kaniko@v1.25.0';

async function images(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run('bash', [script, ...args], { env, maxBuffer: 16 * 1024 * 1024, timeout: 1_500_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('scripts/images.sh', { timeout: 1_800_000 }, () => {
  let registry: LocalRegistry;
  before(async () => {
    registry = await startLocalRegistry();
  });
  after(() => registry?.stop());

  it('builds kaniko from source, pushes it and prints the settings', async () => {
    const prefix = `${registry.address}/sless`;
    const r = await images(['--registry', prefix, '--insecure', '--only', 'kaniko', '--kaniko-source', KANIKO_SOURCE]);
    assert.equal(r.code, 0, r.stderr.slice(-4000));
    assert.equal(
      r.stdout,
      [
        "# The controller's settings (deploy/config.yaml, or the chart's values):",
        `SLESS_RUNTIME_IMAGE_PREFIX=${prefix}`,
        `SLESS_KANIKO_IMAGE=${prefix}/kaniko:v1.25.0`,
        `SLESS_BUILD_TOOLS_IMAGE=${buildToolsImageOf(prefix)}`,
        '',
      ].join('\n'),
    );
    assert.equal((await manifestStatus(parseImageRef(`${prefix}/kaniko:v1.25.0`))).status, 200);
    const config = await fetch(`http://${registry.address}/v2/sless/kaniko/manifests/v1.25.0`, { headers: { accept: 'application/vnd.oci.image.manifest.v1+json' } });
    const manifest = (await config.json()) as { config: { digest: string } };
    const image = (await (await fetch(`http://${registry.address}/v2/sless/kaniko/blobs/${manifest.config.digest}`)).json()) as { config: { Entrypoint?: string[]; Env?: string[] } };
    assert.deepEqual(image.config.Entrypoint, ['/kaniko/executor'], 'laid out as the official kaniko image');
    assert.ok(image.config.Env?.includes('DOCKER_CONFIG=/kaniko/.docker/'));
  });

  const usage: Array<[string, string[], RegExp]> = [
    ['no --registry', [], /--registry HOST\[:PORT\]\/PREFIX is required/],
    ['a registry without a prefix', ['--registry', 'registry.example.com'], /needs a prefix after the host: registry\.example\.com\/sless/],
    ['an unknown option', ['--registry', 'r.example/p', '--push'], /unknown option --push \(--help lists them\)/],
    ['a --base that names nothing', ['--registry', 'r.example/p', '--base', 'nodejs18=node:18'], /--base nodejs18: not one of build-tools python3\.11/],
    ['a --base without an image', ['--registry', 'r.example/p', '--base', 'nodejs20'], /--base needs KEY=IMAGE/],
  ];
  for (const [what, args, message] of usage) {
    it(`refuses ${what} with exit 2`, async () => {
      const r = await images(args);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    });
  }

  it('--help prints the usage', async () => {
    const r = await images(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Builds every image a cluster needs/);
    assert.match(r.stdout, /--kaniko-source SOURCE/);
  });
});
