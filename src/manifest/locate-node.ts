// Maps a value path (['schedules', 1, 'cron']) back to where it is written in the YAML source, so
// every problem can name a line. A path that leads nowhere (a missing key) resolves to the deepest
// node that exists: a missing `cron` is reported on the schedule it belongs to.
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

export function locateNode(
  doc: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
): SourcePosition | undefined {
  // A key's own line is where a reader looks for it (for `env:` followed by a block, the value
  // starts on the next line), so a map step remembers the key node rather than the value.
  let anchor: Node | undefined = isNodeWithRange(doc.contents) ? doc.contents : undefined;
  let current: unknown = doc.contents;
  for (const step of path) {
    if (isMap(current)) {
      const pair = current.items.find((p) => isScalar(p.key) && String(p.key.value) === String(step));
      if (pair === undefined) break;
      if (isNodeWithRange(pair.key)) anchor = pair.key;
      current = pair.value;
    } else if (isSeq(current) && typeof step === 'number') {
      const item: unknown = current.items[step];
      if (!isNodeWithRange(item)) break;
      anchor = item;
      current = item;
    } else {
      break;
    }
  }
  return anchor?.range ? positionOf(lineCounter, anchor.range[0]) : undefined;
}

export function positionOf(lineCounter: LineCounter, offset: number): SourcePosition {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

function isNodeWithRange(value: unknown): value is Node {
  return (
    (isScalar(value) || isMap(value) || isSeq(value)) && value.range !== undefined && value.range !== null
  );
}

/** `['schedules', 1, 'cron']` -> `schedules[1].cron`. */
export function formatKeyPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, step) => {
    if (typeof step === 'number') return `${out}[${step}]`;
    return out === '' ? String(step) : `${out}.${String(step)}`;
  }, '');
}
