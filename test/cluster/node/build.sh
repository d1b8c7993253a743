#!/usr/bin/env bash
# Builds what the real node needs beyond the Kubernetes binaries (test/cluster/build.sh) and
# Debian's packages (containerd, runc, CNI plugins, docker-registry, umoci, skopeo):
#   ~/.cache/sless-test/bin/coredns-<COREDNS_VERSION>   a CoreDNS with only the plugins the test
#                                                        Corefile uses (kubernetes, forward, ...)
#   ~/.cache/sless-test/bin/crictl-<CRICTL_VERSION>      tears pod sandboxes down at node stop
#   ~/.cache/sless-test/images/pause-<NODE_IMAGES_VERSION>.tar    docker-archive, sless.test/pause
#   ~/.cache/sless-test/images/busybox-<NODE_IMAGES_VERSION>.tar  docker-archive, sless.test/busybox
# No image registry is reachable here: the pause image is a 20-line C program built with
# `gcc -Os -static`, busybox comes from Debian's busybox-static; umoci packs them as OCI images and
# skopeo turns them into archives that `ctr images import` loads. Idempotent: what exists for the
# pinned version is kept, so bumping a version in versions.env is what rebuilds it.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../versions.env
. "$here/../versions.env"
CACHE="${SLESS_TEST_CACHE:-$HOME/.cache/sless-test}"
BIN="$CACHE/bin"
SRC="$CACHE/src"
IMAGES="$CACHE/images"
mkdir -p "$BIN" "$SRC" "$IMAGES"
export GOFLAGS="-mod=mod" CGO_ENABLED=0 GOTOOLCHAIN=local

build_coredns() {
  local out="$BIN/coredns-$COREDNS_VERSION"
  if [ -x "$out" ]; then echo "coredns $COREDNS_VERSION: cached ($out)"; return; fi
  local t0 dir; t0=$(date +%s); dir="$SRC/coredns-$COREDNS_VERSION"
  mkdir -p "$dir"
  cat > "$dir/go.mod" <<EOF
module sless-test/coredns

go 1.24.0

require github.com/coredns/coredns v$COREDNS_VERSION
EOF
  # coremain + the plugins of node/coredns.ts's Corefile only: the full plugin set drags in the
  # cloud SDKs (Azure, AWS, ...) and triples the build.
  cat > "$dir/main.go" <<'EOF'
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
)

func main() { coremain.Run() }
EOF
  echo "coredns $COREDNS_VERSION: building in $dir ..."
  (cd "$dir" && go mod tidy >/dev/null 2>&1 || true; cd "$dir" && go build -trimpath -ldflags="-s -w" -o "$out.tmp" . && mv "$out.tmp" "$out")
  echo "coredns $COREDNS_VERSION: built in $(( $(date +%s) - t0 ))s"
}

build_crictl() {
  local out="$BIN/crictl-$CRICTL_VERSION"
  if [ -x "$out" ]; then echo "crictl $CRICTL_VERSION: cached ($out)"; return; fi
  local t0 tmp; t0=$(date +%s); tmp=$(mktemp -d)
  echo "crictl $CRICTL_VERSION: building ..."
  GOBIN="$tmp" go install -trimpath -ldflags="-s -w" "sigs.k8s.io/cri-tools/cmd/crictl@v$CRICTL_VERSION"
  mv "$tmp/crictl" "$out"
  rm -rf "$tmp"
  echo "crictl $CRICTL_VERSION: built in $(( $(date +%s) - t0 ))s"
}

# pack_image NAME ROOTFS_FILLER ENTRYPOINT...: an OCI image with one layer, as a docker-archive
# named sless.test/NAME:NODE_IMAGES_VERSION.
pack_image() {
  local name="$1" filler="$2"; shift 2
  local out="$IMAGES/$name-$NODE_IMAGES_VERSION.tar"
  if [ -s "$out" ]; then echo "image $name: cached ($out)"; return; fi
  local tmp; tmp=$(mktemp -d)
  umoci init --layout "$tmp/oci"
  umoci new --image "$tmp/oci:img"
  umoci unpack --image "$tmp/oci:img" "$tmp/bundle" >/dev/null
  "$filler" "$tmp/bundle/rootfs"
  umoci repack --image "$tmp/oci:img" "$tmp/bundle" >/dev/null
  local args=() e
  for e in "$@"; do args+=(--config.entrypoint "$e"); done
  umoci config --image "$tmp/oci:img" --os linux --architecture amd64 "${args[@]}"
  skopeo copy --quiet "oci:$tmp/oci:img" "docker-archive:$out.tmp:sless.test/$name:$NODE_IMAGES_VERSION"
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
  echo "image $name: built ($out)"
}

fill_pause() {
  local rootfs="$1" src; src=$(mktemp -d)
  # The sandbox's pid 1: sleeps, reaps adopted children, exits on SIGINT/SIGTERM.
  cat > "$src/pause.c" <<'EOF'
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void down(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, NULL, WNOHANG) > 0) {} }

int main(void) {
  struct sigaction down_action = {.sa_handler = down};
  struct sigaction reap_action = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &down_action, NULL);
  sigaction(SIGTERM, &down_action, NULL);
  sigaction(SIGCHLD, &reap_action, NULL);
  for (;;) pause();
}
EOF
  gcc -Os -static -o "$rootfs/pause" "$src/pause.c"
  strip "$rootfs/pause"
  rm -rf "$src"
}

fill_busybox() {
  local rootfs="$1" applet
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc" "$rootfs/www"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in $(/bin/busybox --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$rootfs/bin/$applet"
  done
  echo 'root:x:0:0:root:/root:/bin/sh' > "$rootfs/etc/passwd"
  echo 'root:x:0:' > "$rootfs/etc/group"
  echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >> "$rootfs/etc/passwd"
  echo 'nogroup:x:65534:' >> "$rootfs/etc/group"
}

case "${1:-all}" in
  coredns) build_coredns ;;
  crictl) build_crictl ;;
  images) pack_image pause fill_pause /pause; pack_image busybox fill_busybox /bin/sh ;;
  all)
    pack_image pause fill_pause /pause
    pack_image busybox fill_busybox /bin/sh
    build_crictl
    build_coredns
    ;;
  *) echo "usage: $0 [all|coredns|crictl|images]" >&2; exit 2 ;;
esac
