#!/usr/bin/env bash
# Records the sample's device-pool history under scripts/history-load.py, replays it under the recorded
# settings and others (gpumem-benchmarks' Replay), then runs the sample again with 64 MiB segments to confirm
# the replay's prediction. Build first: mvn -q package -DskipTests. Usage: scripts/history-replay.sh [port]
set -euo pipefail
cd "$(dirname "$0")/.."
port=${1:-18090}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Starts the sample recording every buffer, sends the load, saves the history; prints the peak reserved bytes.
run() {
  local name=$1
  shift
  java -jar sample-app/target/sample-app-*-SNAPSHOT.jar --server.port="$port" --gpumem.backend=host \
    --gpumem.history.buffers=all --gpumem.history.events=262144 "$@" > "$work/$name.log" 2>&1 &
  local pid=$!
  for _ in $(seq 60); do curl -sf "localhost:$port/actuator/health" > /dev/null && break; sleep 1; done
  scripts/history-load.py "http://localhost:$port"
  curl -sf "localhost:$port/actuator/gpumem/device/history" > "$work/$name.json"
  echo "$name: peak reserved $(curl -sf "localhost:$port/actuator/gpumem/device" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["peakReservedBytes"] / 2**20, "MiB")')"
  kill "$pid"
  wait "$pid" || true
}

run recorded
java -cp gpumem-benchmarks/target/benchmarks.jar io.gpumem.benchmarks.Replay "$work/recorded.json" 1GB \
  "warm=64KB:16" "warm=64KB:16,segment-size=64MB" "warm=64KB:16,max-cached=0"
echo
run confirmed --gpumem.device-pool.segment-size=64MB
