#!/usr/bin/env bash
# Builds the test cluster's binaries from the Go module proxy (no download site is reachable here):
#   ~/.cache/sless-test/bin/kube-apiserver-<KUBE_VERSION>
#   ~/.cache/sless-test/bin/kube-controller-manager-<KUBE_VERSION>
#   ~/.cache/sless-test/bin/etcd-<ETCD_VERSION>
# Idempotent: a binary that already exists for the pinned version is not rebuilt, so bumping a
# version below is what triggers a rebuild. Each build happens in a throwaway Go module under
# ~/.cache/sless-test/src/ because k8s.io/kubernetes pins its staging modules at v0.0.0 with local
# replaces, which a consumer has to redo with the published v0.Y.Z tags.
set -euo pipefail

# shellcheck source=versions.env
. "$(dirname "$0")/versions.env"
CACHE="${SLESS_TEST_CACHE:-$HOME/.cache/sless-test}"
BIN="$CACHE/bin"
SRC="$CACHE/src"
mkdir -p "$BIN" "$SRC"

export GOFLAGS="-mod=mod"
export CGO_ENABLED=0
# The binaries only run on this machine, so the local toolchain is good enough even when a
# dependency's go.mod suggests a newer patch release.
export GOTOOLCHAIN=local

# The staging modules of k8s.io/kubernetes v1.35 (its go.mod's `=> ./staging/src/...` replaces).
STAGING=(
  api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
  cri-client csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms
  kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
  mount-utils pod-security-admission sample-apiserver sample-cli-plugin sample-controller
)

minutes_since() { echo "$(( ($(date +%s) - $1 + 30) / 60 ))"; }

# The control plane, and what a real node needs (kubelet, kube-proxy, kube-scheduler) plus kubectl:
# one `go build` so the shared packages compile once.
KUBE_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

build_kube() {
  local missing=0 c
  for c in "${KUBE_COMMANDS[@]}"; do [ -x "$BIN/$c-$KUBE_VERSION" ] || missing=1; done
  if [ "$missing" = 0 ]; then
    echo "kube $KUBE_VERSION: cached (${KUBE_COMMANDS[*]} in $BIN)"
    return
  fi
  local t0; t0=$(date +%s)
  local dir="$SRC/kube-$KUBE_VERSION"
  mkdir -p "$dir"
  local minor="${KUBE_VERSION#*.}"
  {
    echo "module sless-test/kube"
    echo
    echo "go 1.25.0"
    echo
    echo "require k8s.io/kubernetes v$KUBE_VERSION"
    echo
    echo "replace ("
    for m in "${STAGING[@]}"; do echo "	k8s.io/$m => k8s.io/$m v0.$minor"; done
    echo ")"
  } > "$dir/go.mod"
  echo "kube $KUBE_VERSION: building ${KUBE_COMMANDS[*]} in $dir ..."
  # One `go build` for both commands so the shared packages are compiled once and in parallel.
  # The -X flags make /version report the real release instead of v0.0.0-master.
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=${KUBE_VERSION%%.*} -X k8s.io/component-base/version.gitMinor=${minor%%.*}"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  local pkgs=()
  for c in "${KUBE_COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  (cd "$dir" && go build -trimpath -ldflags="$ldflags" -o "$dir/out/" "${pkgs[@]}")
  for c in "${KUBE_COMMANDS[@]}"; do mv "$dir/out/$c" "$BIN/$c-$KUBE_VERSION"; done
  echo "kube $KUBE_VERSION: built in $(minutes_since "$t0") min"
}

build_etcd() {
  local etcd="$BIN/etcd-$ETCD_VERSION"
  if [ -x "$etcd" ]; then
    echo "etcd $ETCD_VERSION: cached ($etcd)"
    return
  fi
  local t0; t0=$(date +%s)
  local dir="$SRC/etcd-$ETCD_VERSION"
  mkdir -p "$dir"
  # etcd's own main module carries local replaces too; a three-line main around etcdmain avoids them.
  cat > "$dir/go.mod" <<EOF
module sless-test/etcd

go 1.26.0

require go.etcd.io/etcd/server/v3 v$ETCD_VERSION
EOF
  cat > "$dir/main.go" <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  echo "etcd $ETCD_VERSION: building in $dir ..."
  (cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$etcd.tmp" . && mv "$etcd.tmp" "$etcd")
  echo "etcd $ETCD_VERSION: built in $(minutes_since "$t0") min"
}

case "${1:-all}" in
  etcd) build_etcd ;;
  kube) build_kube ;;
  all) build_etcd; build_kube ;;
  *) echo "usage: $0 [all|etcd|kube]" >&2; exit 2 ;;
esac
