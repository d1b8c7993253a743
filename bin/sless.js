#!/usr/bin/env node
// Runs the compiled CLI when present (container image), else the TypeScript sources through tsx
// so a fresh clone needs no build step for `npm start`.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (existsSync(compiled)) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
