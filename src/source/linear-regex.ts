// A regular-expression matcher that runs in time linear in the input (issue 31 item 2): the `ignore`
// library turns gitignore patterns into JavaScript regular expressions, and V8's backtracking engine
// takes exponential time on some of them (`**/` repeated: 8 repeats 0.3 s, 12 more than 20 s against
// a 30-folder path; `*a*a*a*b` 5.8 s against one 250-character name). This compiles the syntax those
// expressions use to a Thompson NFA and simulates it one input position at a time (a Pike VM without
// captures): O(input × pattern) whatever the pattern. Only `test()` is offered (all the library calls).
// Supported: literals and escapes, `.`, classes (ranges, negation, \d \w \s), groups `(?:…)`,
// alternation, `* + ?` (lazy forms too: same answer for test()), `^` `$`, and a lookahead `(?=…)`
// whose body has no quantifier (the library's `(?=$|\/$)`). Anything else throws: the caller refuses
// the pattern instead of guessing. Case-insensitive matching follows the spec's Canonicalize for
// non-unicode expressions (regex-syntax.ts parses).
import { parseRegex, type CharTest, type Node } from './regex-syntax.ts';

export { UnsupportedRegexError } from './regex-syntax.ts';

// The NFA: instructions in an array, `next`/`alt` indexes into it.
type Inst =
  | { op: 'char'; test: CharTest; next: number }
  | { op: 'split'; next: number; alt: number }
  | { op: 'jump'; next: number }
  | { op: 'start' | 'end'; next: number }
  | { op: 'ahead'; body: Node; next: number }
  | { op: 'match' };

function compile(root: Node): Inst[] {
  const prog: Inst[] = [];
  const emit = (i: Inst): number => prog.push(i) - 1;
  // Index 0 is where every thread starts: a jump to the root's entry.
  const start = emit({ op: 'jump', next: -1 });
  // Emits `n` so that it continues at the instruction index `then()` returns once known.
  const gen = (n: Node): { entry: number; exits: Array<(to: number) => void> } => {
    switch (n.kind) {
      case 'char': {
        const i = emit({ op: 'char', test: n.test, next: -1 });
        return { entry: i, exits: [(to) => ((prog[i] as { next: number }).next = to)] };
      }
      case 'start':
      case 'end': {
        const i = emit({ op: n.kind, next: -1 });
        return { entry: i, exits: [(to) => ((prog[i] as { next: number }).next = to)] };
      }
      case 'ahead': {
        const i = emit({ op: 'ahead', body: n.body, next: -1 });
        return { entry: i, exits: [(to) => ((prog[i] as { next: number }).next = to)] };
      }
      case 'seq': {
        if (n.items.length === 0) {
          const i = emit({ op: 'jump', next: -1 });
          return { entry: i, exits: [(to) => ((prog[i] as { next: number }).next = to)] };
        }
        const parts = n.items.map(gen);
        for (let k = 0; k + 1 < parts.length; k++) for (const exit of parts[k]!.exits) exit(parts[k + 1]!.entry);
        return { entry: parts[0]!.entry, exits: parts[parts.length - 1]!.exits };
      }
      case 'alt': {
        const parts = n.options.map(gen);
        let entry = parts[parts.length - 1]!.entry;
        for (let k = parts.length - 2; k >= 0; k--) entry = emit({ op: 'split', next: parts[k]!.entry, alt: entry });
        return { entry, exits: parts.flatMap((p) => p.exits) };
      }
      case 'repeat': {
        const split = emit({ op: 'split', next: -1, alt: -1 });
        const body = gen(n.body);
        (prog[split] as { next: number }).next = body.entry;
        if (n.many) for (const exit of body.exits) exit(split);
        const leave = (to: number) => ((prog[split] as { alt: number }).alt = to);
        if (n.min === 0) return { entry: split, exits: n.many ? [leave] : [leave, ...body.exits] };
        // One or more: the body first, then the loop.
        const first = gen(n.body);
        for (const exit of first.exits) exit(split);
        return { entry: first.entry, exits: [leave] };
      }
    }
  };
  const { entry, exits } = gen(root);
  const match = emit({ op: 'match' });
  for (const exit of exits) exit(match);
  (prog[start] as { next: number }).next = entry;
  return prog;
}

