import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseWebhook, type WebhookInput, type WebhookVerdict } from './parse-webhook.ts';

const fixtures = new URL('../../test/fixtures/webhooks/', import.meta.url);
const deliveries = JSON.parse(readFileSync(new URL('deliveries.json', fixtures), 'utf8')) as Record<
  string,
  Record<string, string>
> & { secret: string };
const SECRET = deliveries.secret;

/** A recorded delivery: the payload's exact bytes and the headers the provider sent with them. */
function delivery(
  file: string,
  headerChanges: Record<string, string | string[] | undefined> = {},
): WebhookInput {
  const headers = { ...deliveries[file], ...headerChanges };
  return { headers, rawBody: readFileSync(new URL(file, fixtures)), secret: SECRET };
}

function verified(verdict: WebhookVerdict) {
  assert.equal(verdict.status, 'verified', verdict.status === 'verified' ? '' : verdict.error);
  return verdict;
}

const hex = (body: Buffer | string, secret = SECRET) =>
  createHmac('sha256', secret).update(body).digest('hex');

describe('parseWebhook: recorded deliveries from each provider', () => {
  const cases: Array<{
    file: string;
    provider: string;
    event: Record<string, unknown>;
    deliveryId: string;
  }> = [
    {
      file: 'gitea-push.json',
      provider: 'gitea',
      deliveryId: 'f6c5d4e3-b2a1-4098-8f7e-6d5c4b3a2918',
      event: {
        kind: 'push',
        ref: 'refs/heads/main',
        branch: 'main',
        after: '9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6',
        before: '4b1b2c6a0c3f1f0d9c2e8a6b7f5e4d3c2b1a0f9e',
        deleted: false,
        cloneUrls: [
          'http://127.0.0.1:3000/acme/functions.git',
          'http://127.0.0.1:3000/acme/functions',
          'git@127.0.0.1:acme/functions.git',
        ],
        repository: 'acme/functions',
      },
    },
    {
      file: 'github-push.json',
      provider: 'github',
      deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      event: {
        kind: 'push',
        ref: 'refs/heads/main',
        branch: 'main',
        after: '1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c',
        before: '0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d',
        deleted: false,
        cloneUrls: [
          'https://github.com/acme/functions.git',
          'https://github.com/acme/functions',
          'git@github.com:acme/functions.git',
          'git://github.com/acme/functions.git',
        ],
        repository: 'acme/functions',
      },
    },
    {
      file: 'github-ping.json',
      provider: 'github',
      deliveryId: 'a1b2c3d4-cc78-11e3-81ab-4c9367dc0958',
      event: { kind: 'ping' },
    },
    {
      file: 'github-branch-delete.json',
      provider: 'github',
      deliveryId: 'b2c3d4e5-cc78-11e3-81ab-4c9367dc0958',
      event: {
        kind: 'push',
        ref: 'refs/heads/feature-x',
        branch: 'feature-x',
        after: '0'.repeat(40),
        deleted: true,
      },
    },
    {
      file: 'github-tag-push.json',
      provider: 'github',
      deliveryId: 'c3d4e5f6-cc78-11e3-81ab-4c9367dc0958',
      event: { kind: 'push', ref: 'refs/tags/v1.0.0', branch: undefined, tag: 'v1.0.0', deleted: false },
    },
    {
      file: 'gitlab-push.json',
      provider: 'gitlab',
      deliveryId: '3c2b1a09-8f7e-4d6c-b5a4-9f8e7d6c5b4a',
      event: {
        kind: 'push',
        ref: 'refs/heads/main',
        branch: 'main',
        after: 'b6568db1bc1dcd7f8b4d5a946b0b91f9dacd7327',
        deleted: false,
        cloneUrls: [
          'http://127.0.0.1:8929/acme/functions.git',
          'git@127.0.0.1:acme/functions.git',
          'http://127.0.0.1:8929/acme/functions',
        ],
        repository: 'acme/functions',
      },
    },
    {
      file: 'gitlab-tag-push.json',
      provider: 'gitlab',
      deliveryId: '3c2b1a09-8f7e-4d6c-b5a4-9f8e7d6c5b4a',
      event: { kind: 'push', ref: 'refs/tags/v1.0.0', branch: undefined, tag: 'v1.0.0' },
    },
  ];
  for (const c of cases) {
    it(`${c.file}: ${c.provider}, signature valid, ${JSON.stringify(c.event).slice(0, 60)}…`, () => {
      const verdict = verified(parseWebhook(delivery(c.file)));
      assert.equal(verdict.provider, c.provider);
      assert.equal(verdict.signature, 'valid');
      assert.equal(verdict.deliveryId, c.deliveryId);
      for (const [key, value] of Object.entries(c.event)) {
        assert.deepEqual((verdict.event as unknown as Record<string, unknown>)[key], value, key);
      }
    });
  }
});

