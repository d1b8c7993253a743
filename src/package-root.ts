// The folder of this package (package.json, runtimes/) and of its sources or compiled code, for code
// that reads files shipped beside it (console templates, runtime servers). This module lies one level
// below the package root both as a source (src/package-root.ts, run through tsx) and compiled (the
// bundle puts every chunk in dist/ itself: scripts/bundle.mjs), so callers derive their paths from
// here rather than from their own location, which the bundle changes.
import { fileURLToPath } from 'node:url';

/** src/ or dist/: where console/templates and console/static lie. */
export const codeDir: string = fileURLToPath(new URL('./', import.meta.url));

/** The package root: package.json, runtimes/. */
export const packageRoot: string = fileURLToPath(new URL('../', import.meta.url));
