// function.yaml text -> FunctionManifest with defaults, or the list of problems, each with file, line
// and key. Decisions a user can see:
// - Plain YAML 1.2 core only: aliases (`*x`) are refused outright (no alias bombs, no surprises),
//   `%YAML 1.1` does not bring back `yes`/`no` booleans, `<<` merges or timestamps, unknown tags and
//   non-scalar keys are errors, and so are duplicate keys and a second document.
// - `env` values that YAML reads as numbers or booleans (`PORT_HINT: 8080`, `DEBUG: true`) are kept
//   as the exact text written (`1.10` stays "1.10"), because every environment variable is a string
//   anyway; an empty value (`KEY:`) or a list/mapping is an error.
// A valid file in plain YAML (plain-yaml.ts: most are) is read by the fast reader; anything else, and
// every file with a problem, goes through the full parser, which words the problems with file:line.
import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
  type Alias,
  type Document,
} from 'yaml';
import type { z } from 'zod';
import { locateNode, positionOf, formatKeyPath } from './locate-node.ts';
import {
  checkFunctionName,
  DEFAULT_ENTRYPOINT,
  KNOWN_KEYS,
  manifestSchema,
  type RawManifest,
} from './manifest-schema.ts';
import { crossCheck } from './cross-check.ts';
import { compactScale } from './scale-spec.ts';
import { toQueueTrigger } from './queue-schema.ts';
import { rememberNameLine } from './name-lines.ts';
import { plainToJS, readPlainYaml } from './plain-yaml.ts';
import { lineOfExcessBrackets, MAX_EVENT_DEPTH, MAX_OPEN_BRACKETS } from './value-rules.ts';
import type { FunctionManifest, ManifestProblem } from './types.ts';
import type { ManifestCaps } from './defaults.ts';

export const MAX_MANIFEST_BYTES = 64 * 1024;

/** The caps (ManifestCaps) default to SCALE_LIMITS.defaultCap and MANIFEST_LIMITS. */
export interface ParseManifestOptions extends ManifestCaps {
  /** Path shown in problems (repo-relative or CLI-relative). */
  readonly file: string;
  /** Name of the directory holding the file: the default function name. */
  readonly dirName: string;
}

export interface ParsedManifest {
  readonly manifest?: FunctionManifest;
  readonly problems: ManifestProblem[];
  /**
   * The function's name as far as it can be told, even from a broken file: a valid `name:` when one
   * is readable, else `dirName`. Lets a broken function keep its identity (it must not look removed).
   */
  readonly name: string;
}

export function parseManifest(text: string, opts: ParseManifestOptions): ParsedManifest {
  const { file, dirName } = opts;
  const problem = (line: number, key: string, message: string, column?: number): ManifestProblem =>
    column === undefined ? { file, line, key, message } : { file, line, column, key, message };

  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_MANIFEST_BYTES) {
    const message = `file is ${bytes} bytes, over the ${MAX_MANIFEST_BYTES}-byte limit for function.yaml; move data into the function's code`;
    return { problems: [problem(0, '', message)], name: dirName };
  }
  // Nesting is bounded per value (MAX_EVENT_DEPTH); text far past it never reaches a parser, whose
  // recursion would spend the stack (a RangeError) and a second of CPU on it.
  const deepLine = lineOfExcessBrackets(text);
  if (deepLine !== undefined) {
    const message = `more than ${MAX_OPEN_BRACKETS} "[" or "{" open at once; a value may nest at most ${MAX_EVENT_DEPTH} levels of arrays and objects`;
    return { problems: [problem(deepLine, '', message)], name: dirName };
  }
  try {
    return parsePlainManifest(text, opts) ?? parseYamlManifest(text, opts);
  } catch (error) {
    // The last line of defence: whatever a hostile file does to a parser fails this file only.
    if (!(error instanceof RangeError)) throw error;
    return { problems: [problem(0, '', `the file cannot be read: ${error.message}; it nests too deeply`)], name: dirName };
  }
}

/**
 * The fast path: the manifest of a valid file written in plain YAML, or undefined when the file is
 * not plain or has any problem (parseYamlManifest then reads it and words the problems).
 */
export function parsePlainManifest(text: string, opts: ParseManifestOptions): ParsedManifest | undefined {
  const root = readPlainYaml(text);
  if (!root) return undefined;
  const input = plainToJS(root) as Record<string, unknown>;
  const env = root.entries.get('env')?.value;
  if (env?.kind === 'map' && typeof input['env'] === 'object') {
    const values = input['env'] as Record<string, unknown>;
    for (const [key, { value }] of env.entries) {
      if (value.kind === 'scalar' && (typeof value.value === 'number' || typeof value.value === 'boolean')) values[key] = value.source;
    }
  }
  const result = manifestSchema.safeParse(input, { error: userMessage });
  if (!result.success || crossCheck(input, opts).length > 0) return undefined;
  if (!root.entries.has('name') && checkFunctionName(opts.dirName) !== undefined) return undefined;
  const raw = result.data;
  const name = raw.name ?? opts.dirName;
  const manifest = toManifest(raw, name);
  const nameLine = raw.name === undefined ? undefined : root.entries.get('name')?.line;
  if (nameLine !== undefined) rememberNameLine(manifest, nameLine);
  return { manifest, problems: [], name };
}

