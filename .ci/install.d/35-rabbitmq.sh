#!/usr/bin/env bash
# RabbitMQ for the queue-trigger tests (test/services/rabbitmq.ts starts its own node with its own
# name, ports and data dir; the distribution's node is not used). Debian's package starts a node on
# install where init scripts run: a policy-rc.d refuses that during the install (when no policy is
# in place already), and a node it started anyway is stopped.
set -euo pipefail
if ! command -v rabbitmq-server >/dev/null 2>&1 && [ ! -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    own_policy=1
  fi
  trap '[ "$own_policy" = 1 ] && rm -f "$policy"' EXIT
  apt-get install -y -qq rabbitmq-server >/dev/null
fi
if command -v service >/dev/null 2>&1; then
  service rabbitmq-server stop >/dev/null 2>&1 || true
fi
