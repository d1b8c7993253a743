#!/usr/bin/env bash
# A CPU profile of the test cluster's kube-apiserver while a bench runs (start the bench with
# SLESS_TEST_APISERVER_PROFILING=1). Usage: test/bench/apiserver-pprof.sh SECONDS OUT.pprof
set -euo pipefail
seconds=${1:-30}; out=${2:-/tmp/apiserver.pprof}
pid=$(pgrep -n -f 'kube-apiserver.*--profiling=true')
args=$(tr '\0' '\n' < /proc/$pid/cmdline)
port=$(sed -n 's/^--secure-port=//p' <<<"$args"); addr=$(sed -n 's/^--bind-address=//p' <<<"$args")
tokens=$(sed -n 's/^--token-auth-file=//p' <<<"$args")
token=$(head -1 "$tokens" | cut -d, -f1)
curl -sk -H "Authorization: Bearer $token" "https://$addr:$port/debug/pprof/profile?seconds=$seconds" -o "$out"
echo "$out ($(stat -c %s "$out") bytes); read it with: go tool pprof -top -nodecount=40 $out"
