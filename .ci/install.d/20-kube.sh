#!/usr/bin/env bash
# The real test cluster: etcd, kube-apiserver and kube-controller-manager built from the Go module
# proxy into ~/.cache/sless-test/bin (skipped when the pinned versions are already there; a fresh
# build takes the minutes noted in test/cluster/README.md), openssl for its certificates, and
# kubectl for the printer-column test.
set -euo pipefail
cd "$(dirname "$0")/../.."
apt-get install -y -qq openssl >/dev/null
if ! command -v kubectl >/dev/null 2>&1; then
  # Debian bookworm's kubectl is old (1.20) but speaks to current apiservers for get/apply.
  apt-get install -y -qq kubernetes-client >/dev/null
fi
bash test/cluster/build.sh
