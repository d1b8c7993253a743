// A reader for the plain YAML most function.yaml files are written in, about fifty times faster than
// the full YAML parser (a cold sync parses a thousand manifests). It accepts a strict subset and
// answers `undefined` for anything else — the caller then parses with the full parser, which also
// words every problem, so this reader never reports an error. The subset: one block mapping at
// column 0 of plain keys; values that are block mappings, block sequences (items: scalars, flow
// collections or compact mappings `- name: x`), one-line flow collections, plain scalars and
// one-line quoted scalars without escapes; full-line and trailing comments. Not in it: tabs, CR,
// control characters, document markers and directives, anchors, aliases, tags, block scalars,
// multi-line scalars, duplicate keys, and plain scalars whose YAML 1.2 core type is anything but a
// string, null, a boolean, a plain decimal int or a plain float. What it accepts it reads exactly as
// `yaml`'s parseDocument(…, {version: '1.2', schema: 'core'}) does (test: plain-yaml.test.ts).

import { MAX_EVENT_DEPTH } from './value-rules.ts';

export type PlainNode = PlainScalar | PlainMap | PlainSeq;

export interface PlainScalar {
  readonly kind: 'scalar';
  /** The value by YAML 1.2 core rules. */
  readonly value: string | number | boolean | null;
  /** True for a plain (unquoted) scalar. */
  readonly plain: boolean;
  /** The text as written (for a plain scalar: without its comment and trailing spaces). */
  readonly source: string;
}

export interface PlainMap {
  readonly kind: 'map';
  /** Keys in the order written, each with the 1-based line of the key. */
  readonly entries: ReadonlyMap<string, { readonly line: number; readonly value: PlainNode }>;
}

export interface PlainSeq {
  readonly kind: 'seq';
  readonly items: readonly PlainNode[];
}

interface Line {
  readonly no: number;
  readonly indent: number;
  readonly text: string;
}

/** Thrown inside the reader when the text leaves the subset; never escapes it. */
class NotPlain extends Error {}

// Tabs, CR, C0/C1 controls, DEL, BOM and non-characters: the full parser decides about them.
const UNSUPPORTED_CHARS = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ufeff\ufffe\uffff]/;
const KEY = /^([A-Za-z_][A-Za-z0-9_-]*):(?: +(.*))?$/;
const NON_STRING_KEY = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
// YAML 1.2 core schema tags (yaml 2.x dist/schema/core), in their resolution order.
const CORE_NULL = /^(?:~|[Nn]ull|NULL)?$/;
const CORE_BOOL = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const CORE_TRUE = /^(?:[Tt]rue|TRUE)$/;
const CORE_INT_OCT = /^0o[0-7]+$/;
const CORE_INT = /^[-+]?[0-9]+$/;
const CORE_INT_HEX = /^0x[0-9a-fA-F]+$/;
const CORE_FLOAT_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const CORE_FLOAT_EXP = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const CORE_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;
/** Ints read the same by parseInt and Number, without sign or leading-zero subtleties. */
const SIMPLE_INT = /^-?(?:0|[1-9][0-9]{0,14})$/;
/** Characters a plain scalar may not start with (YAML 1.2 c-indicator, less `-`, which is checked apart). */
const PLAIN_START_INDICATOR = /^[?:,[\]{}#&*!|>'"%@`]/;

/** The document as a node tree, or undefined when the text is not in the plain subset. */
export function readPlainYaml(text: string): PlainMap | undefined {
  if (UNSUPPORTED_CHARS.test(text)) return undefined;
  const lines: Line[] = [];
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const l = raw[i] ?? '';
    let indent = 0;
    while (l.charCodeAt(indent) === 32) indent++;
    if (indent === l.length || l.charCodeAt(indent) === 35 /* # */) continue;
    lines.push({ no: i + 1, indent, text: l.slice(indent).trimEnd() });
  }
  if (lines.length === 0 || lines[0]?.indent !== 0) return undefined;
  try {
    const reader = new Reader(lines);
    const root = reader.map(0);
    return reader.done() ? root : undefined;
  } catch (err) {
    if (err instanceof NotPlain) return undefined;
    throw err;
  }
}

/** The node tree as plain JS values (mappings as objects, sequences as arrays). */
export function plainToJS(node: PlainNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') return node.items.map(plainToJS);
  const out: Record<string, unknown> = {};
  for (const [k, e] of node.entries) out[k] = plainToJS(e.value);
  return out;
}

