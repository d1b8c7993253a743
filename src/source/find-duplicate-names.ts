// Two folders declaring the same function name would fight over one Deployment. Neither wins: both
// become errors (no manifest, so nothing of theirs is built, changed or removed), and every other
// function is unaffected. The same holds for the objects a function's schedules, http switch and jobs
// become (platform/names.ts): function `a` job `b-c` and function `a-b` job `c` are both FunctionJob
// `a-b-c`, and only one of them would run, whichever was applied last (issue 31 item 8).
import { cronTriggerName, functionJobName, httpTriggerName } from '../manifest/generated-names.ts';
import type { FunctionEntry } from './types.ts';
import { nameLineOf } from '../manifest/name-lines.ts';
import { manifestFile } from '../manifest/manifest-file.ts';

export function findDuplicateNames(entries: readonly FunctionEntry[]): FunctionEntry[] {
  return findGeneratedNameClashes(findDuplicateFunctionNames(entries));
}

function findDuplicateFunctionNames(entries: readonly FunctionEntry[]): FunctionEntry[] {
  const pathsByName = new Map<string, string[]>();
  for (const entry of entries) {
    if (entry.manifest === undefined) continue;
    pathsByName.set(entry.name, [...(pathsByName.get(entry.name) ?? []), entry.path]);
  }
  return entries.map((entry) => {
    const paths = pathsByName.get(entry.name);
    if (entry.manifest === undefined || paths === undefined || paths.length < 2) return entry;
    const others = paths.filter((p) => p !== entry.path).map((p) => manifestFile(p));
    const message = `function name "${entry.name}" is also used by ${others.join(', ')}; names must be unique in a repository, so none of them is deployed until one is renamed`;
    const { manifest, ...rest } = entry;
    void manifest;
    return {
      ...rest,
      problems: [
        ...entry.problems,
        { file: manifestFile(entry.path), line: nameLineOf(entry.manifest), key: 'name', message },
      ],
    };
  });
}

/** One object a function's manifest makes, as a user would name its source. */
interface Generated {
  readonly kind: 'Trigger' | 'FunctionJob';
  readonly name: string;
  readonly entry: FunctionEntry;
  readonly what: string;
  readonly key: string;
}

function generatedObjects(entry: FunctionEntry): Generated[] {
  const m = entry.manifest;
  if (m === undefined) return [];
  const fn = `function "${m.name}"`;
  return [
    { kind: 'Trigger', name: httpTriggerName(m.name), entry, what: `the http trigger of ${fn}`, key: 'http' },
    ...m.schedules.map((s, i): Generated => ({ kind: 'Trigger', name: cronTriggerName(m.name, s.name), entry, what: `schedule "${s.name}" of ${fn}`, key: `schedules[${i}].name` })),
    ...m.jobs.map((j, i): Generated => ({ kind: 'FunctionJob', name: functionJobName(m.name, j.name), entry, what: `job "${j.name}" of ${fn}`, key: `jobs[${i}].name` })),
  ];
}

/**
 * Functions whose generated Triggers or FunctionJobs would share a name with another function's: each
 * loses its manifest and gets a problem naming the other. The names themselves stay as they always
 * were (objects in clusters and the old operator's clients rely on them); a clash is an error instead.
 */
function findGeneratedNameClashes(entries: readonly FunctionEntry[]): FunctionEntry[] {
  const byName = new Map<string, Generated[]>();
  for (const g of entries.flatMap(generatedObjects)) {
    const key = `${g.kind}/${g.name}`;
    byName.set(key, [...(byName.get(key) ?? []), g]);
  }
  const problems = new Map<FunctionEntry, FunctionEntry['problems'][number][]>();
  for (const group of byName.values()) {
    if (new Set(group.map((g) => g.entry)).size < 2) continue;
    for (const g of group) {
      const other = group.find((o) => o.entry !== g.entry);
      if (other === undefined) continue;
      const message = `${g.what} becomes ${g.kind} "${g.name}", the same name as ${other.what} (${manifestFile(other.entry.path)}); rename one: neither is deployed until then`;
      problems.set(g.entry, [...(problems.get(g.entry) ?? []), { file: manifestFile(g.entry.path), line: 0, key: g.key, message }]);
    }
  }
  if (problems.size === 0) return [...entries];
  return entries.map((entry) => {
    const clashes = problems.get(entry);
    if (clashes === undefined) return entry;
    const { manifest, ...rest } = entry;
    void manifest;
    return { ...rest, problems: [...entry.problems, ...clashes] };
  });
}
