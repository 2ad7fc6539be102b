#!/usr/bin/env bash
# Checks the Prometheus rules in ops/prometheus with promtool: their syntax, and their unit tests (the
# recorded series' values and when each alert fires). promtool comes with Debian's prometheus package,
# installed here when it is missing and apt-get can; elsewhere install Prometheus and put promtool on PATH.
set -euo pipefail
cd "$(dirname "$0")/../ops/prometheus"
../../scripts/require-command.sh promtool prometheus
promtool check rules gpumem-rules.yml
promtool test rules gpumem-rules.test.yml
