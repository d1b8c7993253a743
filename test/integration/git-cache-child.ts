// A second controller process on the same git cache folder (source-incremental.test.ts): syncs once,
// optionally with the head a webhook named, and prints the result as JSON.
import { GitSource } from '../../src/source/git-source.ts';
import { buildSnapshot } from '../../src/source/build-snapshot.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';

const [url = '', cacheDir = '', head] = process.argv.slice(2);
const source = new GitSource({ url, cacheDir, targets: TargetPolicy.anyTarget() });
const { revision, fetched, tree } = await source.sync(head ? { head } : {});
const snapshot = await buildSnapshot(tree);
await source.close();
process.stdout.write(JSON.stringify({ revision, fetched, hashes: Object.fromEntries(snapshot.functions.map((f) => [f.name, f.codeHash])) }));
