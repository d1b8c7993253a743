#!/usr/bin/env bash
# Debian packages the whole suite uses: git (with git http-backend) for the test git server.
set -euo pipefail
apt-get install -y -qq git ca-certificates >/dev/null
