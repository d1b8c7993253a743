// A push webhook (headers + the exact bytes received + the repository's secret) -> a verdict the
// HTTP route can act on. Pure: no I/O, no clock, never throws.
//
// Order matters: the provider is told from its event header, the signature is checked over the bytes
// the provider signed (the raw body; for Gitea's form deliveries the JSON in the `payload` field), and
// only a body whose signature is valid is parsed at all. Nothing is derived from the
// commit list (Gitea sends the last 5 commits, GitLab 20): the sync diffs trees in git instead.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { webhookBody } from './form-body.ts';
import { readPullRequest, type PullRequestEvent } from './pull-request.ts';

export type { PullRequestEvent } from './pull-request.ts';

export type WebhookProvider = 'gitea' | 'github' | 'gitlab' | 'unknown';

/**
 * `missing`: the request carries no signature/token (or an empty one), or comes from no known
 * provider. `no-secret`: the repository has no webhookSecret, so nothing can be trusted.
 */
export type SignatureCheck = 'valid' | 'invalid' | 'missing' | 'no-secret';

export interface PushEvent {
  readonly kind: 'push';
  /**
   * The ref as sent: `refs/heads/main`, `refs/tags/v1`, or unqualified (`main`) in Gitea's test
   * delivery (`POST .../hooks/{id}/tests?ref=main`), which names neither heads nor tags.
   */
  readonly ref: string;
  /** Set for branch pushes only; a tag push is not a branch push. */
  readonly branch?: string;
  readonly tag?: string;
  /** The new head commit; all zeros when the ref was deleted. */
  readonly after: string;
  readonly before?: string;
  /** The push deleted the ref (`after` is the zero SHA). */
  readonly deleted: boolean;
  /** The repository's clone URLs as the provider names them (HTTP first), for matching spec.url. */
  readonly cloneUrls: readonly string[];
  /** `owner/name` (GitLab: path_with_namespace), for logs. */
  readonly repository?: string;
}

/** A branch or tag deleted (Gitea sends only this when a branch is deleted; GitHub sends it besides a push). */
export interface DeleteEvent {
  readonly kind: 'delete';
  readonly refType: 'branch' | 'tag';
  /** The short name as sent (`main`, `v1`), never `refs/...`. */
  readonly name: string;
  readonly cloneUrls: readonly string[];
  readonly repository?: string;
}

export interface PingEvent {
  readonly kind: 'ping';
}

export interface OtherEvent {
  readonly kind: 'other';
  /** The provider's event name, e.g. `issues`, `Merge Request Hook`. */
  readonly name: string;
}

export type WebhookEvent = PushEvent | DeleteEvent | PullRequestEvent | PingEvent | OtherEvent;

interface VerdictBase {
  readonly provider: WebhookProvider;
  /** The provider's delivery id (for logs and de-duplication), when it sent one. */
  readonly deliveryId?: string;
}

export type WebhookVerdict =
  /** Not trusted: answer 401 and do nothing. */
  | (VerdictBase & {
      readonly status: 'rejected';
      readonly signature: Exclude<SignatureCheck, 'valid'>;
      readonly error: string;
    })
  /** Signed correctly but unreadable: answer 400. */
  | (VerdictBase & { readonly status: 'malformed'; readonly signature: 'valid'; readonly error: string })
  | (VerdictBase & {
      readonly status: 'verified';
      readonly signature: 'valid';
      readonly event: WebhookEvent;
    });

export interface WebhookInput {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly rawBody: Buffer;
  readonly secret: string | undefined;
}

const ZERO_SHA = /^0+$/;

export function parseWebhook(input: WebhookInput): WebhookVerdict {
  const headers = lowerCaseKeys(input.headers);
  const provider = detectProvider(headers);
  const deliveryId = pickDeliveryId(headers, provider);
  const base: VerdictBase = deliveryId === undefined ? { provider } : { provider, deliveryId };

  if (provider === 'unknown') {
    return {
      ...base,
      status: 'rejected',
      signature: 'missing',
      error:
        'not a webhook from Gitea, GitHub or GitLab (no X-Gitea-Event, X-GitHub-Event or X-Gitlab-Event header)',
    };
  }
  if (input.secret === undefined || input.secret === '') {
    return {
      ...base,
      status: 'rejected',
      signature: 'no-secret',
      error:
        'the repository has no webhookSecret, so no webhook can be verified; add webhookSecret to the Secret named by spec.secretRef',
    };
  }
  // Form deliveries carry the JSON in the field `payload`. Gitea signs that JSON, not the bytes it
  // sends; GitHub signs the bytes sent (its docs: the HMAC of the request body, whatever the type).
  const body = webhookBody(first(headers, 'content-type'), input.rawBody);
  const signed = provider === 'gitea' && body.form ? body.json : input.rawBody;
  if (signed === undefined) {
    return {
      ...base,
      status: 'rejected',
      signature: 'invalid',
      error: 'a form-encoded Gitea delivery without a "payload" field cannot be verified (Gitea signs that field)',
    };
  }
  const signature = checkSignature(provider, headers, signed, input.secret);
  if (signature.check !== 'valid')
    return { ...base, status: 'rejected', signature: signature.check, error: signature.error };
  if (body.json === undefined) {
    return { ...base, status: 'malformed', signature: 'valid', error: `the form-encoded ${provider} webhook has no "payload" field` };
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(body.json.toString('utf8'));
  } catch (error) {
    return {
      ...base,
      status: 'malformed',
      signature: 'valid',
      error: `the ${provider} webhook ${body.form ? '"payload" field' : 'body'} is not JSON (${(error as Error).message}); send it with content type application/json`,
    };
  }
  const eventName = eventHeader(headers, provider) ?? '';
  const kind = eventKind(provider, eventName);
  if (kind === 'ping' || kind === 'other')
    return {
      ...base,
      status: 'verified',
      signature: 'valid',
      event: kind === 'ping' ? { kind } : { kind, name: eventName },
    };

  const event =
    kind === 'push' ? readPush(provider, parsed) : kind === 'pull_request' ? readPullRequest(provider, parsed) : readDelete(provider, parsed);
  if ('error' in event) return { ...base, status: 'malformed', signature: 'valid', error: event.error };
  return { ...base, status: 'verified', signature: 'valid', event };
}

