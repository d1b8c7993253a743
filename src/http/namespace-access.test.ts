// The namespace rule of /v1 and the console (assertMayAct), pure: own namespace, the admin claim, the
// platform's namespaces, and a tenant's previews (`<own>-pr-<N>`: read and invoke, never write).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Caller } from '../auth/token-verifier.ts';
import { actionOfMethod, assertMayAct, type NamespaceAction } from './namespace-access.ts';
import { HttpError } from './errors.ts';

const OWN = 'sless-ff8d9819fc0e12bf';
const tenant: Caller = { subject: 'alice@example.com', namespace: OWN, admin: false };
const admin: Caller = { ...tenant, admin: true };
const ACTIONS: NamespaceAction[] = ['read', 'invoke', 'write'];

/** The refusal's message, or 'ok'. */
function decide(caller: Caller, namespace: string, action: NamespaceAction): string {
  try {
    assertMayAct(caller, namespace, action, { system: 'sless-system', build: 'sless-builds' });
    return 'ok';
  } catch (err) {
    assert.ok(err instanceof HttpError, String(err));
    return `${err.code}: ${err.message}`;
  }
}

describe('a tenant’s token', () => {
  it('does anything in its own namespace', () => {
    for (const action of ACTIONS) assert.equal(decide(tenant, OWN, action), 'ok');
  });

  it('reads its own namespace’s previews and calls their functions', () => {
    for (const ns of [`${OWN}-pr-1`, `${OWN}-pr-3`, `${OWN}-pr-12345`]) {
      assert.equal(decide(tenant, ns, 'read'), 'ok', ns);
      assert.equal(decide(tenant, ns, 'invoke'), 'ok', ns);
    }
  });

  it('changes nothing in them, and says a preview is managed from its pull request', () => {
    assert.equal(
      decide(tenant, `${OWN}-pr-3`, 'write'),
      `forbidden: namespace ${OWN}-pr-3 is the preview of pull request #3 of ${OWN}: this token may read it, ` +
        'but a preview is managed from its pull request (push to its branch, close it); only an admin token changes it here',
    );
  });

  const notOwn: Array<[string, string]> = [
    ['another namespace', 'sless-0000000000000000'],
    ['another namespace’s preview', 'sless-0000000000000000-pr-3'],
    ['a preview of a preview', `${OWN}-pr-3-pr-4`],
    ['a longer name that starts with its own', `${OWN}0-pr-3`],
    ['a name that ends with its own', `x${OWN}-pr-3`],
    ['pull request 0', `${OWN}-pr-0`],
    ['a number with a leading zero', `${OWN}-pr-03`],
    ['a suffix that is not a number', `${OWN}-pr-x`],
    ['a name that ends in -pr', `${OWN}-pr`],
  ];
  for (const [what, ns] of notOwn) {
    it(`is refused ${what} (${ns}) for every action, as not its own`, () => {
      for (const action of ACTIONS) assert.equal(decide(tenant, ns, action), `forbidden: this token owns namespace ${OWN}, not ${ns}`);
    });
  }
});

describe('an admin token', () => {
  it('does anything in every tenant namespace and every preview', () => {
    for (const ns of [OWN, `${OWN}-pr-3`, 'team-a-pr-7', `${OWN}-pr-3-pr-4`]) {
      for (const action of ACTIONS) assert.equal(decide(admin, ns, action), 'ok', `${action} ${ns}`);
    }
  });
});

describe('every token', () => {
  it('is refused the platform’s namespaces, and a preview-shaped name of one', () => {
    assert.match(decide(admin, 'sless-system', 'read'), /^forbidden: .*not even an admin token/);
    assert.match(decide(admin, 'kube-system', 'read'), /^forbidden: /);
    assert.match(decide(tenant, 'sless-system-pr-1', 'read'), /^forbidden: this token owns namespace/);
  });

  it('gets 400 for a name that is not a DNS label', () => {
    assert.match(decide(tenant, `${OWN}-PR-3`, 'read'), /^invalid_name: /);
    assert.match(decide(admin, 'a'.repeat(64), 'read'), /^invalid_name: /);
  });
});

describe('the action of a /v1 request', () => {
  it('is read for GET and HEAD, write for every other method', () => {
    assert.deepEqual(
      ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].map(actionOfMethod),
      ['read', 'read', 'write', 'write', 'write', 'write', 'write'],
    );
  });
});
