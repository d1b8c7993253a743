// `sless login --endpoint URL --token-file FILE`: checks the token against the server, then stores
// endpoint and token (0600) for the other client commands.
import { readFileSync } from 'node:fs';
import type { CommandIo } from '../io.ts';
import { option, type ParsedArgs } from './args.ts';
import { positionals, runClientCommand, type ClientCommand, type CommandContext } from './command.ts';
import { CliError, oneLine } from './errors.ts';
import { ApiClient, ApiError } from './http-client.ts';
import { normalizeEndpoint, storeLogin } from './settings.ts';
import { tokenNamespace } from './token-namespace.ts';

const usage = 'sless login --endpoint URL --token-file FILE [-n NS]';

export const loginCommand: ClientCommand = {
  name: 'login',
  usage,
  help: `Checks the token against the server (GET /v1/namespaces/NS/functions) and stores endpoint and
token in $XDG_CONFIG_HOME/sless/config.json (or ~/.config/sless/config.json), readable only by you.
SLESS_ENDPOINT and SLESS_API_TOKEN, when set, still win over what is stored.
  --endpoint URL      the sless server, e.g. https://sless.example.com
  --token-file FILE   a file holding the bearer token (- reads standard input)
  -n, --namespace NS  the namespace to check access to (default: the token's own)`,
  options: { endpoint: {}, 'token-file': {}, namespace: { short: 'n' } },
  remote: false,
  async execute(args: ParsedArgs, ctx: CommandContext) {
    positionals(args, usage, 0);
    const endpointText = option(args, 'endpoint');
    const tokenFile = option(args, 'token-file');
    if (endpointText === undefined || tokenFile === undefined)
      throw new CliError(`--endpoint and --token-file are both required; usage: ${usage}`);
    const endpoint = normalizeEndpoint(endpointText, '--endpoint');
    let token: string;
    try {
      token = readFileSync(tokenFile === '-' ? 0 : tokenFile, 'utf8').trim();
    } catch (err) {
      throw new CliError(`cannot read --token-file ${tokenFile}: ${oneLine(err)}`);
    }
    if (token === '') throw new CliError(`--token-file ${tokenFile} is empty; put the bearer token in it`);
    const namespace = option(args, 'namespace') ?? ctx.env.namespace ?? tokenNamespace(token);
    const api = new ApiClient({ endpoint, token, namespace });
    await api.get(api.nsPath('functions')).catch((err: unknown) => {
      // A namespace nobody has used yet may not exist: the token was accepted all the same.
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    });
    const file = await storeLogin(ctx.env, { endpoint, token });
    ctx.io.stdout.write(`logged in to ${endpoint} (namespace ${namespace}); settings stored in ${file}\n`);
    return 0;
  },
};

export const run = (argv: string[], io: CommandIo) => runClientCommand(loginCommand, argv, io);
