// The one test entry point (`npm test`). Starts the real servers the suites need once per run
// (each is a module in test/services/), hands their addresses to the test processes through
// SLESS_TEST_* variables, runs node's test runner over every *.test.ts, then stops the servers.
//
//   npm test                      everything
//   npm test -- test/integration  only files under these paths
//   SLESS_TEST_SERVICES=git,s3 npm test -- src   start only these services
//   SLESS_TEST_SERVICES=node,git,s3,gitea,rabbitmq npm test -- test/e2e-node   the real node (`npm run test:node`)
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface TestService {
  /** Short name, used in SLESS_TEST_SERVICES and in logs. */
  readonly name: string;
  /** Starts the server; resolves with the variables the tests read and a stop function. The
   * variables of the services started before it are in process.env. */
  start(): Promise<{ env: Record<string, string>; stop: () => Promise<void> }>;
  /** Started only when SLESS_TEST_SERVICES names it (the real node: one per machine, slow). */
  readonly optIn?: boolean;
  /** Services start in ascending order (default 100), then by file name. */
  readonly order?: number;
}

// The suite runs on the Node the controller image ships (package.json's `node` dev dependency puts it
// first on npm scripts' PATH); a run on an older Node would test something no user runs.
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  console.error(`npm test needs Node >= 22 (this is ${process.version}): run it through npm after npm ci, which brings Node 22`);
  process.exit(1);
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function findTests(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [path.resolve(dir)].filter((f) => f.endsWith('.test.ts'));
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      // test/e2e-node runs only on the real node (`npm run test:node`), when named as a root.
      if (e.name === 'node_modules' || e.name === 'bench' || e.name === 'e2e-node' || e.name.startsWith('.')) continue;
      out.push(...(await findTests(p)));
    } else if (e.name.endsWith('.test.ts')) out.push(p);
  }
  return out.sort();
}

async function loadServices(): Promise<TestService[]> {
  const dir = path.join(root, 'test', 'services');
  const wanted = process.env.SLESS_TEST_SERVICES?.split(',').map((s) => s.trim()).filter(Boolean);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).sort();
  const services: TestService[] = [];
  for (const f of files) {
    const mod = (await import(pathToFileURL(path.join(dir, f)).href)) as { service?: TestService };
    if (!mod.service) continue;
    if (wanted ? !wanted.includes(mod.service.name) : mod.service.optIn) continue;
    services.push(mod.service);
  }
  return services.sort((a, b) => (a.order ?? 100) - (b.order ?? 100));
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const roots = args.length > 0 ? args : (process.env.SLESS_TEST_ROOTS?.split(',') ?? ['src', 'test']);
  const files = (await Promise.all(roots.map((r) => findTests(path.resolve(root, r))))).flat();
  if (files.length === 0) {
    console.error(`no *.test.ts files under ${roots.join(', ')}`);
    return 1;
  }

  const stops: Array<{ name: string; stop: () => Promise<void> }> = [];
  const env: Record<string, string> = {};
  let code = 1;
  // SIGINT/SIGTERM: forwarded to the test process once it runs; before that, the services already
  // started are stopped (not left running) and no further one starts.
  let child: ReturnType<typeof spawn> | undefined;
  let signalled: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals): void => {
    signalled = sig;
    child?.kill(sig);
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    for (const s of await loadServices()) {
      if (signalled) throw new Error(`${signalled} before starting ${s.name}`);
      const t0 = Date.now();
      console.log(`[test] starting ${s.name} ...`);
      const started = await s.start();
      stops.push({ name: s.name, stop: started.stop });
      Object.assign(env, started.env);
      Object.assign(process.env, started.env);
      console.log(`[test] ${s.name} up in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
    }
    const concurrency = process.env.SLESS_TEST_CONCURRENCY ?? '3';
    if (signalled) throw new Error(`${signalled} while starting the test services`);
    code = await new Promise<number>((resolve) => {
      child = spawn(
        process.execPath,
        ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...files],
        {
          stdio: 'inherit',
          env: { ...process.env, ...env },
          cwd: root,
        },
      );
      child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
    });
  } catch (err) {
    console.error('[test] could not start the test services:', err);
    code = 1;
  } finally {
    for (const { name, stop } of stops.reverse()) {
      await stop().catch((err: unknown) => console.error(`[test] stopping ${name} failed:`, err));
    }
  }
  return code;
}

process.exitCode = await main();