type Headers = ReadonlyMap<string, readonly string[]>;

function lowerCaseKeys(headers: WebhookInput['headers']): Headers {
  const out = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), ...(Array.isArray(value) ? value : [value])]);
  }
  return out;
}

function first(headers: Headers, name: string): string | undefined {
  return headers.get(name)?.[0];
}

function detectProvider(headers: Headers): WebhookProvider {
  // Gitea (and Forgejo, Gogs) also send X-GitHub-Event, so they are recognised first.
  if (headers.has('x-gitea-event') || headers.has('x-forgejo-event') || headers.has('x-gogs-event'))
    return 'gitea';
  if (headers.has('x-gitlab-event')) return 'gitlab';
  if (headers.has('x-github-event')) return 'github';
  return 'unknown';
}

function eventHeader(headers: Headers, provider: WebhookProvider): string | undefined {
  if (provider === 'gitea')
    return (
      first(headers, 'x-gitea-event') ?? first(headers, 'x-forgejo-event') ?? first(headers, 'x-gogs-event')
    );
  if (provider === 'gitlab') return first(headers, 'x-gitlab-event');
  return first(headers, 'x-github-event');
}

function eventKind(provider: WebhookProvider, name: string): WebhookEvent['kind'] {
  if (provider === 'gitlab') {
    if (name === 'Merge Request Hook') return 'pull_request';
    return name === 'Push Hook' || name === 'Tag Push Hook' ? 'push' : 'other';
  }
  if (name === 'push') return 'push';
  if (name === 'pull_request') return 'pull_request';
  if (name === 'delete') return 'delete';
  return provider === 'github' && name === 'ping' ? 'ping' : 'other';
}

function pickDeliveryId(headers: Headers, provider: WebhookProvider): string | undefined {
  const names: Record<WebhookProvider, readonly string[]> = {
    gitea: ['x-gitea-delivery', 'x-forgejo-delivery', 'x-gogs-delivery'],
    github: ['x-github-delivery'],
    gitlab: ['x-gitlab-event-uuid', 'x-gitlab-webhook-uuid'],
    unknown: [],
  };
  const id = names[provider].map((n) => first(headers, n)).find((v) => v !== undefined && v !== '');
  // It ends up in logs: keep it a plain token.
  return id !== undefined && /^[A-Za-z0-9._-]{1,128}$/.test(id) ? id : undefined;
}

type SignatureResult = { check: 'valid' } | { check: 'invalid' | 'missing'; error: string };

