#!/usr/bin/env bash
# Gitea: the real git server and webhook sender that test/services/gitea.ts runs (a private
# repository with a token, webhooks of type gitea/gogs, commit statuses read back). Built from the
# Go module proxy at a pinned version and cached under ~/.cache/sless-test/bin, so a machine that
# already has this version skips the build (about 9 minutes on 2 cores).
#
# From v1.27 Gitea's go.mod says `module gitea.dev`, so neither `go install` nor a wrapper module
# can require it: download the module source through the proxy, copy it out of the read-only module
# cache and build inside it. The bindata tag embeds templates, options, migrations and public
# assets (no frontend build is needed for the API, git over HTTP and webhooks); sqlite is pure Go.
set -euo pipefail
GITEA_VERSION=v1.27.3
bin_dir="$HOME/.cache/sless-test/bin"
target="$bin_dir/gitea-$GITEA_VERSION"

if [ -x "$target" ]; then
  echo "gitea $GITEA_VERSION already built: $target"
else
  mkdir -p "$bin_dir"
  work=$(mktemp -d)
  trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
  started=$(date +%s)
  # GOTOOLCHAIN=local: never fetch another Go toolchain behind our back.
  src_dir=$(GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=mod" go mod download -json "code.gitea.io/gitea@$GITEA_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src_dir" ] || { echo "go mod download gave no source directory for code.gitea.io/gitea@$GITEA_VERSION" >&2; exit 1; }
  cp -r "$src_dir" "$work/gitea"
  chmod -R u+w "$work/gitea"
  (
    cd "$work/gitea"
    export GOTOOLCHAIN=local CGO_ENABLED=0
    go generate -tags bindata ./modules/options ./modules/public ./modules/templates ./modules/migration
    go build -tags bindata -trimpath \
      -ldflags="-s -w -X main.Version=${GITEA_VERSION#v}" -o "$work/gitea-bin" .
  )
  mv "$work/gitea-bin" "$target.partial"
  mv "$target.partial" "$target"
  echo "built gitea $GITEA_VERSION in $(( $(date +%s) - started ))s: $target"
fi
# A stable name the test service looks for first (SLESS_TEST_GITEA_BIN overrides it).
ln -sfn "gitea-$GITEA_VERSION" "$bin_dir/gitea"
