// The fast reader for plain YAML must read every text it accepts exactly as the full parser does, and
// leave everything else (and every problem) to it. Checked differentially: handwritten tricky
// scalars in every position, structural variants, the repository's manifests, and a seeded fuzz.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseDocument } from 'yaml';
import { nameLineOf } from './name-lines.ts';
import { parsePlainManifest, parseYamlManifest } from './parse-manifest.ts';
import { plainToJS, readPlainYaml } from './plain-yaml.ts';

const YAML_OPTIONS = { prettyErrors: false, uniqueKeys: true, version: '1.2', schema: 'core', merge: false } as const;
const OPTS = { file: 'functions/hello/function.yaml', dirName: 'hello' };

/** The reader and the full parser agree on `text` (or the reader declines it). Returns whether it accepted. */
function agrees(text: string): boolean {
  const plain = readPlainYaml(text);
  if (!plain) return false;
  const doc = parseDocument(text, YAML_OPTIONS);
  assert.deepEqual([...doc.errors, ...doc.warnings].map((e) => e.message), [], `the reader accepted what the full parser refuses:\n${text}`);
  assert.deepStrictEqual(plainToJS(plain), doc.toJS({ maxAliasCount: 0 }), `read differently:\n${text}`);
  const fast = parsePlainManifest(text, OPTS);
  if (fast) {
    const full = parseYamlManifest(text, OPTS);
    assert.deepStrictEqual(fast, full, `parsed differently:\n${text}`);
    assert.equal(nameLineOf(fast.manifest!), nameLineOf(full.manifest!), `name line differs:\n${text}`);
  }
  return true;
}

const SCALARS = [
  'hello', 'Hello World', '  spaced  ', 'a#b', 'a #b', 'a # b', '"quoted"', "'single'", "'it''s'", '"a # b"', "'a # b'", '"a\\nb"', '"a\\"b"',
  '""', "''", '~', 'null', 'Null', 'NULL', 'nULL', 'true', 'True', 'TRUE', 'tRUE', 'false', 'yes', 'no', 'on', 'off', 'y', 'n',
  '0', '7', '-7', '+7', '-0', '007', '0o17', '0x1F', '0X1F', '1_000', '12345678901234567890', '128', '1.5', '-1.5', '.5', '1.', '+.5',
  '1e3', '1E-3', '.inf', '-.Inf', '.nan', '.NaN', '1.10', '0 3 * * *', '* * * * *', '*/5 * * * *', '0 0 * * 1,3', 'a: b', 'a:b', 'a:',
  'http://x:80/y', '- x', '-x', '-', '--', '? x', '?x', ':x', '[a, b]', '[a,b]', '[]', '{}', '{a: 1}', '{a: [1, {b: c}]}', '[a, [b, c]]',
  '[a, b,]', '[a: b]', '{a:1}', '{a}', '[1, 2, 3]', '[-1, .5, ~]', '["x", \'y\']', '&a x', '*a', '!tag x', '!!str 1', '|', '>', '@x',
  '`x`', '%x', 'Привет', 'a "b" c', "it's", 'a\'b\' c', 'x #', 'x#', '#x', '[a] # c', '[a]x', '"a" x', '"a"  # c', '{a: b} #c', 'a\tb',
];

const POSITIONS: Array<(v: string) => string> = [
  (v) => `runtime: nodejs20\nenv:\n  K: ${v}\n`,
  (v) => `runtime: nodejs20\nmemory_mb: ${v}\n`,
  (v) => `name: ${v}\nruntime: nodejs20\n`,
  (v) => `runtime: ${v}\n`,
  (v) => `runtime: nodejs20\nentrypoint: ${v}\n`,
  (v) => `runtime: nodejs20\nschedules:\n  - name: a\n    cron: ${v}\n    event: ${v}\n`,
  (v) => `runtime: nodejs20\njobs:\n- name: j\n  run_id: ${v}\n  event: {x: ${v}}\n`,
  (v) => `runtime: nodejs20\ninclude: [${v}]\n`,
  (v) => `runtime: nodejs20\nignore:\n  - ${v}\n  - b\n`,
  (v) => `runtime: nodejs20\n${v}: x\n`,
  (v) => `runtime: nodejs20\nenv:\n  ${v}: x\n`,
  (v) => `runtime: nodejs20\njobs:\n  - name: j\n    run_id: 1\n    event: [${v}, ${v}]\n`,
  (v) => `runtime: nodejs20\nhttp:\n  enabled: ${v}\n`,
];

