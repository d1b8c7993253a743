// Preloaded (`--import`) into a sless controller that runs on the host rather than in a pod: names
// under `.svc.<cluster domain>` are resolved by the cluster DNS (the kube-dns Service, reached
// through kube-proxy like from a pod), everything else as usual. The host's resolver knows nothing
// of the cluster; a pod's resolv.conf would point at the same Service. The in-cluster controller
// (controller-deploy.test.ts) needs no such help.
import dns from 'node:dns';

const server = process.env.SLESS_TEST_CLUSTER_DNS ?? '10.0.0.10';
const suffix = `.svc.${process.env.SLESS_CLUSTER_DOMAIN ?? 'cluster.local'}`;
const resolver = new dns.Resolver({ timeout: 2_000, tries: 2 });
resolver.setServers([server]);
const hostLookup = dns.lookup;

type Callback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

function clusterLookup(hostname: string, options: unknown, callback?: unknown): void {
  const cb = (typeof options === 'function' ? options : callback) as Callback;
  const opts = (typeof options === 'object' && options !== null ? options : {}) as dns.LookupOptions;
  if (!hostname.endsWith(suffix) && !hostname.endsWith(`${suffix}.`)) {
    (hostLookup as (h: string, o: unknown, c: unknown) => void)(hostname, options, callback);
    return;
  }
  resolver.resolve4(hostname, (err, addresses) => {
    if (err || addresses.length === 0) {
      cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (cluster DNS ${server})`), { code: 'ENOTFOUND', hostname }), '');
      return;
    }
    if (opts.all) cb(null, addresses.map((address) => ({ address, family: 4 })));
    else cb(null, addresses[0]!, 4);
  });
}

(dns as { lookup: unknown }).lookup = clusterLookup;
