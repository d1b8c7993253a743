// The webhook secrets /hooks checks signatures against, read from each repository's Secret and kept for
// a while (the controller may not list or watch Secrets: deploy/base/rbac.yaml grants only get). A delivery
// whose signature does not match asks for a fresh read, at most once per Secret every `refreshMs`, so a
// rotated secret is seen at the next delivery while a flood of forged ones costs one read, not one each.
// Concurrent reads of one Secret share a single request; when a read fails, the last value keeps serving.
import { GIT_CREDENTIALS_SECRET_TYPE } from './objects/meta.ts';

/** What a repository's Secret says about webhooks: no Secret, not one made for sless, or its webhookSecret (may be empty). */
export type WebhookSecret = { readonly kind: 'missing' } | { readonly kind: 'not-sless' } | { readonly kind: 'found'; readonly secret?: string };

export interface WebhookSecretsOptions {
  /** The Secret's type and base64 data; undefined when it does not exist. */
  readonly read: (namespace: string, name: string) => Promise<{ type?: string; data?: Record<string, string> } | undefined>;
  /** How long a read value is used without asking. Default 60 s. */
  readonly ttlMs?: number;
  /** A refresh (signature mismatch) reads again only when the value is older than this. Default 5 s. */
  readonly refreshMs?: number;
  /** Secrets remembered at most (least recently read go first). Default 10,000. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

/** Pure: what a Secret as the API server returns it means for webhooks. */
export function webhookSecretOf(secret: { type?: string; data?: Record<string, string> } | undefined): WebhookSecret {
  if (!secret) return { kind: 'missing' };
  // Only a Secret made for sless holds a webhook secret (the same rule as the sync's credentials).
  if (secret.type !== GIT_CREDENTIALS_SECRET_TYPE) return { kind: 'not-sless' };
  const encoded = secret.data?.webhookSecret;
  const value = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : undefined;
  return value ? { kind: 'found', secret: value } : { kind: 'found' };
}

export class WebhookSecrets {
  private readonly entries = new Map<string, { value: WebhookSecret; at: number }>();
  private readonly loading = new Map<string, Promise<WebhookSecret>>();
  private readonly ttlMs: number;
  private readonly refreshMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly opts: WebhookSecretsOptions) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.refreshMs = opts.refreshMs ?? 5_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async get(namespace: string, name: string, options: { refresh?: boolean } = {}): Promise<WebhookSecret> {
    const key = `${namespace}/${name}`;
    const entry = this.entries.get(key);
    const age = entry ? this.now() - entry.at : Infinity;
    if (entry && age < (options.refresh ? this.refreshMs : this.ttlMs)) return entry.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = this.load(key, namespace, name, entry?.value);
    this.loading.set(key, load);
    try {
      return await load;
    } finally {
      this.loading.delete(key);
    }
  }

  private async load(key: string, namespace: string, name: string, previous: WebhookSecret | undefined): Promise<WebhookSecret> {
    let value: WebhookSecret;
    try {
      value = webhookSecretOf(await this.opts.read(namespace, name));
    } catch (err) {
      if (previous) return previous;
      throw err;
    }
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, at: this.now() });
    return value;
  }
}