/** Whether `body` (no quantifiers) matches `s` at `at`: a bounded walk, every alternative tried. */
function matchesAt(body: Node, s: string, at: number): boolean {
  // Continuation passing: `then` is what must match after `n`; no quantifier, so the walk is bounded.
  const m = (n: Node, i: number, then: (j: number) => boolean): boolean => {
    switch (n.kind) {
      case 'char':
        return i < s.length && n.test(s[i]!) && then(i + 1);
      case 'start':
        return i === 0 && then(i);
      case 'end':
        return i === s.length && then(i);
      case 'ahead':
        return matchesAt(n.body, s, i) && then(i);
      case 'seq': {
        const step = (k: number, j: number): boolean => (k === n.items.length ? then(j) : m(n.items[k]!, j, (next) => step(k + 1, next)));
        return step(0, i);
      }
      case 'alt':
        return n.options.some((o) => m(o, i, then));
      case 'repeat':
        return false;
    }
  };
  return m(body, at, () => true);
}

export interface LinearRegex {
  readonly source: string;
  test(input: string): boolean;
}

/** Compiles `source` (the syntax above; throws UnsupportedRegexError otherwise). */
export function linearRegex(source: string, ignoreCase: boolean): LinearRegex {
  const prog = compile(parseRegex(source, ignoreCase));
  const size = prog.length;
  // A program that can only start at position 0 (`^…`) needs no thread started anywhere else.
  const anchored = startsAnchored(prog);
  // Two thread lists (char instructions waiting for the next input character) and the closure stack,
  // reused across calls (test() is synchronous and never re-entered).
  const current = new Int32Array(size);
  const next = new Int32Array(size);
  const stack = new Int32Array(size * 2 + 2);
  const seen = new Uint32Array(size);
  let generation = 0;
  let added = 0;
  // Follows jumps, splits and assertions from `pc` at position `at` of `s`; true when `match` is reached.
  const add = (pc: number, s: string, at: number): boolean => {
    let top = 0;
    stack[top++] = pc;
    while (top > 0) {
      const k = stack[--top]!;
      if (seen[k] === generation) continue;
      seen[k] = generation;
      const inst = prog[k]!;
      switch (inst.op) {
        case 'match':
          return true;
        case 'jump':
          stack[top++] = inst.next;
          break;
        case 'split':
          stack[top++] = inst.alt;
          stack[top++] = inst.next;
          break;
        case 'start':
          if (at === 0) stack[top++] = inst.next;
          break;
        case 'end':
          if (at === s.length) stack[top++] = inst.next;
          break;
        case 'ahead':
          if (matchesAt(inst.body, s, at)) stack[top++] = inst.next;
          break;
        case 'char':
          next[added++] = k;
      }
    }
    return false;
  };
  return {
    source,
    test(s: string): boolean {
      let count = 0;
      for (let at = 0; at <= s.length; at++) {
        if (generation === 0xffffffff) {
          seen.fill(0);
          generation = 0;
        }
        generation++;
        added = 0;
        for (let t = 0; t < count; t++) if (add((prog[current[t]!] as { next: number }).next, s, at)) return true;
        // An unanchored search: a new thread starts at every position.
        if ((at === 0 || !anchored) && add(0, s, at)) return true;
        if (at === s.length || (added === 0 && anchored)) return false;
        const c = s[at]!;
        count = 0;
        for (let t = 0; t < added; t++) {
          const k = next[t]!;
          if ((prog[k] as { test: CharTest }).test(c)) current[count++] = k;
        }
      }
      return false;
    },
  };
}

/** True when every way from the program's start passes a `^` before consuming anything. */
function startsAnchored(prog: readonly Inst[]): boolean {
  const seen = new Set<number>();
  const walk = (k: number): boolean => {
    if (seen.has(k)) return true;
    seen.add(k);
    const inst = prog[k]!;
    switch (inst.op) {
      case 'start':
        return true;
      case 'jump':
      case 'ahead':
        return walk(inst.next);
      case 'split':
        return walk(inst.next) && walk(inst.alt);
      default:
        return false;
    }
  };
  return walk(0);
}