describe('parseWebhook: signatures', () => {
  const gitea = 'gitea-push.json';
  const body = readFileSync(new URL(gitea, fixtures));
  const cases: Array<{ name: string; input: WebhookInput; signature: string; status?: string }> = [
    {
      name: 'Gitea: X-Gitea-Signature wins over a wrong X-Hub-Signature-256',
      input: delivery(gitea, { 'X-Hub-Signature-256': `sha256=${'0'.repeat(64)}` }),
      signature: 'valid',
    },
    {
      name: 'Gitea: a wrong X-Gitea-Signature is not rescued by a right X-Hub-Signature-256',
      input: delivery(gitea, {
        'X-Gitea-Signature': hex(body, 'other'),
        'X-Hub-Signature-256': `sha256=${hex(body)}`,
      }),
      signature: 'invalid',
    },
    {
      name: 'Gitea: without X-Gitea-Signature the GitHub-style header is used',
      input: delivery(gitea, { 'X-Gitea-Signature': undefined, 'X-Gogs-Signature': undefined }),
      signature: 'valid',
    },
    {
      name: 'Gitea with no secret of its own sends empty signature headers: missing',
      input: delivery(gitea, { 'X-Gitea-Signature': '', 'X-Hub-Signature-256': '', 'X-Gogs-Signature': '' }),
      signature: 'missing',
    },
    {
      name: 'Gitea: an uppercase hex digest is accepted',
      input: delivery(gitea, { 'X-Gitea-Signature': hex(body).toUpperCase() }),
      signature: 'valid',
    },
    {
      name: 'Gitea: a truncated digest is invalid',
      input: delivery(gitea, { 'X-Gitea-Signature': hex(body).slice(0, 63) }),
      signature: 'invalid',
    },
    {
      name: 'the signature covers the raw bytes: re-serialised JSON does not verify',
      input: {
        ...delivery(gitea),
        rawBody: Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')))),
      },
      signature: 'invalid',
    },
    {
      name: 'a body changed by one byte does not verify',
      input: {
        ...delivery('github-push.json'),
        rawBody: Buffer.from(
          readFileSync(new URL('github-push.json', fixtures), 'utf8').replace('"main"', '"mainx"'),
        ),
      },
      signature: 'invalid',
    },
    {
      name: 'GitHub: a bare hex digest without "sha256=" is invalid',
      input: delivery('github-push.json', {
        'X-Hub-Signature-256': hex(readFileSync(new URL('github-push.json', fixtures))),
      }),
      signature: 'invalid',
    },
    {
      name: 'GitHub: no X-Hub-Signature-256 (only the SHA-1 one) is missing',
      input: delivery('github-push.json', { 'X-Hub-Signature-256': undefined }),
      signature: 'missing',
    },
    {
      name: 'GitHub: the signature header sent twice is invalid',
      input: delivery('github-push.json', {
        'X-Hub-Signature-256': [
          deliveries['github-push.json']?.['X-Hub-Signature-256'] ?? '',
          `sha256=${'1'.repeat(64)}`,
        ],
      }),
      signature: 'invalid',
    },
    {
      name: 'GitHub: signed with another secret is invalid',
      input: { ...delivery('github-push.json'), secret: 'another secret' },
      signature: 'invalid',
    },
    {
      name: 'GitLab: a different token is invalid, whatever its length',
      input: delivery('gitlab-push.json', { 'X-Gitlab-Token': 'x' }),
      signature: 'invalid',
    },
    {
      name: 'GitLab: the secret as a prefix of the token is invalid',
      input: delivery('gitlab-push.json', { 'X-Gitlab-Token': `${SECRET}!` }),
      signature: 'invalid',
    },
    {
      name: 'GitLab: no token is missing',
      input: delivery('gitlab-push.json', { 'X-Gitlab-Token': undefined }),
      signature: 'missing',
    },
    {
      name: 'a repository without a webhookSecret trusts nothing',
      input: { ...delivery('github-push.json'), secret: undefined },
      signature: 'no-secret',
    },
    {
      name: 'an empty webhookSecret trusts nothing either',
      input: { ...delivery('gitlab-push.json', { 'X-Gitlab-Token': '' }), secret: '' },
      signature: 'no-secret',
    },
    {
      name: 'no provider event header: unknown provider, rejected',
      input: { headers: { 'x-hub-signature-256': `sha256=${hex(body)}` }, rawBody: body, secret: SECRET },
      signature: 'missing',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const verdict = parseWebhook(c.input);
      assert.equal(verdict.signature, c.signature);
      assert.equal(verdict.status, c.signature === 'valid' ? 'verified' : 'rejected');
      if (verdict.status === 'rejected') assert.match(verdict.error, /\w/);
    });
  }

  it('headers are matched case-insensitively (Node lowercases them; other callers may not)', () => {
    const input = delivery('github-push.json');
    const lower = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const upper = Object.fromEntries(Object.entries(input.headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(parseWebhook({ ...input, headers: lower }).status, 'verified');
    assert.equal(parseWebhook({ ...input, headers: upper }).status, 'verified');
  });

  it('error messages never contain the secret', () => {
    const verdict = parseWebhook(delivery('gitlab-push.json', { 'X-Gitlab-Token': 'wrong' }));
    assert.equal(verdict.status, 'rejected');
    assert.ok(!JSON.stringify(verdict).includes(SECRET));
  });
});

describe('parseWebhook: bodies', () => {
  const signed = (provider: 'gitea' | 'github', event: string, raw: string): WebhookInput => {
    const sig = hex(raw);
    const headers =
      provider === 'gitea'
        ? { 'x-gitea-event': event, 'x-gitea-signature': sig }
        : { 'x-github-event': event, 'x-hub-signature-256': `sha256=${sig}` };
    return { headers, rawBody: Buffer.from(raw), secret: SECRET };
  };
  const cases: Array<{
    name: string;
    input: WebhookInput;
    status: string;
    event?: Record<string, unknown>;
    error?: RegExp;
  }> = [
    {
      name: 'a signed body that is not JSON is malformed, not a throw',
      input: signed('github', 'push', '{"ref": "refs/heads/main",'),
      status: 'malformed',
      error: /not JSON/,
    },
    {
      name: 'a signed push without "ref" is malformed',
      input: signed('gitea', 'push', JSON.stringify({ after: 'a'.repeat(40) })),
      status: 'malformed',
      error: /"ref"/,
    },
    {
      name: 'a signed push whose "after" is not a commit id is malformed',
      input: signed('gitea', 'push', JSON.stringify({ ref: 'refs/heads/main', after: 'HEAD' })),
      status: 'malformed',
      error: /"after"/,
    },
    {
      name: 'a JSON array is malformed',
      input: signed('github', 'push', '[]'),
      status: 'malformed',
      error: /not a JSON object/,
    },
    {
      name: 'SHA-256 repositories: a 64-digit "after" is a commit id',
      input: signed('gitea', 'push', JSON.stringify({ ref: 'refs/heads/main', after: 'b'.repeat(64) })),
      status: 'verified',
      event: { kind: 'push', branch: 'main', after: 'b'.repeat(64), deleted: false, cloneUrls: [] },
    },
    {
      name: 'a branch deleted in a SHA-256 repository is a deletion',
      input: signed('gitea', 'push', JSON.stringify({ ref: 'refs/heads/old', after: '0'.repeat(64) })),
      status: 'verified',
      event: { kind: 'push', branch: 'old', deleted: true },
    },
    {
      name: 'other events are verified and named, their body is not interpreted',
      input: signed('gitea', 'issues', '{"action":"opened"}'),
      status: 'verified',
      event: { kind: 'other', name: 'issues' },
    },
    {
      name: 'Gitea has no ping: a "ping" from Gitea is just another event',
      input: signed('gitea', 'ping', '{}'),
      status: 'verified',
      event: { kind: 'other', name: 'ping' },
    },
    {
      name: 'an unsigned-but-bad body is rejected before it is parsed',
      input: { ...signed('github', 'push', 'not json'), secret: 'other' },
      status: 'rejected',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const verdict = parseWebhook(c.input);
      assert.equal(verdict.status, c.status);
      if (c.error !== undefined) {
        assert.ok(verdict.status === 'malformed');
        assert.match(verdict.error, c.error);
      }
      if (c.event !== undefined) {
        assert.ok(verdict.status === 'verified');
        for (const [key, value] of Object.entries(c.event)) {
          assert.deepEqual((verdict.event as unknown as Record<string, unknown>)[key], value, key);
        }
      }
    });
  }

  it('a delivery id that is not a plain token is dropped rather than logged', () => {
    const input = signed('github', 'ping', '{}');
    const verdict = parseWebhook({ ...input, headers: { ...input.headers, 'x-github-delivery': 'a\nb' } });
    assert.equal(verdict.deliveryId, undefined);
  });
});

