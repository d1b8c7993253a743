// Output of the client commands (pure): JSON and YAML as /v1 gives them, or a plain table whose
// columns each kind of object names below.
import { stringify } from 'yaml';
import { CliError } from './errors.ts';

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutputFormat(text: string | undefined): OutputFormat {
  if (text === undefined) return 'table';
  if ((OUTPUT_FORMATS as readonly string[]).includes(text)) return text as OutputFormat;
  throw new CliError(`-o ${text} is not an output format; use one of ${OUTPUT_FORMATS.join(', ')}`);
}

type Row = Readonly<Record<string, unknown>>;
export interface Column {
  readonly header: string;
  readonly value: (row: Row) => unknown;
}

const field =
  (name: string) =>
  (row: Row): unknown =>
    row[name];

/** The table columns of each kind `sless get` lists. */
export const COLUMNS = {
  functions: [
    { header: 'NAME', value: field('name') },
    { header: 'RUNTIME', value: field('runtime') },
    { header: 'PHASE', value: field('phase') },
    { header: 'MANAGED-BY', value: field('managed_by') },
    { header: 'URL', value: field('url') },
  ],
  triggers: [
    { header: 'NAME', value: field('name') },
    { header: 'TYPE', value: field('type') },
    { header: 'FUNCTION', value: field('function_ref') },
    { header: 'SCHEDULE', value: field('schedule') },
    { header: 'ENABLED', value: field('enabled') },
    { header: 'ACTIVE', value: field('active') },
  ],
  jobs: [
    { header: 'NAME', value: field('name') },
    { header: 'FUNCTION', value: field('function_ref') },
    { header: 'RUN', value: field('run_id') },
    { header: 'PHASE', value: field('phase') },
    { header: 'STARTED', value: field('start_time') },
    { header: 'COMPLETED', value: field('completion_time') },
  ],
  repositories: [
    { header: 'NAME', value: field('name') },
    { header: 'URL', value: field('url') },
    { header: 'BRANCH', value: field('branch') },
    { header: 'REVISION', value: (r) => shortRevision(r.revision) },
    { header: 'LAST-SYNC', value: field('last_sync_time') },
    { header: 'READY', value: (r) => (r.ready as { status?: string } | undefined)?.status },
    { header: 'FUNCTIONS', value: (r) => (Array.isArray(r.functions) ? r.functions.length : undefined) },
  ],
  builds: [
    { header: 'CODE-HASH', value: (r) => shortRevision(r.code_hash) },
    { header: 'OUTCOME', value: field('outcome') },
    { header: 'STARTED', value: field('started_at') },
    {
      header: 'DURATION',
      value: (r) => (typeof r.duration_ms === 'number' ? `${(r.duration_ms / 1000).toFixed(1)}s` : undefined),
    },
    { header: 'MESSAGE', value: field('message') },
  ],
  revisions: [
    { header: 'REVISION', value: field('revision') },
    { header: 'CODE-HASH', value: (r) => shortRevision(r.code_hash) },
    { header: 'COMMIT', value: (r) => shortRevision(r.commit) },
    { header: 'LIVE-FROM', value: field('live_from') },
    { header: 'LIVE-UNTIL', value: field('live_until') },
    { header: 'IMAGE', value: field('image') },
  ],
  invocations: [
    { header: 'STARTED', value: field('started_at') },
    { header: 'METHOD', value: field('method') },
    { header: 'PATH', value: field('path') },
    { header: 'STATUS', value: field('status') },
    {
      header: 'DURATION',
      value: (r) => (typeof r.duration_ms === 'number' ? `${r.duration_ms}ms` : undefined),
    },
  ],
} as const satisfies Record<string, readonly Column[]>;

/** A git SHA or `sha256:...` hash cut to what a person compares. */
export function shortRevision(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const hex = value.startsWith('sha256:') ? value.slice('sha256:'.length) : value;
  return /^[0-9a-f]{12,}$/.test(hex)
    ? `${value.startsWith('sha256:') ? 'sha256:' : ''}${hex.slice(0, 12)}`
    : value;
}

function cell(v: unknown): string {
  if (v === undefined || v === null || v === '') return '-';
  const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return text.replace(/\s+/g, ' ');
}

/** Columns padded to their widest cell, two spaces apart; the last column is not padded. */
export function formatTable(rows: readonly Row[], columns: readonly Column[]): string {
  const cells = [columns.map((c) => c.header), ...rows.map((r) => columns.map((c) => cell(c.value(r))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => (line[i] as string).length)));
  return (
    cells
      .map((line) =>
        line
          .map((c, i) => (i === line.length - 1 ? c : c.padEnd(widths[i] as number)))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** One value (an object or a list) in the chosen format; a table needs columns. */
export function formatOutput(value: unknown, format: OutputFormat, columns: readonly Column[]): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value);
  const rows = (Array.isArray(value) ? value : [value]) as Row[];
  return formatTable(rows, columns);
}
