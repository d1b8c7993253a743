// `npm run build` (`node scripts/bundle.mjs [OUTDIR]`, default dist/): bundles the CLI (src/main.ts) with esbuild, and copies the console's
// templates and static files beside it (console/). bin/sless.js runs dist/main.js when it exists. Why a bundle: the controller imported ~2,000
// modules (@kubernetes/client-node alone is 869), and resolving, reading and compiling them one by one
// took ~4.5 s at start-up on a loaded machine; one file per chunk loads in ~1 s. Code splitting keeps
// the lazy `import()`s lazy (the commands, PostgreSQL, parts of the AWS SDK): each becomes its own
// chunk, loaded when first used. Every chunk lies in dist/ itself, one level below the package root
// as src/ is, which src/package-root.ts relies on. Minified, because V8 keeps every chunk's source in
// memory: esbuild kept some comments, one of them with a non-ASCII character, which made V8 store the
// controller's 8 MB chunk at two bytes a character. Without whitespace and comments the sources were 7.8 MB
// instead of 14.1 (RSS 123 -> 104 MB); with local names minified too, 5.4 MB (RSS at start 126.6 -> 124.9
// MB). keepNames keeps every function's and class's own name, so stack frames still say `at boom` and
// `at o.go`: the class before a method's name is the minified local. test/integration/cli-bundle.test.ts
// checks ASCII only, the size and the names.
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('../', import.meta.url));
const outdir = path.resolve(process.argv[2] ?? `${root}dist`);

await rm(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // Optional native add-ons that their packages load inside try/catch: left out, found at run time if installed.
  external: ['pg-native', 'bufferutil', 'utf-8-validate', '@aws-sdk/signature-v4-crt'],
  // CommonJS packages (fastify, pg, the AWS SDK) call require() for Node's built-ins; ESM has none.
  banner: { js: "import { createRequire as __slessCreateRequire } from 'node:module'; const require = __slessCreateRequire(import.meta.url);" },
  logLevel: 'warning',
  metafile: true,
  minify: true,
  keepNames: true,
});
// What is left past ASCII is in regular expressions and template literals (esbuild escapes it in strings):
// \uXXXX means the same code unit there, and keeps every chunk one-byte for V8.
for (const file of Object.keys(result.metafile.outputs).filter((f) => f.endsWith('.js'))) {
  const at = path.resolve(root, file);
  const code = await readFile(at, 'utf8');
  if (/[^\x00-\x7f]/.test(code)) await writeFile(at, code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
await cp(`${root}src/console/templates`, `${outdir}/console/templates`, { recursive: true });
await cp(`${root}src/console/static`, `${outdir}/console/static`, { recursive: true });
const bytes = Object.values(result.metafile.outputs).reduce((a, o) => a + o.bytes, 0);
console.log(`${path.relative(root, outdir) || outdir}: ${Object.keys(result.metafile.outputs).length} files, ${(bytes / 1e6).toFixed(1)} MB, from ${Object.keys(result.metafile.inputs).length} modules`);
