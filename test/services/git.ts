// Test service `git`: one real git server (git http-backend behind node:http) on 127.0.0.1 for the
// whole test run. Tests create their own repositories with test/helpers/git-server.ts.
import { rm } from 'node:fs/promises';
import type { TestService } from '../run.ts';
import { testBindHost } from '../helpers/bind-host.ts';
import { startGitServer } from '../helpers/git-server.ts';

export const service: TestService = {
  name: 'git',
  async start() {
    const server = await startGitServer({ host: testBindHost() });
    return {
      env: { SLESS_TEST_GIT_URL: server.url, SLESS_TEST_GIT_ROOT: server.root },
      stop: async () => {
        await server.stop();
        await rm(server.root, { recursive: true, force: true });
      },
    };
  },
};
