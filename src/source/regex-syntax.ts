// The syntax linear-regex.ts takes: the subset of JavaScript regular expressions the `ignore` library
// writes for gitignore patterns, parsed into a tree (literals, classes, groups, alternation, `* + ?`,
// anchors, a quantifier-free lookahead). Anything else is an UnsupportedRegexError, never a guess.
// Case-insensitive matching follows the spec's Canonicalize for non-unicode expressions.
export type CharTest = (c: string) => boolean;

export type Node =
  | { readonly kind: 'char'; readonly test: CharTest }
  | { readonly kind: 'start' | 'end' }
  | { readonly kind: 'ahead'; readonly body: Node }
  | { readonly kind: 'seq'; readonly items: readonly Node[] }
  | { readonly kind: 'alt'; readonly options: readonly Node[] }
  | { readonly kind: 'repeat'; readonly body: Node; readonly min: 0 | 1; readonly many: boolean };

/** A pattern this matcher does not take; say which and why. */
export class UnsupportedRegexError extends Error {}

function canonicalize(c: string): string {
  const u = c.toUpperCase();
  if (u.length !== 1) return c;
  if (c.charCodeAt(0) >= 128 && u.charCodeAt(0) < 128) return c;
  return u;
}

const LINE_TERMINATORS = new Set(['\n', '\r', '\u2028', '\u2029']);
const isDigit: CharTest = (c) => c >= '0' && c <= '9';
const isWord: CharTest = (c) => isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isSpace: CharTest = (c) => /^\s$/.test(c);
const CLASS_ESCAPES: Record<string, CharTest> = {
  d: isDigit,
  D: (c) => !isDigit(c),
  w: isWord,
  W: (c) => !isWord(c),
  s: isSpace,
  S: (c) => !isSpace(c),
};
const CONTROL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', v: '\v', f: '\f' };