class Reader {
  private at = 0;

  constructor(private readonly lines: Line[]) {}

  done(): boolean {
    return this.at === this.lines.length;
  }

  /** A block mapping whose keys sit at column `indent`. */
  map(indent: number): PlainMap {
    const entries = new Map<string, { line: number; value: PlainNode }>();
    for (let line = this.lines[this.at]; line && line.indent === indent; line = this.lines[this.at]) {
      const m = KEY.exec(line.text);
      const key = m?.[1];
      if (!m || key === undefined || NON_STRING_KEY.test(key) || key === '__proto__' || entries.has(key)) throw new NotPlain();
      this.at++;
      const rest = m[2] ?? '';
      entries.set(key, { line: line.no, value: isEmpty(rest) ? this.nested(indent) : this.inline(rest, indent) });
    }
    return { kind: 'map', entries };
  }

  /** What follows `key:` with nothing after it: a deeper block, a sequence at the key's column, or null. */
  private nested(indent: number): PlainNode {
    const next = this.lines[this.at];
    if (next && next.indent > indent) return isSeqItem(next.text) ? this.seq(next.indent) : this.map(next.indent);
    if (next && next.indent === indent && isSeqItem(next.text)) return this.seq(indent);
    return NULL;
  }

  /** A block sequence whose dashes sit at column `indent`. */
  private seq(indent: number): PlainSeq {
    const items: PlainNode[] = [];
    for (let line = this.lines[this.at]; line && line.indent === indent && isSeqItem(line.text); line = this.lines[this.at]) {
      let offset = 1;
      while (line.text.charCodeAt(offset) === 32) offset++;
      const item = line.text.slice(offset);
      if (isEmpty(item) || isSeqItem(item)) throw new NotPlain();
      if (KEY.test(item)) {
        // A compact mapping: its first key on the dash's line, the others at the same column below.
        this.lines[this.at] = { no: line.no, indent: indent + offset, text: item };
        items.push(this.map(indent + offset));
        continue;
      }
      this.at++;
      items.push(this.inline(item, indent));
    }
    return { kind: 'seq', items };
  }

  /** A value on its key's (or dash's) line; nothing may continue it on deeper lines. */
  private inline(text: string, indent: number): PlainNode {
    const next = this.lines[this.at];
    if (next && next.indent > indent) throw new NotPlain();
    return inlineValue(text);
  }
}

const NULL: PlainScalar = { kind: 'scalar', value: null, plain: true, source: '' };

function isSeqItem(text: string): boolean {
  return text === '-' || text.startsWith('- ');
}

function isEmpty(rest: string): boolean {
  return rest === '' || rest.startsWith('#');
}

