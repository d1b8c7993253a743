// A repository's function whose generated Trigger or FunctionJob name (platform/names.ts) is already
// taken by another repository's object or a /v1 one (issue 31 item 8): applying it would take that
// object over, so whichever synced last would win. Within one repository both sides are refused
// earlier (manifest/find-duplicate-names.ts); here the one that comes second is, naming the first.
import type { FunctionManifest } from '../../../manifest/types.ts';
import { cronTriggerName, functionJobName, httpTriggerName, queueTriggerName } from '../../../manifest/generated-names.ts';
import { ownedByRepository } from './drift.ts';
import { LABELS } from './meta.ts';

interface Existing {
  readonly metadata?: { readonly labels?: Readonly<Record<string, string>> };
  readonly spec?: { readonly functionRef?: string };
}

/** Why `manifest`'s objects cannot be applied for `repository`, or undefined; `find` looks a name up (cache). */
export function generatedNameClash(
  manifest: FunctionManifest,
  namespace: string,
  repository: string,
  find: (kind: 'Trigger' | 'FunctionJob', name: string) => Existing | undefined,
): string | undefined {
  const fn = `function "${manifest.name}"`;
  const wanted: Array<['Trigger' | 'FunctionJob', string, string]> = [
    ['Trigger', httpTriggerName(manifest.name), `the http trigger of ${fn}`],
    ...manifest.schedules.map((s): ['Trigger', string, string] => ['Trigger', cronTriggerName(manifest.name, s.name), `schedule "${s.name}" of ${fn}`]),
    ...(manifest.queues ?? []).map((q): ['Trigger', string, string] => ['Trigger', queueTriggerName(manifest.name, q.name), `queue trigger "${q.name}" of ${fn}`]),
    ...manifest.jobs.map((j): ['FunctionJob', string, string] => ['FunctionJob', functionJobName(manifest.name, j.name), `job "${j.name}" of ${fn}`]),
  ];
  for (const [kind, name, what] of wanted) {
    const existing = find(kind, name);
    if (!existing || ownedByRepository(existing, repository)) continue;
    const by = existing.metadata?.labels?.[LABELS.repository];
    const owner = by ? `managed by repository ${by}` : 'made through the API';
    return `${what} becomes ${kind} "${name}", which already exists in ${namespace} for function ${existing.spec?.functionRef ?? '?'}, ${owner}; rename one of them`;
  }
  return undefined;
}
