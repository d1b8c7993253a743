// Starts git-server-process.ts as a child process and answers the GitServer it serves (see there for why).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { GitServer } from '../helpers/git-server.ts';

const script = fileURLToPath(new URL('./git-server-process.ts', import.meta.url));

export async function startGitServerProcess(root?: string): Promise<GitServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...(root ? [root] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    const onData = (chunk: string) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      child.stdout.off('data', onData);
      resolve(out.slice(0, nl));
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the git server process exited (${code}) before it listened`)));
  });
  const { url, root: served } = JSON.parse(first) as { url: string; root: string };
  return {
    url,
    root: served,
    stop: async () => {
      child.stdin.end();
      child.kill('SIGTERM');
      await exited;
    },
  };
}
