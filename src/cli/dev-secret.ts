// The secrets `sless dev` makes for itself when none is given, kept in the data dir so what it printed
// keeps working after a restart: the HS256 secret of its admin token (`jwt-secret`, unless
// SLESS_JWT_SECRET) and the webhook secret (`webhook-secret`, unless --webhook-secret). Each file is
// created exclusively (O_EXCL, never through a link) with mode 0600; a file that group or others can
// read, or that is not a plain file, is refused rather than trusted.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { MIN_HS256_SECRET_BYTES } from '../auth/token-verifier.ts';

export interface DataDirSecret {
  /** File name in the data dir. */
  readonly file: string;
  /** What the secret is, for messages: "the admin token's secret". */
  readonly what: string;
  /** What deleting the file does, and the setting that replaces it. */
  readonly fix: string;
  /** The shortest secret accepted from the file. */
  readonly minBytes: number;
}

/** The HS256 secret of the admin token: as long as SLESS_JWT_SECRET must be. */
export const JWT_SECRET: DataDirSecret = {
  file: 'jwt-secret',
  what: "the admin token's secret",
  fix: 'delete it (a new secret is made; tokens printed before stop working) or set SLESS_JWT_SECRET',
  minBytes: MIN_HS256_SECRET_BYTES,
};

/** The secret /hooks checks push deliveries against. */
export const WEBHOOK_SECRET: DataDirSecret = {
  file: 'webhook-secret',
  what: 'the webhook secret',
  fix: 'delete it (a new secret is made; webhooks set up before must be given it) or pass --webhook-secret / SLESS_WEBHOOK_SECRET',
  minBytes: 1,
};

/** The secret in `<dataDir>/<secret.file>`, made on first use. */
export async function dataDirSecret(dataDir: string, secret: DataDirSecret): Promise<string> {
  const file = path.join(dataDir, secret.file);
  const made = randomBytes(32).toString('base64url');
  try {
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    try {
      await handle.writeFile(`${made}\n`);
    } finally {
      await handle.close();
    }
    return made;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new Error(`cannot create ${file} (${secret.what}): ${(err as Error).message}`, { cause: err });
    }
  }
  return readSecret(file, secret);
}

async function readSecret(file: string, secret: DataDirSecret): Promise<string> {
  const name = `${file} (${secret.what})`;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${name} is a symlink; ${secret.fix}`, { cause: err });
    throw err;
  });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${name} is not a plain file; ${secret.fix}`);
    if ((st.mode & 0o077) !== 0) {
      throw new Error(`${name} is open to group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it, or ${secret.fix}`);
    }
    const value = (await handle.readFile('utf8')).trim();
    if (Buffer.byteLength(value) < secret.minBytes) throw new Error(`${name} holds fewer than ${secret.minBytes} bytes; ${secret.fix}`);
    return value;
  } finally {
    await handle.close();
  }
}
