#!/usr/bin/env bash
# The images the real-node tests run, built here without any image registry (test/images/build.sh:
# Debian root filesystems by mmdebstrap, OCI layouts by umoci, kaniko from the Go module proxy run in
# runc, a throwaway docker-registry, skopeo). Cached under ~/.cache/sless-test/images by pinned tag:
# a machine that has them skips the build (a fresh build takes the minutes test/images/README.md notes).
set -euo pipefail
cd "$(dirname "$0")/../.."
missing=()
for p in mmdebstrap umoci skopeo runc jq docker-registry curl; do command -v "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then apt-get install -y -qq "${missing[@]}" >/dev/null; fi
bash test/images/build.sh