/** The full YAML parser: any file, every problem with its line (the reference the fast path agrees with). */
export function parseYamlManifest(text: string, opts: ParseManifestOptions): ParsedManifest {
  const { file, dirName } = opts;
  const problem = (line: number, key: string, message: string, column?: number): ManifestProblem =>
    column === undefined ? { file, line, key, message } : { file, line, column, key, message };

  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    version: '1.2',
    schema: 'core',
    merge: false,
  });

  const syntax = [...doc.errors, ...doc.warnings].map((e) => {
    const at = positionOf(lineCounter, e.pos[0]);
    const token = /^("[^"\n]*"|'[^'\n]*'|[^:\s]+)/.exec(text.slice(e.pos[0]))?.[1] ?? '';
    return problem(at.line, '', yamlMessage(e.code, e.message, token), at.column);
  });
  // A name still readable beside a syntax error elsewhere keeps the function's identity; two `name:` keys tell none.
  const twoNames = doc.errors.some((e) => e.code === 'DUPLICATE_KEY');
  if (syntax.length > 0) return { problems: syntax, name: (twoNames ? undefined : readableName(doc)) ?? dirName };

  const shape = checkShape(doc, lineCounter, problem);
  if (shape.length > 0) return { problems: shape, name: readableName(doc) ?? dirName };

  coerceEnvScalars(doc);
  const input: unknown = doc.toJS({ maxAliasCount: 0 });
  const result = manifestSchema.safeParse(input, { error: userMessage });
  const cross = crossCheck(input, opts).map((c) => {
    const at = locateNode(doc, lineCounter, c.path);
    return problem(at?.line ?? 0, formatKeyPath(c.path), c.message, at?.column);
  });
  const hasName = isMap(doc.contents) && doc.contents.has('name');
  const dirNameProblem = hasName ? undefined : checkFunctionName(dirName);
  if (dirNameProblem !== undefined) {
    const message = `the directory name is used as the function name, but ${dirNameProblem}; add a valid name: or rename the directory`;
    cross.push(problem(0, 'name', message));
  }
  if (!result.success || cross.length > 0) {
    const problems = (result.success ? [] : result.error.issues)
      .flatMap((issue) => issueProblems(issue, doc, lineCounter, problem))
      .concat(cross)
      .sort((a, b) => a.line - b.line);
    return { problems, name: readableName(doc) ?? dirName };
  }

  const raw = result.data;
  const name = raw.name ?? dirName;
  const manifest = toManifest(raw, name);
  const nameAt = raw.name === undefined ? undefined : locateNode(doc, lineCounter, ['name']);
  if (nameAt !== undefined) rememberNameLine(manifest, nameAt.line);
  return { manifest, problems: [], name };
}

type MakeProblem = (line: number, key: string, message: string, column?: number) => ManifestProblem;

function yamlMessage(code: string, message: string, source: string): string {
  switch (code) {
    case 'DUPLICATE_KEY':
      return `duplicate key ${source}; each key may appear once in a mapping`;
    case 'MULTIPLE_DOCS':
      return 'the file holds more than one YAML document ("---"); a function.yaml holds exactly one';
    case 'RESOURCE_EXHAUSTION':
      return `YAML nested too deeply to read (${message.split(' at line')[0]}); a value may nest at most ${MAX_EVENT_DEPTH} levels`;
    case 'TAG_RESOLVE_FAILED':
      return `${message}; function.yaml takes plain YAML without custom tags`;
    default:
      return `YAML syntax: ${message}`;
  }
}

