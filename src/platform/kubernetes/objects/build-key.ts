// The build key names one image: the same code, runtime and base image always give the same key, so a
// key with a successful image is never built again (docs/contract.md §1: what triggers a rebuild).
import { createHash } from 'node:crypto';
import type { Runtime } from '../../../manifest/types.ts';

export interface BuildInput {
  readonly codeHash: string;
  readonly runtime: Runtime;
  readonly baseImage: string;
}

/** 64 hex chars: sha256 over code hash, runtime and base image. */
export function buildKey(input: BuildInput): string {
  return createHash('sha256')
    .update(`${input.codeHash}\n${input.runtime}\n${input.baseImage}\n`)
    .digest('hex');
}

/** Image tags allow 128 chars; 40 hex of the key are plenty and keep references readable. */
export function imageTag(key: string): string {
  return key.slice(0, 40);
}

/** `<registry>/<ns>-<name>` — one repository per function, so two namespaces never share tags. */
export function imageRepository(registry: string, namespace: string, name: string): string {
  return `${registry.replace(/\/+$/, '')}/${namespace}-${name}`;
}

/** The tag part of an image reference `repo:tag@sha256:...`, or undefined. */
export function tagOf(imageRef: string | undefined): string | undefined {
  if (!imageRef) return undefined;
  const withoutDigest = imageRef.split('@')[0] ?? '';
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.indexOf(':', lastSlash + 1);
  return colon === -1 ? undefined : withoutDigest.slice(colon + 1);
}
