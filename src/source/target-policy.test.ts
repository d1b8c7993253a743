import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, it } from 'node:test';
import { parseCidr, TargetPolicy, TargetRefusedError } from './target-policy.ts';

/** A resolver over a fixed table, the way dns.lookup answers with `all: true`. */
function fakeDns(table: Record<string, string[]>) {
  return ((host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => {
    const found = table[host];
    if (!found) return cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), []);
    cb(
      null,
      found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as unknown as typeof import('node:dns').lookup;
}

function resolveWith(policy: TargetPolicy, host: string, all = false): Promise<unknown> {
  return new Promise((resolve, reject) => {
    policy.lookup(host, { all }, (err, address) => (err ? reject(err) : resolve(address)));
  });
}

describe('TargetPolicy: what a repository URL may reach', () => {
  const policy = TargetPolicy.publicOnly();

  it('refuses loopback, link-local (metadata), private, shared and unique-local addresses, IPv4-mapped forms too', () => {
    for (const address of ['127.0.0.1', '127.8.9.10', '169.254.169.254', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:169.254.169.254']) {
      assert.ok(policy.refusalOf(address), `${address} must be refused`);
    }
    assert.match(policy.refusalOf('169.254.169.254') ?? '', /link-local \(cloud metadata\)/);
    assert.match(policy.refusalOf('127.0.0.1') ?? '', /loopback/);
  });

  it('lets public addresses through', () => {
    for (const address of ['140.82.112.3', '8.8.8.8', '172.32.0.1', '2606:4700::1111']) assert.equal(policy.refusalOf(address), undefined, address);
  });

  it('checks address literals and loopback names in the URL itself (a literal never reaches the resolver)', () => {
    assert.throws(() => policy.checkUrl(new URL('http://127.0.0.1:3000/x.git')), TargetRefusedError);
    assert.throws(() => policy.checkUrl(new URL('http://[::1]/x.git')), TargetRefusedError);
    assert.throws(() => policy.checkUrl(new URL('http://169.254.169.254/latest/meta-data/')), /link-local/);
    assert.throws(() => policy.checkUrl(new URL('http://localhost:8080/x.git')), /loopback name/);
    assert.throws(() => policy.checkUrl(new URL('file:///etc/passwd')), /only http\(s\)/);
    assert.doesNotThrow(() => policy.checkUrl(new URL('https://github.com/a/b.git')));
  });

  it('refuses a name when any address it resolves to is refused, and hands out only checked addresses', async () => {
    const p = TargetPolicy.publicOnly({ lookup: fakeDns({ 'git.example.com': ['140.82.112.3'], 'rebind.example.com': ['140.82.112.3', '10.0.0.7'], 'meta.example.com': ['169.254.169.254'] }) });
    assert.equal(await resolveWith(p, 'git.example.com'), '140.82.112.3');
    await assert.rejects(resolveWith(p, 'rebind.example.com'), (err: Error) => err instanceof TargetRefusedError && /resolves to a private address/.test(err.message));
    await assert.rejects(resolveWith(p, 'meta.example.com'), /resolves to a link-local \(cloud metadata\) address/);
  });

  it('admits the hosts and ranges of the allowlist (an in-cluster Gitea) and nothing next to them', async () => {
    const p = TargetPolicy.publicOnly({
      allow: ['gitea.gitea.svc.cluster.local', '10.96.7.0/24', 'git.corp:3000'],
      lookup: fakeDns({ 'gitea.gitea.svc.cluster.local': ['10.96.0.12'], 'other.svc.cluster.local': ['10.96.0.13'], 'inrange.corp': ['10.96.7.9'] }),
    });
    assert.equal(await resolveWith(p, 'gitea.gitea.svc.cluster.local'), '10.96.0.12');
    assert.equal(await resolveWith(p, 'inrange.corp'), '10.96.7.9');
    await assert.rejects(resolveWith(p, 'other.svc.cluster.local'), TargetRefusedError);
    assert.doesNotThrow(() => p.checkUrl(new URL('http://10.96.7.200/x.git')));
    assert.throws(() => p.checkUrl(new URL('http://10.96.8.1/x.git')), TargetRefusedError);
    assert.doesNotThrow(() => p.checkUrl(new URL('http://git.corp:3000/x.git')));
  });

  it('refuses the extra ranges the operator names (cluster Service/Pod CIDRs outside private space)', () => {
    const p = TargetPolicy.publicOnly({ deny: ['203.0.113.0/24'] });
    assert.match(p.refusalOf('203.0.113.9') ?? '', /operator refused/);
    assert.equal(p.refusalOf('203.0.114.9'), undefined);
  });

  it('keeps redirects on the same host and scheme by default; others are checked like the first URL', () => {
    const from = new URL('https://git.example.com/a.git/info/refs');
    assert.doesNotThrow(() => policy.checkRedirect(from, new URL('https://git.example.com/b.git/info/refs')));
    assert.throws(() => policy.checkRedirect(from, new URL('https://elsewhere.example.com/a.git')), /another host/);
    assert.throws(() => policy.checkRedirect(from, new URL('http://git.example.com/a.git')), /from https to http/);
    const cross = TargetPolicy.publicOnly({ crossHostRedirects: true });
    assert.doesNotThrow(() => cross.checkRedirect(from, new URL('https://elsewhere.example.com/a.git')));
    assert.throws(() => cross.checkRedirect(from, new URL('https://169.254.169.254/latest')), /link-local/);
  });

  it('anyTarget (sless dev) reaches everything', async () => {
    const dev = TargetPolicy.anyTarget({ lookup: fakeDns({ localhost: ['127.0.0.1'] }) });
    assert.doesNotThrow(() => dev.checkUrl(new URL('http://127.0.0.1:3000/x.git')));
    assert.equal(await resolveWith(dev, 'localhost'), '127.0.0.1');
    assert.doesNotThrow(() => dev.checkRedirect(new URL('http://a/'), new URL('http://b/')));
  });

  it('says which allowlist or deny entry is malformed', () => {
    assert.throws(() => TargetPolicy.publicOnly({ deny: ['10.0.0.0/40'] }), /prefix length must be 0..32/);
    assert.throws(() => TargetPolicy.publicOnly({ deny: ['gitea'] }), /"gitea" is not an IP address or CIDR range/);
    assert.throws(() => TargetPolicy.publicOnly({ allow: ['*'] }), /name the hosts/);
    assert.deepEqual(parseCidr('fd00::/8'), { address: 'fd00::', prefix: 8, family: 'ipv6' });
  });
});