const STRUCTURES = [
  'runtime: nodejs20',
  'runtime: nodejs20\n',
  '\n\n# c\nruntime: nodejs20\n\n',
  'runtime: nodejs20   \nmemory_mb: 256  # more\n',
  '---\nruntime: nodejs20\n',
  'runtime: nodejs20\n...\n',
  'runtime: nodejs20\n---\nruntime: go1.23\n',
  '%YAML 1.2\n---\nruntime: nodejs20\n',
  '  runtime: nodejs20\n  memory_mb: 256\n',
  'runtime: nodejs20\r\nmemory_mb: 256\r\n',
  'runtime: nodejs20\n\tmemory_mb: 256\n',
  'runtime:\tnodejs20\n',
  'runtime: nodejs20\nruntime: go1.23\n',
  'runtime: nodejs20\nenv:\n',
  'runtime: nodejs20\nenv:\n# nothing\nmemory_mb: 256\n',
  'runtime: nodejs20\nenv:\n   A: x\n   B: "y"\n',
  'runtime: nodejs20\nenv:\n  A: x\n   B: y\n',
  'runtime: nodejs20\nenv:\n    A: x\n  B: y\n',
  'runtime: nodejs20\nenv: x\n  A: y\n',
  'runtime: nodejs20\ndescription: one\n  two\n',
  'runtime: nodejs20\nschedules:\n- name: a\n  cron: "* * * * *"\n- name: b\n  cron: 0 * * * *\nmemory_mb: 256\n',
  'runtime: nodejs20\nschedules:\n  -   name: a\n      cron: "* * * * *"\n',
  'runtime: nodejs20\nschedules:\n  - name: a\n    cron: "* * * * *"\n    event:\n      kind: tick\n      list:\n        - 1\n        - two\n',
  'runtime: nodejs20\nschedules:\n  -\n    name: a\n',
  'runtime: nodejs20\nschedules:\n  - - a\n',
  'runtime: nodejs20\nignore:\n  - a\n  -b\n',
  'runtime: nodejs20\nignore:\n- a\n  - b\n',
  'runtime: nodejs20\nignore:\n  - a\n    b\n',
  'runtime: nodejs20\nignore: [a,\n  b]\n',
  'runtime: nodejs20\nignore: "a\n  b"\n',
  'runtime: nodejs20\nenv:\n  A: &x 1\n  B: *x\n',
  'runtime: nodejs20\n? complex\n: value\n',
  'runtime: nodejs20\nenv: {A: x, B: "y"}\n',
  'runtime: nodejs20\nenv: {A: x, A: y}\n',
  'runtime: nodejs20\nenv:\n  A: |\n    text\n',
  'runtime: nodejs20\n__proto__: x\n',
  'runtime: nodejs20\nenv:\n  __proto__: x\n',
  'runtime: nodejs20\nenv:\n  constructor: x\n',
  '# only a comment\n',
  '',
  '- a\n- b\n',
  'just text\n',
  '\ufeffruntime: nodejs20\n',
  'runtime: nodejs20 # the runtime\nname: api # named\n',
  'runtime: nodejs20\nname:   api\n',
  'runtime: nodejs20\nname: "api"\n',
  "runtime: nodejs20\nname: 'api'\n",
];

describe('readPlainYaml: what it accepts it reads as the full parser does', () => {
  it('tricky scalars in every position', () => {
    let accepted = 0;
    for (const make of POSITIONS) for (const v of SCALARS) if (agrees(make(v))) accepted++;
    assert.ok(accepted > POSITIONS.length * 20, `only ${accepted} of ${POSITIONS.length * SCALARS.length} accepted`);
  });

  it('structural variants', () => {
    for (const text of STRUCTURES) agrees(text);
  });

  it('a seeded fuzz of lines built from YAML fragments', () => {
    const fragments = ['a', 'b', 'env', 'name', ':', ': ', ' ', '  ', '- ', '-', '#', ' #', '"', "'", '[', ']', '{', '}', ',', '1', '0x1', 'true', '~', 'x y', '*', '&', '!', '|', '.5', '\n'];
    let seed = 15;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let accepted = 0;
    for (let round = 0; round < 4000; round++) {
      let text = 'runtime: nodejs20\n';
      const parts = 3 + rnd(12);
      for (let i = 0; i < parts; i++) text += fragments[rnd(fragments.length)];
      if (agrees(`${text}\n`)) accepted++;
    }
    assert.ok(accepted > 100, `the fuzz reached the reader's subset only ${accepted} times`);
  });
});

describe('parsePlainManifest: the common files take the fast path', () => {
  const root = new URL('../../', import.meta.url);
  const examples = readdirSync(new URL('examples/', root)).filter((d) => existsSync(new URL(`examples/${d}/function.yaml`, root)));
  const fixtures = readdirSync(new URL('test/fixtures/manifests/', root)).filter((f) => !f.startsWith('invalid-'));
  const files: Array<[string, string]> = [
    ...examples.map((d): [string, string] => [`examples/${d}`, readFileSync(new URL(`examples/${d}/function.yaml`, root), 'utf8')]),
    ...fixtures.map((f): [string, string] => [f, readFileSync(new URL(`test/fixtures/manifests/${f}`, root), 'utf8')]),
    ['a generated function', 'runtime: nodejs20\nmemory_mb: 128\nenv:\n  INDEX: "7"\n'],
  ];
  for (const [what, text] of files) {
    it(`${what}: read by the fast reader, parsed as the full parser parses it`, () => {
      assert.ok(agrees(text), 'the reader declined it');
      assert.ok(parsePlainManifest(text, OPTS), 'the fast path declined it');
    });
  }

  it('a file with a problem is always left to the full parser (which words it with file:line)', () => {
    for (const text of ['runtime: cobol\n', 'runtime: nodejs20\nmemory_mb: 1\n', 'runtime: nodejs20\nenv:\n  PORT: "1"\n', 'runtime: nodejs20\nunknown: 1\n']) {
      assert.equal(parsePlainManifest(text, OPTS), undefined);
      assert.ok(parseYamlManifest(text, OPTS).problems.length > 0);
    }
    assert.equal(parsePlainManifest('runtime: nodejs20\n', { ...OPTS, dirName: 'Bad_Dir' }), undefined);
  });
});
