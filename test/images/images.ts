// The images the real-node tests run (built by test/images/build.sh as OCI layouts, see its header),
// pushed into a test registry under the names the controller's settings use:
//
//   const images = await pushTestImages('10.0.0.1:5000/sless-test');
//   settings = { ...settings, kanikoImage: images.kanikoImage, buildToolsImage: images.buildToolsImage,
//                runtimeImagePrefix: images.runtimeImagePrefix };
//
// The runtime images get the catalog's tag (`sless-runtime-nodejs20:3`, what baseImageOf names), the build
// tools image BUILD_TOOLS_IMAGE.tag, kaniko its version. skopeo skips blobs the registry already has.
import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BUILD_TOOLS_IMAGE, baseImageOf, buildToolsImageOf } from '../../src/build/runtime-catalog.ts';
import { RUNTIMES } from '../../src/manifest/types.ts';

const run = promisify(execFile);
const buildScript = fileURLToPath(new URL('./build.sh', import.meta.url));

export interface LocalImage {
  readonly name: string;
  /** The tag inside the layout (pins and source hash). */
  readonly layoutTag: string;
  readonly layout: string;
}

/** What build.sh builds (or would build): name, layout tag and layout folder of each image. */
export async function localImages(): Promise<LocalImage[]> {
  const { stdout } = await run('bash', [buildScript, '--list'], { env: process.env });
  return stdout
    .trim()
    .split('\n')
    .map((line) => {
      const [name = '', layoutTag = '', layout = ''] = line.split(' ');
      return { name, layoutTag, layout };
    });
}

export interface PushedImages {
  readonly kanikoImage: string;
  readonly buildToolsImage: string;
  /** `<prefix>/sless-runtime-<runtime>:<tag>` are there (SLESS_RUNTIME_IMAGE_PREFIX). */
  readonly runtimeImagePrefix: string;
}

/** Where each pushed image goes: runtime images and the build tools under `prefix`, kaniko beside them. */
export function pushedNames(prefix: string, kanikoVersion: string): Record<string, string> {
  const names: Record<string, string> = {
    kaniko: `${prefix}/kaniko:${kanikoVersion}`,
    [BUILD_TOOLS_IMAGE.name]: buildToolsImageOf(prefix),
  };
  for (const r of RUNTIMES) names[`sless-runtime-${r}`] = baseImageOf(r, prefix);
  return names;
}

/**
 * Pushes kaniko, the build tools and every runtime image to `prefix` (e.g. `10.0.0.1:5000/sless-test`),
 * plain HTTP. Fails, naming the command to run, when build.sh has not built them yet.
 */
export async function pushTestImages(prefix: string): Promise<PushedImages> {
  const images = await localImages();
  const kaniko = images.find((i) => i.name === 'kaniko');
  if (!kaniko) throw new Error('test/images/build.sh --list names no kaniko image');
  const names = pushedNames(prefix, kaniko.layoutTag.replace(/-r\d+$/, ''));
  for (const image of images) {
    const dest = names[image.name];
    if (!dest) continue; // the sless-test-base-* images only serve the builds in build.sh
    try {
      await access(image.layout);
    } catch {
      throw new Error(`image ${image.name}:${image.layoutTag} is not built (${image.layout}): run bash test/images/build.sh`);
    }
    await run('skopeo', ['copy', '-q', '--dest-tls-verify=false', `oci:${image.layout}:${image.layoutTag}`, `docker://${dest}`], {
      maxBuffer: 4 * 1024 * 1024,
    });
  }
  return {
    kanikoImage: names.kaniko ?? '',
    buildToolsImage: names[BUILD_TOOLS_IMAGE.name] ?? '',
    runtimeImagePrefix: prefix,
  };
}
