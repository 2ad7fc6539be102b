#!/usr/bin/env bash
# Checks the Prometheus files with promtool: the rules in ops/prometheus, their syntax and their unit tests
# (the recorded series' values and when each alert fires), and every Prometheus configuration, the one in
# ops/prometheus and the one docs/monitoring.md shows. promtool comes with Debian's prometheus package,
# installed here when it is missing and apt-get can; elsewhere install Prometheus and put promtool on PATH.
# Debian builds promtool without Kubernetes service discovery, so the Kubernetes configuration is checked with
# its discovery swapped for a static target: everything else, its relabelling above all, is checked as written.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/require-command.sh promtool prometheus
(cd ops/prometheus && promtool check rules gpumem-rules.yml && promtool test rules gpumem-rules.test.yml)

configs=$(mktemp -d)
trap 'rm -rf "$configs"' EXIT
cp ops/prometheus/gpumem-rules.yml "$configs/"
awk '/^```yaml$/ { fence = 1; keep = 0; next } fence && /^# prometheus.yml$/ { keep = 1 } /^```$/ { fence = 0 }
	fence && keep' docs/monitoring.md > "$configs/monitoring-md.yml"
grep -q scrape_configs "$configs/monitoring-md.yml" || { echo "docs/monitoring.md shows no prometheus.yml" >&2; exit 1; }
promtool check config "$configs/monitoring-md.yml"
cp ops/prometheus/prometheus-kubernetes.yml "$configs/"
if ! promtool check config "$configs/prometheus-kubernetes.yml" > "$configs/out" 2>&1; then
	cat "$configs/out"
	grep -q "field kubernetes_sd_configs not found" "$configs/out" || exit 1
	echo "This promtool has no Kubernetes service discovery: checking the rest with a static target instead"
	sed -e 's/^\( *\)kubernetes_sd_configs:/\1static_configs:/' -e 's/^\( *\)- role: pod\b.*/\1- targets: [pod:8081]/' \
		ops/prometheus/prometheus-kubernetes.yml > "$configs/prometheus-kubernetes.yml"
	promtool check config "$configs/prometheus-kubernetes.yml"
fi
