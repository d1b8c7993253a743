/** Repo-relative path of the function.yaml in function folder `dir` ('' = the repository root). */
export function manifestFile(dir: string): string {
  return dir === '' ? 'function.yaml' : `${dir}/function.yaml`;
}
