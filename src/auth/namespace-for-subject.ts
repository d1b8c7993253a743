import { createHash } from 'node:crypto';

/** The namespace a token's subject owns: `"sless-" + hex(sha256(sub))[0:16]` (docs/contract.md §3). */
export function namespaceForSubject(sub: string): string {
  return `sless-${createHash('sha256').update(sub, 'utf8').digest('hex').slice(0, 16)}`;
}
