// Which hosts a repository sync may connect to (issue 11 item 2: no SSRF through spec.url). Anyone who
// may create a FunctionRepository chooses its URL, and the controller runs inside the cluster: without a
// policy a tenant could make it probe loopback, the cloud metadata address (link-local), the cluster's
// Service and Pod ranges or any private network. The controller refuses those by default; the check runs
// on the addresses a name resolves to (the connection then uses exactly the checked address, so a DNS
// answer cannot change in between) and again on every redirect, which by default must stay on the same
// host. An allowlist admits named hosts or address ranges (an in-cluster Gitea); `sless dev`, a
// single-user tool, uses `anyTarget()` and keeps reaching local git servers.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Why a target was refused: a category, never the address or anything the target said. */
export class TargetRefusedError extends Error {
  readonly code = 'SLESS_TARGET_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/** Ranges no repository URL may reach unless allowed: [name, address, prefix, family]. */
const DENIED_RANGES: ReadonlyArray<readonly [string, string, number, 'ipv4' | 'ipv6']> = [
  ['an unspecified address', '0.0.0.0', 8, 'ipv4'],
  ['a loopback address', '127.0.0.0', 8, 'ipv4'],
  ['a private address', '10.0.0.0', 8, 'ipv4'],
  ['a shared (carrier-grade NAT) address', '100.64.0.0', 10, 'ipv4'],
  ['a link-local (cloud metadata) address', '169.254.0.0', 16, 'ipv4'],
  ['a private address', '172.16.0.0', 12, 'ipv4'],
  ['a reserved address', '192.0.0.0', 24, 'ipv4'],
  ['a private address', '192.168.0.0', 16, 'ipv4'],
  ['a benchmarking address', '198.18.0.0', 15, 'ipv4'],
  ['a multicast or reserved address', '224.0.0.0', 3, 'ipv4'],
  ['an unspecified address', '::', 128, 'ipv6'],
  ['a loopback address', '::1', 128, 'ipv6'],
  ['a NAT64 address', '64:ff9b::', 96, 'ipv6'],
  ['a private (unique local) address', 'fc00::', 7, 'ipv6'],
  ['a link-local address', 'fe80::', 10, 'ipv6'],
  ['a multicast address', 'ff00::', 8, 'ipv6'],
];

export interface TargetPolicyOptions {
  /**
   * Hosts or ranges that are reachable even though they are internal: a host name (`gitea.gitea.svc`,
   * matched case-insensitively, optionally with `:port`), an address, or a CIDR range (`10.0.12.0/24`).
   */
  readonly allow?: readonly string[];
  /** More ranges to refuse, e.g. the cluster's Service and Pod CIDRs when they are not private ranges. */
  readonly deny?: readonly string[];
  /** Follow redirects to another host (still checked like the first); default false. */
  readonly crossHostRedirects?: boolean;
  /** Default: node's dns.lookup (tests inject their own). */
  readonly lookup?: typeof dnsLookup;
}

interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** `10.0.0.0/8`, `fd00::/8` or a bare address; throws with the entry named when it is neither. */
export function parseCidr(text: string): Cidr {
  const [address = '', prefixText] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0) throw new Error(`"${text}" is not an IP address or CIDR range`);
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max) throw new Error(`"${text}": the prefix length must be 0..${max}`);
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

