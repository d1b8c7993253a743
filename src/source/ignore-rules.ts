// A function's ignore patterns (function.yaml `ignore:` and .slessignore, gitignore semantics) matched
// in linear time (issue 31 item 2). The `ignore` library keeps deciding what each pattern means (its
// rule order, negations, parent folders): only the regular expression each of its rules holds is run
// by linear-regex.ts instead of V8's backtracking engine, where `**/` repeated or `*a*a*a*b` took
// seconds to hours per path and froze the event loop (/healthz, the Lease renewal). The library's own
// parsing of a pattern runs native regular expressions over the pattern text, quadratic in its length
// at worst, so patterns are bounded in length and number; a pattern past a bound, or one whose
// expression the linear matcher does not take, is refused with where it is.
import ignorePkg from 'ignore';
import { linearRegex, UnsupportedRegexError } from './linear-regex.ts';

// ignore 5 is CommonJS with `factory.default = factory`; under NodeNext its typed default is the module.
const ignore = ignorePkg.default;

/** Longest pattern accepted (gitignore lines are rarely past 200 characters). */
export const MAX_IGNORE_PATTERN_LENGTH = 1024;
/** Most patterns one function may have, `ignore:` and .slessignore together. */
export const MAX_IGNORE_PATTERNS = 1000;

export interface IgnoreProblem {
  /** Where: `ignore` (function.yaml, `index` = the list index) or `slessignore` (`index` = the 1-based line). */
  readonly source: 'ignore' | 'slessignore';
  readonly index: number;
  readonly message: string;
}

/** A pattern list that cannot be matched safely; `problems` says where. */
export class IgnorePatternError extends Error {
  constructor(readonly problems: readonly IgnoreProblem[]) {
    super(problems.map((p) => `${p.source === 'ignore' ? `ignore[${p.index}]` : `.slessignore:${p.index}`}: ${p.message}`).join('; '));
    this.name = 'IgnorePatternError';
  }
}

/** The shape of the library's rules (ignore 5.3.2, pinned in package.json): each holds the expression it tests. */
interface IgnoreRules {
  _rules: Array<{ regex: { test(path: string): boolean; source: string; flags: string } }>;
}

function slessignoreLines(text: string | undefined): string[] {
  // The library splits a file the same way.
  return text === undefined ? [] : text.split(/\r?\n/);
}

/** What is wrong with these patterns, if anything (each refused pattern with where it is). Pure. */
export function ignoreProblems(globs: readonly string[], slessignore?: string): IgnoreProblem[] {
  const problems: IgnoreProblem[] = [];
  const check = (source: IgnoreProblem['source'], index: number, pattern: string): void => {
    if (pattern.length > MAX_IGNORE_PATTERN_LENGTH) {
      problems.push({ source, index, message: `the pattern is ${pattern.length} characters long; at most ${MAX_IGNORE_PATTERN_LENGTH} are accepted` });
      return;
    }
    for (const rule of (ignore().add(pattern) as unknown as IgnoreRules)._rules) {
      try {
        linearRegex(rule.regex.source, rule.regex.flags.includes('i'));
      } catch (err) {
        if (!(err instanceof UnsupportedRegexError)) throw err;
        problems.push({ source, index, message: `"${pattern}" is not a pattern sless can match (${err.message}); write it with *, **, ? and [a-z] only` });
      }
    }
  };
  globs.forEach((g, i) => check('ignore', i, g));
  const lines = slessignoreLines(slessignore);
  lines.forEach((line, i) => check('slessignore', i + 1, line));
  const count = globs.length + lines.filter((l) => l.trim() !== '' && !l.startsWith('#')).length;
  if (count > MAX_IGNORE_PATTERNS) {
    problems.push({ source: lines.length > 0 ? 'slessignore' : 'ignore', index: lines.length > 0 ? lines.length : globs.length - 1, message: `${count} ignore patterns; at most ${MAX_IGNORE_PATTERNS} are accepted (ignore: and .slessignore together)` });
  }
  return problems;
}

/**
 * A matcher for the files a function leaves out: its `ignore` globs plus its .slessignore lines, both
 * with gitignore semantics, in linear time. Give it a hash path without the leading "/" of included
 * files. Throws IgnorePatternError for patterns ignoreProblems refuses.
 */
export function ignoreMatcher(globs: readonly string[], slessignore?: string): (relPath: string) => boolean {
  const problems = ignoreProblems(globs, slessignore);
  if (problems.length > 0) throw new IgnorePatternError(problems);
  const ig = ignore().add([...globs]);
  if (slessignore !== undefined) ig.add(slessignore);
  for (const rule of (ig as unknown as IgnoreRules)._rules) rule.regex = linearRegex(rule.regex.source, rule.regex.flags.includes('i')) as never;
  return (relPath) => ig.ignores(relPath);
}
