#!/usr/bin/env bash
# Helm, for the chart in deploy/chart/ (`helm lint` and `helm template` in test/integration/deploy-chart.test.ts).
# Built from the Go module proxy at a pinned version and cached, so a machine that has it skips the build.
# The ldflags are those of Helm's own Makefile: the version it prints, and the Kubernetes version its
# `helm template` and `helm lint` assume (client-go v0.X -> 1.X), which the chart's kubeVersion is checked against.
set -euo pipefail
HELM_VERSION=v3.22.0
bin_dir="$HOME/.cache/sless-test/bin"
target="$bin_dir/helm-$HELM_VERSION"

if [ -x "$target" ]; then
  echo "helm $HELM_VERSION already built: $target"
else
  mkdir -p "$bin_dir"
  tmp_bin=$(mktemp -d)
  trap 'rm -rf "$tmp_bin"' EXIT
  started=$(date +%s)
  # GOTOOLCHAIN=local: never fetch another Go toolchain behind our back.
  src_dir=$(GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=mod" go mod download -json "helm.sh/helm/v3@$HELM_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src_dir" ] || { echo "go mod download gave no source directory for helm.sh/helm/v3@$HELM_VERSION" >&2; exit 1; }
  client_go=$(cd "$src_dir" && GOTOOLCHAIN=local GOFLAGS="${GOFLAGS:-} -mod=readonly" go list -f "{{.Version}}" -m k8s.io/client-go)
  k8s_minor=$(echo "$client_go" | cut -d. -f2)
  ldflags="-w -s -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$k8s_minor"
  done
  (cd "$src_dir" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=readonly" \
    go build -trimpath -ldflags="$ldflags" -o "$tmp_bin/helm" ./cmd/helm)
  mv "$tmp_bin/helm" "$target.partial"
  mv "$target.partial" "$target"
  echo "built helm $HELM_VERSION in $(( $(date +%s) - started ))s: $target"
fi
# A stable name the tests look for first (SLESS_TEST_HELM_BIN overrides it).
ln -sfn "helm-$HELM_VERSION" "$bin_dir/helm"
