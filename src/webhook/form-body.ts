// The JSON a webhook carries, whatever its content type: `application/json` sends it as the body,
// `application/x-www-form-urlencoded` (Gitea's and GitHub's "form" content type) as the form field
// `payload`. Decoded byte by byte (not through strings): Gitea signs the JSON bytes inside the form,
// so they must come out exactly as they went in.

export type WebhookBody =
  | { readonly form: false; readonly json: Buffer }
  | { readonly form: true; readonly json: Buffer | undefined };

export function webhookBody(contentType: string | undefined, raw: Buffer): WebhookBody {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') return { form: false, json: raw };
  return { form: true, json: formField(raw, 'payload') };
}

/** The first value of a field of a url-encoded form, as bytes; undefined when absent. */
export function formField(raw: Buffer, name: string): Buffer | undefined {
  let start = 0;
  while (start <= raw.length) {
    let end = raw.indexOf(0x26 /* & */, start);
    if (end === -1) end = raw.length;
    const pair = raw.subarray(start, end);
    const eq = pair.indexOf(0x3d /* = */);
    const key = decodeFormBytes(eq === -1 ? pair : pair.subarray(0, eq)).toString('utf8');
    if (key === name) return decodeFormBytes(eq === -1 ? Buffer.alloc(0) : pair.subarray(eq + 1));
    start = end + 1;
  }
  return undefined;
}

/** `+` is a space, `%XX` a byte; a `%` not followed by two hex digits stays as it is (as browsers do). */
function decodeFormBytes(bytes: Buffer): Buffer {
  const out = Buffer.alloc(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b === 0x2b /* + */) {
      out[n++] = 0x20;
    } else if (b === 0x25 /* % */ && isHex(bytes[i + 1]) && isHex(bytes[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(bytes[i + 1] as number, bytes[i + 2] as number), 16);
      i += 2;
    } else {
      out[n++] = b;
    }
  }
  return out.subarray(0, n);
}

function isHex(b: number | undefined): boolean {
  return b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66));
}
