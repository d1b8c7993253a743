// Line numbers for problems found after parsing (include paths, escaping symlinks), so that they are
// reported like schema problems: `function.yaml:<line>: include[0]: ...`.
import { LineCounter, parseDocument } from 'yaml';

/** 1-based line of the value at `keyPath` in a YAML text; 0 when it cannot be found. */
export function lineOfKey(text: string, keyPath: readonly (string | number)[]): number {
  try {
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { lineCounter, keepSourceTokens: false });
    const node: unknown = doc.getIn(keyPath, true);
    const range = (node as { range?: [number, number, number] } | undefined)?.range;
    return range ? lineCounter.linePos(range[0]).line : 0;
  } catch {
    return 0;
  }
}
