// The HS256 secret `sless dev` signs its admin token with, when SLESS_JWT_SECRET is not set: kept in
// the data dir so the token it prints keeps working after a restart. The file is created
// exclusively (O_EXCL, never through a link) with mode 0600; a file that group or others can read,
// or that is not a plain file, is refused rather than trusted.
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';

export const SECRET_FILE = 'jwt-secret';
/** The shortest HS256 secret accepted (as for SLESS_JWT_SECRET). */
const MIN_BYTES = 32;

/** The secret in `<dataDir>/jwt-secret`, made on first use. */
export async function dataDirSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, SECRET_FILE);
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
      throw new Error(`cannot create ${file} (the admin token's secret): ${(err as Error).message}`, { cause: err });
    }
  }
  return readSecret(file);
}

async function readSecret(file: string): Promise<string> {
  const fix = `delete it (a new secret is made; tokens printed before stop working) or set SLESS_JWT_SECRET`;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: unknown) => {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${file} (the admin token's secret) is a symlink; ${fix}`, { cause: err });
    throw err;
  });
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new Error(`${file} (the admin token's secret) is not a plain file; ${fix}`);
    if ((st.mode & 0o077) !== 0) {
      throw new Error(`${file} (the admin token's secret) is open to group or others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it, or ${fix}`);
    }
    const secret = (await handle.readFile('utf8')).trim();
    if (Buffer.byteLength(secret) < MIN_BYTES) throw new Error(`${file} (the admin token's secret) holds fewer than ${MIN_BYTES} bytes; ${fix}`);
    return secret;
  } finally {
    await handle.close();
  }
}
