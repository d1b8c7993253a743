// `sless init NAME --runtime R [--dir D]`: a new function folder (D, default ./NAME) with a working
// handler and function.yaml for R; refuses a folder that exists and is not empty.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RUNTIME_CATALOG } from '../../build/runtime-catalog.ts';
import { checkFunctionName } from '../../manifest/manifest-schema.ts';
import type { Runtime } from '../../manifest/types.ts';
import type { CommandIo } from '../io.ts';
import { option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError, oneLine } from './errors.ts';
import { templateFiles } from './init-templates.ts';

const RUNTIME_NAMES = Object.keys(RUNTIME_CATALOG) as Runtime[];
const usage = `sless init NAME --runtime ${RUNTIME_NAMES.join('|')} [--dir DIR]`;

async function isEmptyOrMissing(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code === 'ENOTDIR') return false;
    throw new CliError(`cannot read ${dir}: ${oneLine(err)}`);
  }
}

export const initCommand: ClientCommand = {
  name: 'init',
  usage,
  help: `Writes a new function folder: function.yaml and a handler that answers with a greeting.
  --runtime R   one of ${RUNTIME_NAMES.join(', ')}
  --dir DIR     the folder to create (default ./NAME); an existing one must be empty`,
  options: { runtime: {}, dir: {} },
  remote: false,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    const [name] = positionals(args, usage, 1) as [string];
    const nameProblem = checkFunctionName(name);
    if (nameProblem) throw new CliError(`${nameProblem}; pick another NAME`);
    const runtime = option(args, 'runtime');
    if (runtime === undefined)
      throw new CliError(`--runtime is required: one of ${RUNTIME_NAMES.join(', ')}`);
    if (!(runtime in RUNTIME_CATALOG))
      throw new CliError(
        `--runtime ${runtime} is not a runtime sless knows; use one of ${RUNTIME_NAMES.join(', ')}`,
      );
    const dir = option(args, 'dir') ?? name;
    if (!(await isEmptyOrMissing(dir)))
      throw new CliError(`${dir} already exists and is not empty; pick another --dir or remove it`);
    const files = templateFiles({
      name,
      runtime: runtime as Runtime,
      language: RUNTIME_CATALOG[runtime as Runtime].language,
      explicitName: path.basename(path.resolve(dir)) !== name,
    });
    try {
      await mkdir(dir, { recursive: true });
      for (const [file, content] of Object.entries(files))
        await writeFile(path.join(dir, file), content, { flag: 'wx' });
    } catch (err) {
      throw new CliError(`cannot write ${dir}: ${oneLine(err)}`);
    }
    ctx.io.stdout.write(
      `created ${dir}/ (${Object.keys(files).join(', ')}); check it with sless validate ${dir}\n`,
    );
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(initCommand, argv, io);
