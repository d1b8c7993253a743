#!/usr/bin/env bash
# SeaweedFS `weed` binary: the real S3-compatible server the S3 artifact-store tests run against
# (test/services/s3.ts). Built from the Go module proxy at a pinned pseudo-version and cached, so a
# machine that already has this version skips the (slow: many minutes on 2 cores) build.
set -euo pipefail
WEED_VERSION=v0.0.0-20261109003541-7506e5f91cd6
bin_dir="$HOME/.cache/sless-test/bin"
target="$bin_dir/weed-$WEED_VERSION"

if [ -x "$target" ]; then
  echo "weed $WEED_VERSION already built: $target"
else
  mkdir -p "$bin_dir"
  tmp_bin=$(mktemp -d)
  trap 'rm -rf "$tmp_bin"' EXIT
  started=$(date +%s)
  # `go install module@version` refuses modules whose go.mod has replace directives (seaweedfs has
  # some), so fetch the module source through the proxy and build inside it as the main module.
  # GOTOOLCHAIN=local: never fetch another Go toolchain behind our back.
  src_dir=$(GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=mod" go mod download -json "github.com/seaweedfs/seaweedfs@$WEED_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src_dir" ] || { echo "go mod download gave no source directory for seaweedfs@$WEED_VERSION" >&2; exit 1; }
  (cd "$src_dir" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
    go build -trimpath -ldflags="-s -w" -o "$tmp_bin/weed" ./weed)
  mv "$tmp_bin/weed" "$target.partial"
  mv "$target.partial" "$target"
  echo "built weed $WEED_VERSION in $(( $(date +%s) - started ))s: $target"
fi
# A stable name the test service looks for first (SLESS_TEST_WEED_BIN overrides it).
ln -sfn "weed-$WEED_VERSION" "$bin_dir/weed"
