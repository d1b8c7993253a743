#!/usr/bin/env bash
# The real node (test/cluster/node/, `npm run test:node`): Debian's containerd 1.6, runc, CNI
# plugins (bridge, host-local, loopback, portmap), the image registry (distribution 2.8), umoci and
# skopeo (to pack the pause and busybox images), gcc (the pause binary), busybox-static, iptables,
# iproute2 and flock; then CoreDNS, crictl and the two images, built and cached by pinned version
# (test/cluster/versions.env) by test/cluster/node/build.sh. The kubelet, kube-scheduler,
# kube-proxy and kubectl come from test/cluster/build.sh (20-kube.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
apt-get install -y -qq containerd runc containernetworking-plugins docker-registry umoci skopeo \
  gcc libc6-dev busybox-static iptables iproute2 util-linux >/dev/null
# Debian starts the registry as a service where services run; the tests start their own.
if command -v service >/dev/null 2>&1; then
  service docker-registry stop >/dev/null 2>&1 || true
  service containerd stop >/dev/null 2>&1 || true
fi
bash test/cluster/node/build.sh
# The python function of test/e2e-node installs its requirements.txt from a local wheel folder the
# test serves on the node's bridge address (pods have no CA for this machine's HTTPS proxy).
WHEELS="${SLESS_TEST_CACHE:-$HOME/.cache/sless-test}/wheels"
mkdir -p "$WHEELS"
[ -s "$WHEELS/humanize-4.9.0-py3-none-any.whl" ] ||
  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation py --platform any humanize==4.9.0 -d "$WHEELS"
