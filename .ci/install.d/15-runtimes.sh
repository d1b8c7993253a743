#!/usr/bin/env bash
# What the runtime servers (runtimes/) need to run as real processes in the tests and in `sless dev`:
# python3 with pip (the Python runtimes; pip installs a function's requirements.txt), node (already
# here: it runs sless) and go (already here: the Go runtime compiles functions with runtimes/go/build.sh).
set -euo pipefail
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
  apt-get install -y -qq python3 python3-pip >/dev/null
fi
python3 --version
command -v go >/dev/null 2>&1 || { echo "15-runtimes.sh: go is not installed; the go1.23 runtime tests need it" >&2; exit 1; }
go version
