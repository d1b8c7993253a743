import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { RUNTIMES, type Runtime } from '../manifest/types.ts';
import {
  IMAGE_PATHS,
  RUNTIME_CATALOG,
  baseImageOf,
  defaultRuntimesDir,
  dependencyFilesOf,
  functionFilesOf,
  localRuntimePlan,
  type FunctionFiles,
} from './runtime-catalog.ts';

const noFiles: FunctionFiles = {
  hasRequirementsTxt: false,
  hasPackageJson: false,
  hasPackageLock: false,
  hasGoMod: false,
  hasGoSum: false,
};

describe('baseImageOf', () => {
  it('puts the prefix, the runtime and its image tag together', () => {
    assert.equal(
      baseImageOf('python3.11', 'registry.example.com/sless'),
      'registry.example.com/sless/sless-runtime-python3.11:3',
    );
    assert.equal(baseImageOf('go1.23', 'localhost:5000/'), 'localhost:5000/sless-runtime-go1.23:3');
  });
  it('gives a bare local image name for an empty prefix', () => {
    assert.equal(baseImageOf('nodejs22', ''), 'sless-runtime-nodejs22:3');
  });
});

describe('RUNTIME_CATALOG', () => {
  it('covers every runtime a manifest may name', () => {
    assert.deepEqual(Object.keys(RUNTIME_CATALOG).sort(), [...RUNTIMES].sort());
  });

  for (const runtime of RUNTIMES) {
    it(`${runtime}: runtimes/${runtime}/Dockerfile builds FROM the catalog's upstream image with the catalog's server`, async () => {
      const entry = RUNTIME_CATALOG[runtime];
      const dockerfile = await readFile(path.join(defaultRuntimesDir, runtime, 'Dockerfile'), 'utf8');
      // The upstream image is the default of the BASE_IMAGE build argument (the tests pass a local one).
      assert.match(dockerfile, new RegExp(`^ARG BASE_IMAGE=${entry.upstreamImage.replace(/\./g, '\\.')}\nFROM \\$\\{BASE_IMAGE\\}`, 'm'));
      // Go copies the whole runtimes/go folder (the runtime module and build.sh) to where builds expect it.
      const copy =
        entry.language === 'go' ? `COPY go/ ${IMAGE_PATHS.runtimesDir}/go/` : `COPY ${entry.server} `;
      assert.ok(dockerfile.includes(copy), `${runtime}/Dockerfile has "${copy}"`);
      if (entry.language === 'python') assert.ok(dockerfile.includes(`PYTHONPATH=${IMAGE_PATHS.pythonDeps}`));
      assert.match(dockerfile, /^USER 10001$/m);
    });
  }
});

describe('functionFilesOf', () => {
  it('sees the dependency files at the root of the function folder only', () => {
    assert.deepEqual(functionFilesOf(['handler.py', 'requirements.txt', 'lib/package.json', '/shared/go.mod']), {
      ...noFiles,
      hasRequirementsTxt: true,
    });
  });
  it('counts npm-shrinkwrap.json as a lockfile like package-lock.json', () => {
    const lock = { ...noFiles, hasPackageJson: true, hasPackageLock: true };
    assert.deepEqual(functionFilesOf(['package.json', 'package-lock.json']), { ...lock, packageLockFile: 'package-lock.json' });
    assert.deepEqual(functionFilesOf(['package.json', 'npm-shrinkwrap.json']), { ...lock, packageLockFile: 'npm-shrinkwrap.json' });
    assert.deepEqual(functionFilesOf(['go.mod', 'handler.go']), { ...noFiles, hasGoMod: true });
    assert.deepEqual(functionFilesOf(['go.mod', 'go.sum']), { ...noFiles, hasGoMod: true, hasGoSum: true });
  });
});

describe('dependencyFilesOf', () => {
  it('names the files that decide each language\'s dependencies, and only those the function has', () => {
    const all = functionFilesOf(['requirements.txt', 'package.json', 'npm-shrinkwrap.json', 'go.mod', 'go.sum', 'handler.py']);
    assert.deepEqual(dependencyFilesOf('python3.11', all), ['requirements.txt']);
    assert.deepEqual(dependencyFilesOf('nodejs22', all), ['package.json', 'npm-shrinkwrap.json']);
    assert.deepEqual(dependencyFilesOf('go1.23', all), ['go.mod', 'go.sum']);
    assert.deepEqual(dependencyFilesOf('nodejs20', functionFilesOf(['package.json'])), ['package.json']);
    assert.deepEqual(dependencyFilesOf('go1.23', functionFilesOf(['go.mod'])), ['go.mod']);
    assert.deepEqual(dependencyFilesOf('python3.12', functionFilesOf(['handler.py'])), []);
  });
});