function checkSignature(
  provider: WebhookProvider,
  headers: Headers,
  body: Buffer,
  secret: string,
): SignatureResult {
  if (provider === 'gitlab') {
    const token = singleValue(headers, 'x-gitlab-token');
    if (token === 'repeated') return { check: 'invalid', error: 'X-Gitlab-Token appears more than once' };
    if (token === undefined)
      return {
        check: 'missing',
        error:
          "no X-Gitlab-Token header: the webhook has no secret token; set the GitLab webhook's secret token to the repository's webhookSecret",
      };
    return equalSecrets(token, secret)
      ? { check: 'valid' }
      : { check: 'invalid', error: "X-Gitlab-Token does not match the repository's webhookSecret" };
  }
  // Gitea's own header is preferred; it sends the GitHub-style one as well (same HMAC).
  const candidates =
    provider === 'gitea'
      ? [
          { header: 'x-gitea-signature', prefix: '' },
          { header: 'x-forgejo-signature', prefix: '' },
          { header: 'x-hub-signature-256', prefix: 'sha256=' },
        ]
      : [{ header: 'x-hub-signature-256', prefix: 'sha256=' }];
  // A webhook without a secret still sends the headers, empty: `X-Gitea-Signature: ""`,
  // `X-Hub-Signature: "sha1="`, `X-Hub-Signature-256: "sha256="` (Gitea does).
  let sentEmpty = isEmptySignature(headers, 'x-hub-signature', 'sha1=');
  for (const { header, prefix } of candidates) {
    if (isEmptySignature(headers, header, prefix)) {
      sentEmpty = true;
      continue;
    }
    const value = singleValue(headers, header);
    if (value === undefined) continue;
    if (value === 'repeated') return { check: 'invalid', error: `${header} appears more than once` };
    const hex = value.startsWith(prefix) ? value.slice(prefix.length) : undefined;
    if (hex === undefined || !/^[0-9a-fA-F]{64}$/.test(hex)) {
      return {
        check: 'invalid',
        error: `${header} is not ${prefix === '' ? '' : `"${prefix}" followed by `}64 hex digits of HMAC-SHA256`,
      };
    }
    const expected = createHmac('sha256', secret).update(body).digest();
    return timingSafeEqual(Buffer.from(hex, 'hex'), expected)
      ? { check: 'valid' }
      : {
          check: 'invalid',
          error: `${header} does not match an HMAC-SHA256 of the ${provider === 'gitea' ? 'payload' : 'body'} with the repository's webhookSecret`,
        };
  }
  const named = provider === 'gitea' ? 'X-Gitea-Signature' : 'X-Hub-Signature-256';
  return {
    check: 'missing',
    error: sentEmpty
      ? `the webhook has no secret (its signature headers are empty); set the webhook's secret to the repository's webhookSecret`
      : `no ${named} header: the webhook has no secret; set the webhook's secret to the repository's webhookSecret`,
  };
}

/** The header is there, but holds nothing beyond its prefix (`""`, `"sha256="`). */
function isEmptySignature(headers: Headers, name: string, prefix: string): boolean {
  const values = headers.get(name);
  return values !== undefined && values.length > 0 && values.every((v) => v.trim() === '' || v.trim() === prefix);
}

/** Undefined when absent or empty (Gitea sends empty signature headers when it has no secret). */
function singleValue(headers: Headers, name: string): string | 'repeated' | undefined {
  const values = (headers.get(name) ?? []).filter((v) => v !== '');
  if (values.length > 1) return 'repeated';
  return values[0]?.trim();
}

/** Constant time whatever the lengths: both sides are hashed to 32 bytes first. */
function equalSecrets(given: string, secret: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

function readPush(provider: WebhookProvider, body: unknown): PushEvent | { error: string } {
  if (!isRecord(body)) return { error: `the ${provider} push payload is not a JSON object` };
  const ref = body['ref'];
  const after = body['after'];
  if (typeof ref !== 'string' || ref === '') return { error: `the ${provider} push payload has no "ref"` };
  if (typeof after !== 'string' || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(after)) {
    return { error: `the ${provider} push payload has no commit id in "after"` };
  }
  const before = body['before'];
  return {
    kind: 'push',
    ref,
    ...(ref.startsWith('refs/heads/') ? { branch: ref.slice('refs/heads/'.length) } : {}),
    ...(ref.startsWith('refs/tags/') ? { tag: ref.slice('refs/tags/'.length) } : {}),
    after,
    ...(typeof before === 'string' ? { before } : {}),
    deleted: ZERO_SHA.test(after),
    ...repositoryOf(provider, body),
  };
}

/** Gitea's and GitHub's `delete` event: `{"ref": "main", "ref_type": "branch", "repository": ...}`. */
function readDelete(provider: WebhookProvider, body: unknown): DeleteEvent | { error: string } {
  if (!isRecord(body)) return { error: `the ${provider} delete payload is not a JSON object` };
  const ref = body['ref'];
  const refType = body['ref_type'];
  if (typeof ref !== 'string' || ref === '') return { error: `the ${provider} delete payload has no "ref"` };
  if (refType !== 'branch' && refType !== 'tag') return { error: `the ${provider} delete payload's "ref_type" is neither "branch" nor "tag"` };
  const name = ref.replace(refType === 'branch' ? /^refs\/heads\// : /^refs\/tags\//, '');
  return { kind: 'delete', refType, name, ...repositoryOf(provider, body) };
}

function repositoryOf(provider: WebhookProvider, body: Record<string, unknown>): { cloneUrls: string[]; repository?: string } {
  const project = provider === 'gitlab' ? record(body['project']) : undefined;
  const repo = record(body['repository']);
  const urls =
    provider === 'gitlab'
      ? [
          project?.['git_http_url'],
          project?.['git_ssh_url'],
          project?.['web_url'],
          repo?.['git_http_url'],
          repo?.['git_ssh_url'],
          repo?.['homepage'],
        ]
      : [repo?.['clone_url'], repo?.['html_url'], repo?.['ssh_url'], repo?.['git_url']];
  const cloneUrls = [...new Set(urls.filter((u): u is string => typeof u === 'string' && u !== ''))];
  const fullName = provider === 'gitlab' ? project?.['path_with_namespace'] : repo?.['full_name'];
  return { cloneUrls, ...(typeof fullName === 'string' ? { repository: fullName } : {}) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}
