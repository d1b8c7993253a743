// The `sless` command: dispatches to one module per command, loaded lazily so `sless validate` does
// not pay for the Kubernetes client.
import { ConfigError } from './config/config.ts';
import type { CommandIo, CommandRun } from './cli/io.ts';

const commands: Record<string, { load: () => Promise<{ run: CommandRun }>; summary: string }> = {
  controller: { load: () => import('./cli/controller.ts'), summary: 'run against Kubernetes' },
  dev: { load: () => import('./cli/dev.ts'), summary: 'run everything on this machine: no cluster, no S3, no registry' },
  validate: { load: () => import('./cli/validate.ts'), summary: 'check every function.yaml under DIR' },
  hash: { load: () => import('./cli/hash.ts'), summary: 'print {"name","path","code_hash"} per function under DIR' },
  check: { load: () => import('./cli/check.ts'), summary: 'check an install, each piece with the fix (--pre: before install)' },
  token: { load: () => import('./cli/token.ts'), summary: 'sign a /v1 token with SLESS_JWT_SECRET: --subject S [--admin] [--ttl 30d]' },
  init: { load: () => import('./cli/client/init.ts'), summary: 'write a new function folder (function.yaml and a handler)' },
  login: { load: () => import('./cli/client/login.ts'), summary: 'store the endpoint and token the commands below use' },
  get: { load: () => import('./cli/client/get.ts'), summary: 'list functions, triggers, jobs, repositories, builds or revisions' },
  describe: { load: () => import('./cli/client/describe.ts'), summary: "a function's settings, status, builds and calls" },
  logs: { load: () => import('./cli/client/logs.ts'), summary: "print a function's output from every replica (-f: follow)" },
  invoke: { load: () => import('./cli/client/invoke.ts'), summary: 'call a function through /fn and print its answer' },
  sync: { load: () => import('./cli/client/sync.ts'), summary: 'ask for a repository sync now (--wait: until it is live)' },
  rollback: { load: () => import('./cli/client/rollback.ts'), summary: 'serve an earlier revision at once and pin it (--undo: back to git)' },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  sless ${name.padEnd(11)} ${c.summary}`);
  return `usage:\n${lines.join('\n')}\n\nsless <command> --help lists a command's settings.\n`;
}

export async function main(argv: string[], io: CommandIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-v' || name === 'version') {
    const { readFileSync } = await import('node:fs');
    const { packageRoot } = await import('./package-root.ts');
    const pkg = JSON.parse(readFileSync(`${packageRoot}package.json`, 'utf8')) as { version: string };
    io.stdout.write(`sless ${pkg.version}\n`);
    return 0;
  }
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    io.stderr.write(`sless: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  if ((name === 'controller' || name === 'dev' || name === 'token' || name === 'check') && (rest.includes('--help') || rest.includes('-h'))) {
    const { describeCommandSettings } = await import('./config/tool-settings.ts');
    io.stdout.write(`sless ${name} settings (flag / environment variable):\n${describeCommandSettings(name)}\n`);
    return 0;
  }
  try {
    const mod = await command.load();
    return await mod.run(rest, io);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(`sless ${name}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
