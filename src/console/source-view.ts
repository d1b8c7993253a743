// A function's files as the console shows them (pure): text files in full up to a size, binary and
// oversized ones named only; and the same files as JSON (utf8 or base64) and as plain text for curl.
import type { CodeFile } from '../platform/types.ts';

/** Larger files are listed but not shown inline (the zip from /v1 .../source has them). */
export const SHOWN_FILE_BYTES = 256 * 1024;

export interface SourceFileView {
  readonly path: string;
  readonly size: string;
  readonly executable: boolean;
  readonly symlinkTarget?: string;
  /** Undefined when the file is binary or too large to show. */
  readonly text?: string;
  readonly note?: string;
}

export function isText(content: Buffer): boolean {
  if (content.includes(0)) return false;
  return Buffer.from(content.toString('utf8'), 'utf8').equals(content);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Sorted by path, the function's own files before included ones (which sit deeper). */
export function sourceView(files: readonly CodeFile[]): SourceFileView[] {
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => {
      const base = { path: f.path, size: formatBytes(f.content.length), executable: f.mode === '100755' };
      if (f.mode === '120000') return { ...base, symlinkTarget: f.content.toString('utf8') };
      if (f.content.length > SHOWN_FILE_BYTES) return { ...base, note: `not shown: larger than ${formatBytes(SHOWN_FILE_BYTES)}` };
      if (!isText(f.content)) return { ...base, note: 'not shown: binary file' };
      return { ...base, text: f.content.toString('utf8') };
    });
}

export function sourceJson(files: readonly CodeFile[]) {
  return [...files]
    .sort((a, b) => (a.path < b.path ? -1 : 1))
    .map((f) =>
      isText(f.content)
        ? { path: f.path, mode: f.mode, encoding: 'utf8' as const, content: f.content.toString('utf8') }
        : { path: f.path, mode: f.mode, encoding: 'base64' as const, content: f.content.toString('base64') },
    );
}

/** `==> path <==` before each file, like `head` with several files. */
export function sourceText(files: readonly CodeFile[]): string {
  return sourceView(files)
    .map((f) => `==> ${f.path} <==\n${f.text ?? (f.symlinkTarget !== undefined ? `-> ${f.symlinkTarget}` : `(${f.note ?? ''})`)}${f.text?.endsWith('\n') ? '' : '\n'}`)
    .join('\n');
}
