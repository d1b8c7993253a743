// The namespace a token's subject maps to, as the install docs write it for a reader to copy: every
// `sless-<hash>` they name for a subject is namespaceForSubject's, and the shell line they give to
// compute it (printf | sha256sum | cut) gives the same, so the namespace-per-team example works as written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';

const run = promisify(execFile);
const DOCS = ['docs/install.md', 'deploy/quickstart/README.md'] as const;

/** [subject, namespace] pairs a document states, in the forms it states them. */
function statedNamespaces(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const forms = [
    /`([\w.-]+)` →\s+`(sless-[0-9a-f]{16})`/g,
    /subject "([\w.-]+)" owns namespace (sless-[0-9a-f]{16})/g,
    /printf %s ([\w.-]+) \| sha256sum \| cut -c1-16\)"\s+# (sless-[0-9a-f]{16})/g,
    /TEAM=([\w.-]+)\nNS=.*# (sless-[0-9a-f]{16})/g,
    /--subject ([\w.-]+)\)"\s+# stderr names the namespace: (sless-[0-9a-f]{16})/g,
  ];
  for (const form of forms) for (const m of text.matchAll(form)) pairs.push([m[1]!, m[2]!]);
  return pairs;
}

describe('the namespaces the install docs name', () => {
  for (const doc of DOCS) {
    it(`${doc}: each subject's namespace is "sless-" + hex(sha256(sub))[0:16]`, async () => {
      const text = await readFile(new URL(`../../${doc}`, import.meta.url), 'utf8');
      const pairs = statedNamespaces(text);
      assert.ok(pairs.length >= 1, `${doc} states a subject's namespace`);
      for (const [subject, namespace] of pairs) assert.equal(namespace, namespaceForSubject(subject), `${doc}: ${subject}`);
    });
  }

  it('the shell line the docs give computes the same namespace', async () => {
    for (const subject of ['team-a', 'me', 'user@example.com']) {
      const { stdout } = await run('bash', ['-c', 'printf "sless-%s\\n" "$(printf %s "$1" | sha256sum | cut -c1-16)"', 'sh', subject]);
      assert.equal(stdout.trim(), namespaceForSubject(subject), subject);
    }
  });
});