describe('parseWebhook: Gitea as it really sends (recorded from Gitea 1.27.3 by test/fixtures/webhooks/record-gitea.ts)', () => {
  it('a form delivery (payload=<url-encoded JSON>) is verified against the JSON Gitea signed, and read like a JSON one', () => {
    const input = delivery('gitea-form-push.txt');
    assert.match(String(input.headers['Content-Type']), /^application\/x-www-form-urlencoded/);
    assert.ok(input.rawBody.toString('latin1').startsWith('payload='));
    const verdict = verified(parseWebhook(input));
    assert.equal(verdict.provider, 'gitea');
    assert.equal(verdict.event.kind, 'push');
    assert.equal((verdict.event as { branch?: string }).branch, 'main');
  });

  it('Gitea signs the JSON inside the form, not the bytes it sends', () => {
    const input = delivery('gitea-form-push.txt');
    const json = Buffer.from(new URLSearchParams(input.rawBody.toString('utf8')).get('payload') ?? '', 'utf8');
    assert.equal(input.headers['X-Gitea-Signature'], hex(json));
    assert.notEqual(input.headers['X-Gitea-Signature'], hex(input.rawBody));
  });

  it('a form delivery whose payload was changed does not verify', () => {
    const input = delivery('gitea-form-push.txt');
    const tampered = Buffer.from(input.rawBody.toString('latin1').replace('refs%2Fheads%2Fmain', 'refs%2Fheads%2Fmainx'), 'latin1');
    assert.notDeepEqual(tampered, input.rawBody);
    assert.equal(parseWebhook({ ...input, rawBody: tampered }).signature, 'invalid');
  });

  it('a webhook without a secret (empty signature headers) is refused with what to set, not a digest-format complaint', () => {
    const input = delivery('gitea-nosecret-push.json');
    assert.equal(input.headers['X-Gitea-Signature'], '');
    assert.equal(input.headers['X-Hub-Signature'], 'sha1=');
    assert.equal(input.headers['X-Hub-Signature-256'], 'sha256=');
    const verdict = parseWebhook(input);
    assert.equal(verdict.status, 'rejected');
    assert.ok(verdict.status === 'rejected');
    assert.equal(verdict.signature, 'missing');
    assert.match(verdict.error, /the webhook has no secret/);
    assert.match(verdict.error, /set the webhook's secret to the repository's webhookSecret/);
    assert.doesNotMatch(verdict.error, /hex digits/);
  });

  it('the test delivery (POST .../hooks/{id}/tests?ref=main) is a push with an unqualified "ref": "main"', () => {
    const verdict = verified(parseWebhook(delivery('gitea-test-delivery.json')));
    assert.equal(verdict.event.kind, 'push');
    const push = verdict.event as { ref: string; branch?: string; before?: string; after: string };
    assert.equal(push.ref, 'main');
    assert.equal(push.branch, undefined);
    assert.equal(push.before, push.after);
  });

  it('deleting a branch sends only a delete event: read as a branch deletion', () => {
    const input = delivery('gitea-delete-branch.json');
    assert.equal(input.headers['X-Gitea-Event'], 'delete');
    const verdict = verified(parseWebhook(input));
    assert.deepEqual(
      { ...verdict.event, cloneUrls: undefined },
      { kind: 'delete', refType: 'branch', name: 'feature-x', cloneUrls: undefined, repository: 'sless-admin/functions' },
    );
  });
});