/** After a value: nothing, or spaces and a comment. */
function isTail(text: string, from: number): boolean {
  return from === text.length || /^ +(#.*)?$/.test(text.slice(from));
}

/** A value written on its key's (or dash's) line: a quoted or plain scalar, or a flow collection. */
function inlineValue(text: string): PlainNode {
  const first = text[0];
  if (first === '[' || first === '{') {
    const flow = new FlowReader(text);
    const node = flow.value();
    if (!isTail(text, flow.offset)) throw new NotPlain();
    return node;
  }
  if (first === '"' || first === "'") {
    const q = quoted(text, 0);
    if (!isTail(text, q.end)) throw new NotPlain();
    return q.node;
  }
  const comment = text.indexOf(' #');
  return blockPlain((comment < 0 ? text : text.slice(0, comment)).trimEnd());
}

function quoted(text: string, start: number): { node: PlainScalar; end: number } {
  const q = text[start] ?? '"';
  let i = start + 1;
  let value = '';
  for (;;) {
    const close = text.indexOf(q, i);
    if (close < 0) throw new NotPlain();
    value += text.slice(i, close);
    i = close + 1;
    if (q === "'" && text[i] === "'") {
      value += "'";
      i++;
      continue;
    }
    break;
  }
  if (q === '"' && value.includes('\\')) throw new NotPlain();
  return { node: { kind: 'scalar', value, plain: false, source: value }, end: i };
}

/** A plain scalar in block context (the whole rest of the line, comment already dropped). */
function blockPlain(text: string): PlainScalar {
  if (PLAIN_START_INDICATOR.test(text) || (text[0] === '-' && (text.length === 1 || text[1] === ' '))) throw new NotPlain();
  if (text.includes(': ') || text.endsWith(':')) throw new NotPlain();
  return { kind: 'scalar', value: coreValue(text), plain: true, source: text };
}

/** A plain scalar's YAML 1.2 core value; NotPlain for the forms this reader leaves to the full parser. */
function coreValue(text: string): string | number | boolean | null {
  if (CORE_NULL.test(text)) return null;
  if (CORE_BOOL.test(text)) return CORE_TRUE.test(text);
  if (CORE_INT_OCT.test(text) || CORE_INT_HEX.test(text) || CORE_FLOAT_NAN.test(text)) throw new NotPlain();
  if (CORE_INT.test(text)) {
    if (!SIMPLE_INT.test(text) || text === '-0') throw new NotPlain();
    return Number(text);
  }
  if (CORE_FLOAT_EXP.test(text) || CORE_FLOAT.test(text)) return parseFloat(text);
  return text;
}

/** One-line flow collections: `[a, "b", [1, 2]]`, `{kind: tick, input: [1, 2]}`. */
class FlowReader {
  private i = 0;
  /** Open collections around the reader; deeper than MAX_EVENT_DEPTH is left to the full parser (and refused there). */
  private depth = 0;

  constructor(private readonly text: string) {}

  /** Where reading stopped. */
  get offset(): number {
    return this.i;
  }

  value(): PlainNode {
    this.spaces();
    const c = this.text[this.i];
    if (c === '[') return this.seq();
    if (c === '{') return this.map();
    if (c === '"' || c === "'") {
      const q = quoted(this.text, this.i);
      this.i = q.end;
      return q.node;
    }
    return this.plain();
  }

  private enter(): void {
    this.depth++;
    if (this.depth > MAX_EVENT_DEPTH) throw new NotPlain();
  }

  private seq(): PlainSeq {
    this.enter();
    this.i++;
    const items: PlainNode[] = [];
    this.spaces();
    if (this.text[this.i] === ']') {
      this.i++;
      this.depth--;
      return { kind: 'seq', items };
    }
    for (;;) {
      items.push(this.value());
      this.spaces();
      const c = this.text[this.i++];
      if (c === ']') {
        this.depth--;
        return { kind: 'seq', items };
      }
      if (c !== ',') throw new NotPlain();
      this.spaces();
      if (this.text[this.i] === ']') throw new NotPlain(); // a trailing comma: left to the full parser
    }
  }

  private map(): PlainMap {
    this.enter();
    this.i++;
    const entries = new Map<string, { line: number; value: PlainNode }>();
    this.spaces();
    if (this.text[this.i] === '}') {
      this.i++;
      this.depth--;
      return { kind: 'map', entries };
    }
    for (;;) {
      this.spaces();
      const m = /^([A-Za-z_][A-Za-z0-9_-]*): /.exec(this.text.slice(this.i));
      const key = m?.[1];
      if (!m || key === undefined || NON_STRING_KEY.test(key) || key === '__proto__' || entries.has(key)) throw new NotPlain();
      this.i += m[0].length;
      entries.set(key, { line: 0, value: this.value() });
      this.spaces();
      const c = this.text[this.i++];
      if (c === '}') {
        this.depth--;
        return { kind: 'map', entries };
      }
      if (c !== ',') throw new NotPlain();
    }
  }

  private plain(): PlainScalar {
    const start = this.i;
    while (this.i < this.text.length) {
      const c = this.text[this.i];
      if (c === ',' || c === ']' || c === '}' || c === '[' || c === '{') break;
      if (c === ':' && (this.text[this.i + 1] === ' ' || this.i + 1 === this.text.length)) throw new NotPlain();
      this.i++;
    }
    const text = this.text.slice(start, this.i).trimEnd();
    if (text === '' || PLAIN_START_INDICATOR.test(text) || (text[0] === '-' && (text.length === 1 || text[1] === ' '))) throw new NotPlain();
    if (text.includes(' #') || text.includes(':')) throw new NotPlain();
    return { kind: 'scalar', value: coreValue(text), plain: true, source: text };
  }

  private spaces(): void {
    while (this.text.charCodeAt(this.i) === 32) this.i++;
  }
}