/** Structure the schema cannot see once the document became plain JS. */
function checkShape(doc: Document, lineCounter: LineCounter, problem: MakeProblem): ManifestProblem[] {
  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    return [problem(0, '', 'the file is empty; it needs at least "runtime:" (e.g. runtime: nodejs20)')];
  }
  if (!isMap(root)) {
    const at = root.range ? positionOf(lineCounter, root.range[0]).line : 0;
    const kind = isSeq(root) ? 'a list' : 'a single value';
    return [
      problem(
        at,
        '',
        `the file is ${kind}; it must be a mapping of keys such as "runtime:" and "memory_mb:"`,
      ),
    ];
  }
  const problems: ManifestProblem[] = [];
  const aliases: Alias[] = [];
  visit(doc, {
    Alias(_key, node) {
      aliases.push(node);
    },
    Pair(_key, pair) {
      if (pair.key !== null && !isScalar(pair.key)) {
        const range = isAlias(pair.key) || isMap(pair.key) || isSeq(pair.key) ? pair.key.range : undefined;
        const at = range ? positionOf(lineCounter, range[0]) : { line: 0, column: 0 };
        problems.push(problem(at.line, '', 'a key must be a plain name, not a list or mapping', at.column));
      }
    },
  });
  const [firstAlias] = aliases;
  if (firstAlias !== undefined) {
    // One problem, not one per alias: an alias bomb would otherwise flood the output.
    const at = firstAlias.range ? positionOf(lineCounter, firstAlias.range[0]) : { line: 0, column: 0 };
    const more = aliases.length > 1 ? ` (${aliases.length} aliases in the file)` : '';
    const message = `YAML aliases (*${firstAlias.source}) are not allowed in function.yaml${more}; write the value out`;
    problems.push(problem(at.line, '', message, at.column));
  }
  return problems.sort((a, b) => a.line - b.line);
}

/** See the header: scalars under `env` keep the text as written. */
function coerceEnvScalars(doc: Document): void {
  const env = doc.get('env', true);
  if (!isMap(env)) return;
  for (const pair of env.items) {
    const value = pair.value;
    if (isScalar(value) && (typeof value.value === 'number' || typeof value.value === 'boolean')) {
      value.value = value.source ?? String(value.value);
    }
  }
}

function readableName(doc: Document): string | undefined {
  const name = isMap(doc.contents) ? doc.get('name') : undefined;
  return typeof name === 'string' && checkFunctionName(name) === undefined ? name : undefined;
}

function issueProblems(
  issue: z.core.$ZodIssue,
  doc: Document,
  lineCounter: LineCounter,
  problem: MakeProblem,
): ManifestProblem[] {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    const allowed = KNOWN_KEYS[formatKeyPath(path.filter((step) => typeof step !== 'number'))];
    const hint = allowed === undefined ? '' : `; allowed here: ${allowed.join(', ')}`;
    return issue.keys.map((key) => {
      const at = locateNode(doc, lineCounter, [...path, key]);
      return problem(at?.line ?? 0, formatKeyPath([...path, key]), `unknown key "${key}"${hint}`, at?.column);
    });
  }
  const at = locateNode(doc, lineCounter, path);
  // A bad record key (`env: {bad-key: x}`) carries its reason one level down.
  const message = issue.code === 'invalid_key' ? (issue.issues[0]?.message ?? issue.message) : issue.message;
  return [problem(at?.line ?? 0, formatKeyPath(path), message, at?.column)];
}

/** zod's defaults speak to developers ("expected string, received undefined"); these speak to users. */
function userMessage(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code !== 'invalid_type') return undefined;
  if (issue.input === undefined) return 'is required';
  return `expected ${article(issue.expected)}, got ${describe(issue.input)}`;
}

function article(expected: string): string {
  const words: Record<string, string> = {
    string: 'a string',
    number: 'a number',
    int: 'a whole number',
    boolean: 'true or false',
    array: 'a list',
    object: 'a mapping',
    record: 'a mapping',
  };
  return words[expected] ?? expected;
}

function describe(input: unknown): string {
  if (input === null) return 'an empty value';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  if (typeof input === 'string') return `the string ${JSON.stringify(input)}`;
  return `${typeof input} ${String(input)}`;
}

function toManifest(raw: RawManifest, name: string): FunctionManifest {
  return {
    name,
    runtime: raw.runtime,
    entrypoint: raw.entrypoint ?? DEFAULT_ENTRYPOINT,
    memoryMb: raw.memory_mb,
    timeoutSec: raw.timeout_sec,
    env: raw.env,
    envFromSecrets: raw.env_from_secrets,
    include: raw.include,
    ignore: raw.ignore,
    http: { enabled: raw.http.enabled },
    ...(compactScale(raw.scale) === undefined ? {} : { scale: compactScale(raw.scale) }),
    schedules: raw.schedules.map((s) => ({
      name: s.name,
      cron: s.cron.trim(),
      ...(s.timezone === undefined ? {} : { timezone: s.timezone }),
      ...(s.event === undefined ? {} : { event: s.event }),
    })),
    jobs: raw.jobs.map((j) => ({
      name: j.name,
      runId: j.run_id,
      ...(j.event === undefined ? {} : { event: j.event }),
    })),
    ...(raw.queues.length === 0 ? {} : { queues: raw.queues.map(toQueueTrigger) }),
  };
}
