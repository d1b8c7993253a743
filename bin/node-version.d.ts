/** Why Node `found` cannot run sless (one line), or undefined; `range` is package.json's engines.node (`>=X.Y.Z`). */
export function nodeVersionProblem(found: string, range: string | undefined): string | undefined;
