#!/usr/bin/env bash
# Records the trace of the sample's device pool under scripts/history-load.py (400 vector requests of mixed sizes
# from 8 clients) on the host backend: the history of every buffer, turned into a trace (gpumem-benchmarks'
# TraceReplay), which the GPU bundle carries to replay against each allocator. Build first:
# mvn -q package -DskipTests. Usage: scripts/record-sample-trace.sh [port]
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-18090}
out=gpumem-gpu-verification/src/main/traces/sample-mixed.trace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

jars=(sample-app/target/sample-app-*-SNAPSHOT.jar)
if [ ${#jars[@]} -ne 1 ] || [ ! -f "${jars[0]}" ]; then
  echo "record-sample-trace: build the sample first (mvn -q package -DskipTests), one jar" >&2
  exit 1
fi
java -jar "${jars[0]}" --server.port="$port" --gpumem.backend=host \
  --gpumem.history.buffers=all --gpumem.history.events=262144 > "$work/sample.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
started=
for _ in $(seq 60); do curl -sf "localhost:$port/actuator/health" > /dev/null && started=1 && break; sleep 1; done
if [ -z "$started" ]; then
  echo "record-sample-trace: the sample did not start within 60 s; its log:" >&2
  cat "$work/sample.log" >&2
  exit 1
fi
scripts/history-load.py "http://localhost:$port"
curl -sf "localhost:$port/actuator/gpumem/device/history" > "$work/history.json"
java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.TraceReplay history "$work/history.json" \
  sample-mixed "$out"
echo "$out: $(grep -c '^a ' "$out") acquires"
