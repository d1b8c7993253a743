#!/usr/bin/env node
// Runs the compiled CLI when present (container image), else the TypeScript sources through tsx
// so a fresh clone needs no build step for `npm start`. First the Node version: on an older Node the
// bundle and tsx fail with a screen of minified code, so nothing else is imported before the check.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { nodeVersionProblem } from './node-version.js';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const problem = nodeVersionProblem(process.versions.node, engines?.node);
if (problem) {
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}

const compiled = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (existsSync(compiled)) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