function isCidrLike(entry: string): boolean {
  const [address = ''] = entry.split('/');
  return isIP(address) !== 0;
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

/** Host names compare without brackets, case and trailing dot. */
function normalHost(host: string): string {
  return host.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

export class TargetPolicy {
  private readonly any: boolean;
  private readonly allowedHosts = new Set<string>();
  private readonly allowedRanges = new BlockList();
  private readonly deniedExtra = new BlockList();
  private readonly denied: ReadonlyArray<{ readonly why: string; readonly list: BlockList }>;
  readonly crossHostRedirects: boolean;
  private readonly resolve: typeof dnsLookup;

  private constructor(options: TargetPolicyOptions & { any?: boolean }) {
    this.any = options.any === true;
    this.crossHostRedirects = options.crossHostRedirects ?? this.any;
    this.resolve = options.lookup ?? dnsLookup;
    for (const raw of options.allow ?? []) {
      const entry = raw.trim();
      if (!entry) continue;
      if (entry === '*') throw new Error('"*" is not an allowlist entry: name the hosts or ranges to admit');
      if (isCidrLike(entry)) {
        const c = parseCidr(entry);
        this.allowedRanges.addSubnet(c.address, c.prefix, c.family);
      } else {
        this.allowedHosts.add(normalHost(entry));
      }
    }
    for (const entry of options.deny ?? []) {
      if (!entry.trim()) continue;
      const c = parseCidr(entry);
      this.deniedExtra.addSubnet(c.address, c.prefix, c.family);
    }
    this.denied = [
      ...DENIED_RANGES.map(([why, address, prefix, family]) => {
        const list = new BlockList();
        list.addSubnet(address, prefix, family);
        return { why, list };
      }),
      { why: 'an address in a range the operator refused (cluster Service/Pod range)', list: this.deniedExtra },
    ];
  }

  /** Public addresses only, plus what `allow` names (the controller's policy). */
  static publicOnly(options: TargetPolicyOptions = {}): TargetPolicy {
    return new TargetPolicy(options);
  }

  /** Every target, redirects included (`sless dev` and tests against a local git server). */
  static anyTarget(options: Pick<TargetPolicyOptions, 'lookup'> = {}): TargetPolicy {
    return new TargetPolicy({ ...options, any: true });
  }

  private hostAllowed(host: string, port: string): boolean {
    const h = normalHost(host);
    return this.allowedHosts.has(h) || (port !== '' && this.allowedHosts.has(`${h}:${port}`));
  }

  /** Why `address` may not be reached, or undefined when it may. */
  refusalOf(address: string): string | undefined {
    if (this.any) return undefined;
    const family = familyOf(address);
    if (this.allowedRanges.check(address, family)) return undefined;
    return this.denied.find((d) => d.list.check(address, family))?.why;
  }

  /**
   * Checks a URL before a request: the scheme, and the host when it is an address literal (a connection
   * to a literal never asks the resolver, so `lookup` below would not see it). Throws TargetRefusedError.
   */
  checkUrl(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TargetRefusedError(`only http(s) git URLs are fetched, not ${url.protocol}`);
    if (this.any || this.hostAllowed(url.hostname, url.port)) return;
    const host = normalHost(url.hostname);
    if (isIP(host) !== 0) {
      const why = this.refusalOf(host);
      if (why) throw new TargetRefusedError(`${url.host} is ${why}; repositories are fetched only from public addresses unless the operator allows the host (SLESS_GIT_ALLOWED_HOSTS)`);
    } else if (host === 'localhost' || host.endsWith('.localhost')) {
      throw new TargetRefusedError(`${url.host} is a loopback name; repositories are fetched only from public addresses unless the operator allows the host (SLESS_GIT_ALLOWED_HOSTS)`);
    }
  }

  /** Checks a redirect from `from` to `to`: same host unless crossHostRedirects, never https → http. */
  checkRedirect(from: URL, to: URL): void {
    if (from.protocol === 'https:' && to.protocol !== 'https:') throw new TargetRefusedError(`${from.host} redirected from https to ${to.protocol}; not followed`);
    if (!this.crossHostRedirects && to.host !== from.host) {
      throw new TargetRefusedError(`${from.host} redirected to another host (${to.host}); redirects are followed only on the same host`);
    }
    this.checkUrl(to);
  }

  /**
   * A `lookup` for net/tls.connect: resolves the name, refuses when any of its addresses is refused (a
   * name with one internal address is as good as an internal name), and hands the socket exactly the
   * addresses it checked.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      if (!this.any && !this.hostAllowed(hostname, '')) {
        const why = list.map((a) => this.refusalOf(a.address)).find(Boolean);
        if (why) {
          const refusal = new TargetRefusedError(
            `${hostname} resolves to ${why}; repositories are fetched only from public addresses unless the operator allows the host (SLESS_GIT_ALLOWED_HOSTS)`,
          );
          return callback(refusal as unknown as NodeJS.ErrnoException, '', 0);
        }
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