describe('localRuntimePlan', () => {
  const base = {
    functionDir: '/data/fn/hello',
    workDir: '/data/work/hello',
    entrypoint: 'handler.handle',
    runtimesDir: '/sless/runtimes',
  };

  it('python: pip installs into the work folder, and the server finds it through PYTHONPATH', () => {
    const plan = localRuntimePlan('python3.12', { ...base, files: { ...noFiles, hasRequirementsTxt: true } });
    assert.deepEqual(plan.prepare, [
      {
        argv: [
          'python3',
          '-m',
          'pip',
          'install',
          '--no-cache-dir',
          '--disable-pip-version-check',
          '--no-input',
          '--target',
          '/data/work/hello/python-deps',
          '-r',
          'requirements.txt',
        ],
        cwd: '/data/fn/hello',
      },
    ]);
    assert.deepEqual(plan.run, {
      argv: ['python3', '/sless/runtimes/python/server.py'],
      cwd: '/data/fn/hello',
      env: {
        SLESS_FUNCTION_DIR: '/data/fn/hello',
        SLESS_ENTRYPOINT: 'handler.handle',
        PYTHONPATH: '/data/work/hello/python-deps',
        PYTHONUNBUFFERED: '1',
      },
    });
  });

  it('python without requirements.txt: nothing to prepare', () => {
    assert.deepEqual(localRuntimePlan('python3.11', { ...base, files: noFiles }).prepare, []);
  });

  it('node: npm ci with a lockfile, run by the same node that runs sless unless told otherwise', () => {
    const plan = localRuntimePlan('nodejs20', {
      ...base,
      files: { ...noFiles, hasPackageJson: true, hasPackageLock: true },
    });
    assert.deepEqual(plan.prepare, [
      { argv: ['npm', 'ci', '--omit=dev', '--no-audit', '--no-fund'], cwd: '/data/fn/hello' },
    ]);
    assert.deepEqual(plan.run.argv, [process.execPath, '/sless/runtimes/node/server.mjs']);
    assert.deepEqual(
      localRuntimePlan('nodejs22', { ...base, files: noFiles, node: '/usr/bin/node22' }).run.argv,
      ['/usr/bin/node22', '/sless/runtimes/node/server.mjs'],
    );
  });

  it('go: builds the function into the work folder, then runs that binary', () => {
    const plan = localRuntimePlan('go1.23', { ...base, files: noFiles });
    assert.deepEqual(plan.prepare, [
      {
        argv: ['sh', '/sless/runtimes/go/build.sh', '/data/fn/hello', '/data/work/hello/server'],
        cwd: '/data/fn/hello',
      },
    ]);
    assert.deepEqual(plan.run.argv, ['/data/work/hello/server']);
  });

  it('defaults to the runtimes/ folder of this checkout', () => {
    const plan = localRuntimePlan('nodejs20', { ...base, runtimesDir: undefined, files: noFiles });
    assert.equal(plan.run.argv[1], path.join(defaultRuntimesDir, 'node', 'server.mjs'));
  });
});

/** Everything a runtime's base image is built from (tests excluded), as one digest. */
async function baseImageSourcesDigest(runtime: Runtime): Promise<string> {
  const files: string[] = [path.join(runtime, 'Dockerfile')];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(path.join(defaultRuntimesDir, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) await walk(rel);
      else if (!e.name.endsWith('_test.go')) files.push(rel);
    }
  };
  await walk(RUNTIME_CATALOG[runtime].language);
  const hash = createHash('sha256');
  for (const f of files.sort())
    hash
      .update(`${f}\0`)
      .update(await readFile(path.join(defaultRuntimesDir, f)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

// Base images are tagged by hand (imageTag), and a new tag is what makes functions rebuild on a new
// runtime. This table pins the sources each tag was made from: change a server, the Go runtime or a
// base Dockerfile, and this test asks for a new imageTag (and the new digest here).
const PINNED_SOURCES: Record<Runtime, { tag: string; digest: string }> = {
  'python3.11': { tag: '3', digest: '1d1b3ee513c20fb1' },
  'python3.12': { tag: '3', digest: '3825f7c11ca5003d' },
  nodejs20: { tag: '3', digest: '702305fe560a9d3c' },
  nodejs22: { tag: '3', digest: '9be4308826c25955' },
  'go1.23': { tag: '3', digest: 'e82ce5e6418a477f' },
};

describe('base image tags', () => {
  for (const runtime of RUNTIMES) {
    it(`${runtime}: the image tag changes whenever the image's sources change`, async () => {
      const digest = await baseImageSourcesDigest(runtime);
      const pinned = PINNED_SOURCES[runtime];
      assert.ok(
        pinned.tag === RUNTIME_CATALOG[runtime].imageTag && pinned.digest === digest,
        `runtimes/ sources of ${runtime} are now ${digest} (pinned: tag ${pinned.tag}, ${pinned.digest}). ` +
          `Bump RUNTIME_CATALOG['${runtime}'].imageTag in src/build/runtime-catalog.ts, then set ` +
          `PINNED_SOURCES['${runtime}'] to {tag: <the new tag>, digest: '${digest}'} in this file.`,
      );
    });
  }
});
