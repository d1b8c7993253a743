// The benchmarks' git server in a process of its own (git-server-child.ts starts it): the benchmark's own
// event loop already carries its watches and the build harness, and the git server's node:http front (a
// `git http-backend` spawn per request) on that same loop delayed every ls-refs and fetch of the controller
// behind the benchmark's other work. A hosted git server
// shares nothing with whoever pushes. Prints {"url", "root"} as one line once it listens; exits when its
// stdin closes (the benchmark ended, however it ended) or on SIGTERM.
import { startGitServer } from '../helpers/git-server.ts';

const root = process.argv[2];
const server = await startGitServer(root ? { root } : {});
process.stdout.write(`${JSON.stringify({ url: server.url, root: server.root })}\n`);
const stop = () => void server.stop().finally(() => process.exit(0));
process.stdin.on('end', stop).on('close', stop).resume();
process.once('SIGTERM', stop);
