// What a function process printed before it failed, cut down to what a user acts on (pure): the
// error line and the frames in the function's own files, at the path the user knows (the folder in
// the repository, not the prepared build folder `sless dev` runs it from). The runtime servers
// print the whole stack to the log; this is the function's message and its `failed:` line.

/** How many lines of the cut-down output a message carries (a Python SyntaxError needs 5). */
const KEPT_LINES = 6;

export interface OutputPlace {
  /** The prepared folder the process ran the function from (SLESS_FUNCTION_DIR). */
  readonly appDir: string;
  /** The function's folder as the user knows it (repository-relative), or '' (an uploaded function). */
  readonly shownAs: string;
}

/**
 * The last lines of a runtime's output that say why it failed, with paths as the user knows them
 * (without `place`, the last lines as they are).
 */
export function startFailureText(output: string, place?: OutputPlace): string {
  const lines = place ? withoutForeignFrames(output.split('\n'), place.appDir) : output.split('\n');
  return lines
    .filter((l) => l.trim() !== '')
    .slice(-KEPT_LINES)
    .map((l) => (place ? shownPaths(l, place) : l))
    .join('\n');
}

/**
 * Drops the stack frames that are not in the function's own files: Node's `    at ...` lines and
 * Python's `File "...", line N` entries with the source lines below them (the runtime server's,
 * the loader's, importlib's), and Python's "Traceback" header.
 */
function withoutForeignFrames(lines: readonly string[], appDir: string): string[] {
  const own = (text: string) => text.includes(`${appDir}/`) || text.includes(`file://${encodeURI(appDir)}/`);
  const out: string[] = [];
  let skipBelow: number | undefined;
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    if (skipBelow !== undefined && indent > skipBelow && line.trim() !== '') continue;
    skipBelow = undefined;
    if (/^\s+at /.test(line) && !own(line)) continue;
    if (/^Traceback \(most recent call last\):$/.test(line.trim())) continue;
    const pyFrame = /^\s*File "([^"]+)", line \d+/.exec(line);
    if (pyFrame && !own(pyFrame[1] as string)) {
      skipBelow = indent;
      continue;
    }
    out.push(line);
  }
  return out;
}

/** The prepared folder's paths (plain or file:// URL) as the user's folder. */
function shownPaths(line: string, place: OutputPlace): string {
  const inside = place.shownAs === '' ? '' : `${place.shownAs}/`;
  const url = `file://${encodeURI(place.appDir)}`;
  return line
    .split(`${url}/`)
    .join(inside)
    .split(`${place.appDir}/`)
    .join(inside)
    .split(place.appDir)
    .join(place.shownAs || '.');
}
