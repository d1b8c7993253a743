// The Node version check bin/sless.js runs before it loads anything else: the bundle and tsx need
// Node >= the `engines` range of package.json (the one place that names it), and on an older Node they
// fail with a screen of minified code. Plain JavaScript with no imports, so any Node parses it.

/** `X.Y.Z` -> [X, Y, Z]; missing parts are 0. */
function parts(version) {
  return String(version)
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0)
    .concat([0, 0, 0])
    .slice(0, 3);
}

/**
 * Why `found` cannot run sless, as one line, or undefined when it can. `range` is package.json's
 * `engines.node`, of the form `>=X.Y.Z` (the only form it uses).
 */
export function nodeVersionProblem(found, range) {
  const m = /^\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*$/.exec(String(range));
  if (!m) return undefined; // a form this check does not know: let Node try
  const need = parts(m[1]);
  const have = parts(found);
  for (let i = 0; i < 3; i++) {
    if (have[i] > need[i]) return undefined;
    if (have[i] < need[i]) {
      return `sless needs Node.js >= ${m[1]} (package.json engines); this is Node.js ${String(found).replace(/^v/, '')} (node --version). Install Node.js ${need[0]}.${need[1]} or newer.`;
    }
  }
  return undefined;
}