class Parser {
  private at = 0;
  constructor(
    private readonly src: string,
    private readonly ignoreCase: boolean,
  ) {}

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.src.length) throw this.unsupported(`unexpected "${this.src[this.at]}"`);
    return node;
  }

  private unsupported(what: string): UnsupportedRegexError {
    return new UnsupportedRegexError(`${what} at ${this.at} of /${this.src}/`);
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.src[this.at] === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.src.length && this.src[this.at] !== '|' && this.src[this.at] !== ')') items.push(this.quantified());
    return { kind: 'seq', items };
  }

  private quantified(): Node {
    const atom = this.atom();
    const q = this.src[this.at];
    if (q !== '*' && q !== '+' && q !== '?') {
      if (q === '{') throw this.unsupported('a counted quantifier');
      return atom;
    }
    if (atom.kind === 'start' || atom.kind === 'end' || atom.kind === 'ahead') throw this.unsupported('a quantified assertion');
    this.at++;
    if (this.src[this.at] === '?') this.at++; // lazy: the same answer for test()
    return { kind: 'repeat', body: atom, min: q === '+' ? 1 : 0, many: q !== '?' };
  }

  private atom(): Node {
    const c = this.src[this.at++]!;
    switch (c) {
      case '^':
        return { kind: 'start' };
      case '$':
        return { kind: 'end' };
      case '.':
        return { kind: 'char', test: (x) => !LINE_TERMINATORS.has(x) };
      case '[':
        return { kind: 'char', test: this.charClass() };
      case '(': {
        let lookahead = false;
        if (this.src.startsWith('?:', this.at)) this.at += 2;
        else if (this.src.startsWith('?=', this.at)) {
          this.at += 2;
          lookahead = true;
        } else throw this.unsupported('a capturing group or another group kind');
        const body = this.alternation();
        if (this.src[this.at] !== ')') throw this.unsupported('an unclosed group');
        this.at++;
        if (!lookahead) return body;
        if (hasRepeat(body)) throw this.unsupported('a lookahead with a quantifier');
        return { kind: 'ahead', body };
      }
      case '\\':
        return { kind: 'char', test: this.escape(false) };
      case ')':
      case '*':
      case '+':
      case '?':
      case '{':
        throw this.unsupported(`"${c}" out of place`);
      default:
        return { kind: 'char', test: this.literal(c) };
    }
  }

  private literal(c: string): CharTest {
    if (!this.ignoreCase) return (x) => x === c;
    // ASCII only ever folds to ASCII (Canonicalize keeps non-ASCII from mapping into it): two compares.
    if (c.charCodeAt(0) < 128) {
      const lower = c.toLowerCase();
      const upper = c.toUpperCase();
      return lower === upper ? (x) => x === c : (x) => x === lower || x === upper;
    }
    const k = canonicalize(c);
    return (x) => x === c || canonicalize(x) === k;
  }

  /** After a backslash: a class escape, a control escape or an identity escape. */
  private escape(inClass: boolean): CharTest {
    const c = this.src[this.at++];
    if (c === undefined) throw this.unsupported('a trailing backslash');
    const cls = CLASS_ESCAPES[c];
    if (cls) return cls;
    const control = CONTROL_ESCAPES[c];
    if (control) return this.literal(control);
    if ((/[bBcxuk0-9pP]/.test(c) && !(inClass && c === 'b')) || (inClass && /[cxuk0-9pP]/.test(c))) throw this.unsupported(`the escape \\${c}`);
    if (inClass && c === 'b') return this.literal('\b');
    return this.literal(c);
  }

  private charClass(): CharTest {
    const negated = this.src[this.at] === '^';
    if (negated) this.at++;
    const members: Array<CharTest | { readonly from: string; readonly to: string }> = [];
    const single = (): { test: CharTest; char?: string } => {
      const c = this.src[this.at++];
      if (c === undefined) throw this.unsupported('an unclosed class');
      if (c !== '\\') return { test: (x) => x === c, char: c };
      const next = this.src[this.at];
      const test = this.escape(true);
      const char = next !== undefined && !CLASS_ESCAPES[next] ? (CONTROL_ESCAPES[next] ?? (next === 'b' ? '\b' : next)) : undefined;
      return char === undefined ? { test } : { test, char };
    };
    while (this.src[this.at] !== ']') {
      const first = single();
      if (this.src[this.at] === '-' && this.src[this.at + 1] !== ']' && this.src[this.at + 1] !== undefined) {
        this.at++;
        const last = single();
        if (first.char === undefined || last.char === undefined) throw this.unsupported('a range with a class escape');
        if (first.char > last.char) throw this.unsupported('a range out of order');
        members.push({ from: first.char, to: last.char });
      } else members.push(first.char === undefined ? first.test : first.char.length === 1 ? { from: first.char, to: first.char } : first.test);
    }
    this.at++;
    const inClass = (x: string): boolean =>
      members.some((m) => (typeof m === 'function' ? m(x) : x >= m.from && x <= m.to));
    const ignoreCase = this.ignoreCase;
    const test: CharTest = ignoreCase
      ? (x) => {
          if (inClass(x)) return true;
          if (x.charCodeAt(0) < 128) {
            const other = x === x.toLowerCase() ? x.toUpperCase() : x.toLowerCase();
            return other !== x && inClass(other);
          }
          return inClass(canonicalize(x)) || inClass(x.toLowerCase()) || inClass(canonicalize(x).toLowerCase());
        }
      : inClass;
    return negated ? (x) => !test(x) : test;
  }
}

function hasRepeat(n: Node): boolean {
  switch (n.kind) {
    case 'repeat':
      return true;
    case 'seq':
      return n.items.some(hasRepeat);
    case 'alt':
      return n.options.some(hasRepeat);
    case 'ahead':
      return hasRepeat(n.body);
    default:
      return false;
  }
}


/** Parses `source`; throws UnsupportedRegexError for syntax outside the subset. */
export function parseRegex(source: string, ignoreCase: boolean): Node {
  return new Parser(source, ignoreCase).parse();
}
