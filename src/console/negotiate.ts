// What a GET under /funcs answers, from the Accept header (pure): a browser gets HTML, a script that
// asks for JSON gets JSON, and anything else (curl's `*/*`, no header) gets plain text, the old
// console's output that scripts read.
export type Answer = 'html' | 'json' | 'text';

const CANDIDATES: ReadonlyArray<readonly [Answer, string]> = [
  ['text', 'text/plain'],
  ['html', 'text/html'],
  ['json', 'application/json'],
];

interface Range {
  readonly type: string;
  readonly q: number;
  readonly position: number;
}

function parseAccept(header: string): Range[] {
  return header
    .split(',')
    .map((part, position) => {
      const [type = '', ...params] = part.trim().toLowerCase().split(';');
      const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const q = qParam ? Number(qParam.slice(2)) : 1;
      return { type: type.trim(), q: Number.isFinite(q) ? q : 0, position };
    })
    .filter((r) => r.type.includes('/'));
}

/** How well `range` matches `mime`: 2 exact, 1 `type/*`, 0 `*\/*`, -1 not at all. */
function specificity(range: string, mime: string): number {
  if (range === mime) return 2;
  const [type] = mime.split('/');
  if (range === `${type}/*`) return 1;
  if (range === '*/*') return 0;
  return -1;
}

export function negotiate(accept: string | undefined): Answer {
  if (!accept) return 'text';
  const ranges = parseAccept(accept);
  let best: { answer: Answer; q: number; specificity: number; position: number } | undefined;
  for (const [answer, mime] of CANDIDATES) {
    // The most specific range that matches a candidate decides its quality (RFC 9110 §12.5.1).
    const match = ranges
      .map((r) => ({ r, s: specificity(r.type, mime) }))
      .filter((m) => m.s >= 0)
      .sort((a, b) => b.s - a.s)[0];
    if (!match || match.r.q <= 0) continue;
    const c = { answer, q: match.r.q, specificity: match.s, position: match.r.position };
    if (
      !best ||
      c.q > best.q ||
      (c.q === best.q && c.specificity > best.specificity) ||
      (c.q === best.q && c.specificity === best.specificity && c.specificity > 0 && c.position < best.position)
    ) {
      best = c;
    }
  }
  return best?.answer ?? 'text';
}
