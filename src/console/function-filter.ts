// SLESS_CONSOLE_EXCLUDE: names or globs (`*` any run of characters, `?` one) of functions the
// console does not show, as the old console's SLESS_EXCLUDE did (pure).
export type FunctionFilter = (name: string) => boolean;

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** True for the functions the console shows. */
export function visibleFunctions(exclude: readonly string[]): FunctionFilter {
  const patterns = exclude.map((p) => p.trim()).filter(Boolean).map(globToRegExp);
  return (name) => !patterns.some((re) => re.test(name));
}
