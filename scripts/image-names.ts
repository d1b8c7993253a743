// What scripts/images.sh builds and where each image goes under a registry prefix, from the runtime
// catalog (the tags the controller expects: baseImageOf, buildToolsImageOf), one line per image:
//   <key> <destination> <dockerfile relative to runtimes/> <build argument for the base> <upstream base>
// and the controller's: `controller <prefix>/sless-controller:<package version> deploy/Dockerfile BASE_IMAGE -`.
import { readFileSync } from 'node:fs';
import { BUILD_TOOLS_IMAGE, RUNTIME_CATALOG, baseImageOf, buildToolsImageOf } from '../src/build/runtime-catalog.ts';
import { RUNTIMES } from '../src/manifest/types.ts';

const prefix = process.argv[2];
if (!prefix) {
  process.stderr.write('usage: node --import tsx scripts/image-names.ts HOST[:PORT]/PREFIX\n');
  process.exit(2);
}
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const lines = [`${BUILD_TOOLS_IMAGE.name} ${buildToolsImageOf(prefix)} build-tools/Dockerfile GO_IMAGE golang:1.23-bookworm`];
for (const r of RUNTIMES) lines.push(`${r} ${baseImageOf(r, prefix)} ${r}/Dockerfile BASE_IMAGE ${RUNTIME_CATALOG[r].upstreamImage}`);
lines.push(`controller ${prefix}/sless-controller:${pkg.version} deploy/Dockerfile BASE_IMAGE node:22-bookworm-slim`);
process.stdout.write(`${lines.join('\n')}\n`);
