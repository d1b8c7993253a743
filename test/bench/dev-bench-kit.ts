// What the `sless dev` benchmarks share: the summary line of a series of timings, and the start of a
// run (a real git server, one repository whose main holds the given files, a clone to push from).
import { createRepo, startGitServer, WorkClone, type GitServer, type TestRepo } from '../helpers/git-server.ts';

/** `median … ms (min, p90, max; n)` of a series of milliseconds. */
export function stats(ms: readonly number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  const median = s.length % 2 ? at(0.5) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  return `median ${median.toFixed(0)} ms  (min ${s[0]?.toFixed(0)}, p90 ${at(0.9).toFixed(0)}, max ${s.at(-1)?.toFixed(0)}; n=${s.length})`;
}

/** A git server with repository `name` whose main holds `files` (committed and pushed), and a clone of it. */
export async function benchRepository(name: string, files: Record<string, string>): Promise<{ server: GitServer; repo: TestRepo; clone: WorkClone }> {
  const server = await startGitServer();
  const repo = await createRepo(server, name);
  const clone = await WorkClone.create(repo);
  await clone.write(files);
  await clone.commitAndPush('initial');
  return { server, repo, clone };
}
