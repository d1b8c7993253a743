// Small path rules shared by the build context and the artifact stores.

/** A relative posix path with no leading `/`, no `\`, NUL, empty, `.` or `..` segments. */
export function isCleanRelativePath(p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.includes('\\') && !p.includes('\0') &&
    p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** Orders by UTF-16 code units, never by locale: the order must not depend on the machine. */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