describe('parseWebhook: GitHub form deliveries sign the bytes sent (docs.github.com, "Validating webhook deliveries")', () => {
  // GitHub's docs: the form content type "will send the JSON payload as a form parameter called
  // payload", and the signature is an HMAC of the request body as received (their examples hash
  // the raw body). Unlike Gitea, which signs the JSON inside the form.
  const json = readFileSync(new URL('github-push.json', fixtures));
  const form = Buffer.from(`payload=${encodeURIComponent(json.toString('utf8'))}`);
  const headers = (signature: string) => ({
    ...deliveries['github-push.json'],
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Hub-Signature-256': `sha256=${signature}`,
  });

  it('signed over the form body: verified, and read from the payload field', () => {
    const verdict = verified(parseWebhook({ headers: headers(hex(form)), rawBody: form, secret: SECRET }));
    assert.equal((verdict.event as { branch?: string }).branch, 'main');
  });

  it('signed over the JSON inside instead: invalid', () => {
    assert.equal(parseWebhook({ headers: headers(hex(json)), rawBody: form, secret: SECRET }).signature, 'invalid');
  });

  it('a signed form without a payload field is malformed', () => {
    const body = Buffer.from('other=1');
    const verdict = parseWebhook({ headers: headers(hex(body)), rawBody: body, secret: SECRET });
    assert.equal(verdict.status, 'malformed');
  });

  it('GitHub without a secret sends no signature header: refused, saying the webhook has no secret', () => {
    const verdict = parseWebhook(delivery('github-push.json', { 'X-Hub-Signature-256': undefined, 'X-Hub-Signature': undefined }));
    assert.ok(verdict.status === 'rejected');
    assert.match(verdict.error, /no X-Hub-Signature-256 header: the webhook has no secret/);
  });
});
