#!/usr/bin/env bash
# PostgreSQL server binaries for the store tests (test/services/postgres.ts runs its own initdb in
# a temp dir; the distribution's default cluster is not used).
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  apt-get install -y -qq postgresql >/dev/null
fi
# Debian starts a default cluster on install where services run; the tests do not need it.
if command -v pg_lsclusters >/dev/null 2>&1 && command -v service >/dev/null 2>&1; then
  service postgresql stop >/dev/null 2>&1 || true
fi
