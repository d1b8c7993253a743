// The real node's configuration decisions, checked without running anything.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { chainCleanupScript } from './host.ts';
import { NODE_NETWORK, SERVICE_GUARD_CHAIN, cniConfList, containerdConfig, kubeletConfig, registryConfig, serviceGuardScript, type NodePaths } from './plan.ts';

const paths: NodePaths = {
  dir: '/tmp/n',
  certDir: '/tmp/n/certs',
  kubeconfig: '/tmp/n/kubeconfig',
  containerdRoot: '/tmp/n/containerd',
  containerdState: '/run/sless-test-node/containerd',
  containerdSocket: '/run/sless-test-node/containerd.sock',
  cniConfDir: '/tmp/n/cni/net.d',
  cniDataDir: '/tmp/n/cni/ipam',
  kubeletRoot: '/tmp/n/kubelet',
  registryDir: '/tmp/n/registry',
  cgroupRoot: '/sless-node',
};

describe('real node configuration', () => {
  it('runs the kubelet on cgroup v1 with cgroupfs, without lowering oom_score_adj or checking swap', () => {
    const config = parse(kubeletConfig(paths, { port: 10250, healthzPort: 10248 })) as Record<string, unknown>;
    assert.equal(config.failCgroupV1, false);
    assert.equal(config.cgroupDriver, 'cgroupfs');
    assert.equal(config.cgroupRoot, '/sless-node');
    assert.equal(config.oomScoreAdj, 0);
    assert.equal(config.failSwapOn, false);
    assert.deepEqual(config.clusterDNS, [NODE_NETWORK.dnsServiceIP]);
    assert.equal(config.address, NODE_NETWORK.gateway);
  });

  it('keeps containerd from lowering oom_score_adj and its state out of the host-wide paths', () => {
    const toml = containerdConfig(paths, 'sless.test/pause:1');
    assert.match(toml, /restrict_oom_score_adj = true/);
    assert.match(toml, /netns_mounts_under_state_dir = true/);
    assert.match(toml, /sandbox_image = "sless.test\/pause:1"/);
    assert.match(toml, /state = "\/run\/sless-test-node\/containerd"/);
  });

  it('gives pods the bridge gateway, NAT beyond the node and host-local addresses in the run folder', () => {
    const list = JSON.parse(cniConfList(paths)) as { plugins: Array<Record<string, unknown>> };
    const bridge = list.plugins[0]!;
    assert.equal(bridge.bridge, NODE_NETWORK.bridge);
    assert.equal(bridge.ipMasq, true);
    assert.deepEqual((bridge.ipam as { dataDir: string }).dataDir, paths.cniDataDir);
    assert.equal(list.plugins[1]!.type, 'portmap');
  });

  it('runs a second registry, in its own folder, that requires htpasswd Basic auth', () => {
    const open = parse(registryConfig(paths, 5000)) as Record<string, Record<string, unknown>>;
    assert.equal(open.auth, undefined);
    const auth = parse(registryConfig(paths, 5001, { rootDirectory: '/tmp/n/registry-auth', htpasswdPath: '/tmp/n/htpasswd' })) as typeof open;
    assert.deepEqual(auth.auth, { htpasswd: { realm: 'sless-test', path: '/tmp/n/htpasswd' } });
    assert.deepEqual(auth.storage!.filesystem, { rootdirectory: '/tmp/n/registry-auth' });
    assert.deepEqual(auth.http, { addr: `${NODE_NETWORK.gateway}:5001` });
  });
});

describe('iptables cleanup', () => {
  const saved = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':POSTROUTING ACCEPT [0:0]',
    ':KUBE-SERVICES - [0:0]',
    ':CNI-618e - [0:0]',
    ':OTHER - [0:0]',
    '-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
    '-A POSTROUTING -s 10.244.0.2/32 -m comment --comment "name: \\"sless\\"" -j CNI-618e',
    '-A POSTROUTING -j OTHER',
    '-A CNI-618e -j MASQUERADE',
    'COMMIT',
  ].join('\n');

  it('deletes the jumps into the node chains, then flushes and removes them, and nothing else', () => {
    assert.equal(
      chainCleanupScript('nat', saved),
      [
        '*nat',
        '-D PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
        '-D POSTROUTING -s 10.244.0.2/32 -m comment --comment "name: \\"sless\\"" -j CNI-618e',
        '-F KUBE-SERVICES',
        '-F CNI-618e',
        '-X KUBE-SERVICES',
        '-X CNI-618e',
        'COMMIT',
        '',
      ].join('\n'),
    );
  });

  it('has nothing to do in a table without node chains', () => {
    assert.equal(chainCleanupScript('filter', '*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n'), '');
  });
});

describe('the Service subnet guard', () => {
  const script = serviceGuardScript();
  const lines = script.split('\n');

  it('refuses, from the host (OUTPUT) and from pods (FORWARD), what still goes to a Service address after kube-proxy\'s DNAT', () => {
    assert.equal(lines[0], '*filter');
    assert.ok(lines.includes(`:${SERVICE_GUARD_CHAIN} - [0:0]`));
    assert.ok(lines.includes(`-A ${SERVICE_GUARD_CHAIN} -j REJECT --reject-with icmp-port-unreachable`));
    for (const chain of ['OUTPUT', 'FORWARD']) {
      const jump = lines.find((l) => l.startsWith(`-I ${chain} 1 `));
      assert.ok(jump, `a jump from ${chain}`);
      assert.match(jump, new RegExp(`-d ${NODE_NETWORK.serviceSubnet.replace('.', '\\.')} .*-j ${SERVICE_GUARD_CHAIN}$`));
    }
    assert.equal(lines.at(-2), 'COMMIT');
  });

  it('is undone by the node teardown', () => {
    const saved = ['*filter', ':OUTPUT ACCEPT [0:0]', ':FORWARD ACCEPT [0:0]', ...lines.slice(1, -2).map((l) => l.replace(/^-I (\S+) 1 /, '-A $1 ')), 'COMMIT'].join('\n');
    const cleanup = chainCleanupScript('filter', saved).split('\n');
    assert.equal(cleanup.filter((l) => l.startsWith('-D OUTPUT ') || l.startsWith('-D FORWARD ')).length, 2);
    assert.ok(cleanup.includes(`-X ${SERVICE_GUARD_CHAIN}`));
  });
});
