// The console's static files (one script, one stylesheet), read once at start and served with an
// ETag; and the headers every console answer carries.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { codeDir } from '../package-root.ts';

export const STATIC_DIR = path.join(codeDir, 'console', 'static');

const FILES = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
} as const;

export interface StaticFile {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

export async function loadStaticFiles(dir = STATIC_DIR): Promise<Map<string, StaticFile>> {
  const out = new Map<string, StaticFile>();
  for (const [name, type] of Object.entries(FILES)) {
    const body = await readFile(`${dir}/${name}`);
    out.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return out;
}

/**
 * No inline script or style, nothing from elsewhere, no framing, forms post only here. Referers go
 * to this origin only (never elsewhere); `no-referrer` would make browsers send `Origin: null` with
 * the console's own forms, which the CSRF check must refuse.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const securityHeaders: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
