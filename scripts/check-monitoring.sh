#!/usr/bin/env bash
# Checks the Prometheus rules in ops/prometheus with promtool: their syntax, and their unit tests (the
# recorded series' values and when each alert fires). promtool comes with Debian's prometheus package,
# installed here when it is missing and apt-get can; elsewhere install Prometheus and put promtool on PATH.
set -euo pipefail
cd "$(dirname "$0")/../ops/prometheus"
if ! command -v promtool > /dev/null; then
  if command -v apt-get > /dev/null && [ "$(id -u)" = 0 ]; then
    apt-get install -y -q prometheus > /dev/null 2>&1 || { apt-get update -q > /dev/null && apt-get install -y -q prometheus > /dev/null; }
  else
    echo "promtool is not on PATH: install Prometheus (Debian: apt-get install prometheus)" >&2
    exit 1
  fi
fi
promtool check rules gpumem-rules.yml
promtool test rules gpumem-rules.test.yml
