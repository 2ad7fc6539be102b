#!/usr/bin/env bash
# Sends the sample service three PageRank bodies of MB megabytes (240 by default) at once, as a hostile
# client would (no "Expect: 100-continue"), then a normal request, and shows what each got and the
# device pool after. Start the service first, with a small heap:
#   java -Xmx1g -jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar
# then: scripts/hostile-bodies.sh [base-url] [MB]
set -euo pipefail
base="${1:-http://localhost:8080}"
megabytes="${2:-240}"
body="$(mktemp)"
trap 'rm -f "$body"' EXIT
# {"edges":[[1234567,7654321],...]} of about MB megabytes
python3 - "$body" "$megabytes" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    out.write('{"edges":[')
    pair = "[1234567,7654321],"
    out.write(pair * (int(sys.argv[2]) * 1_000_000 // len(pair)))
    out.write('[0,1]]}')
PY
ls -l "$body" | awk '{print "body bytes:", $5}'
for i in 1 2 3; do
  curl -s -o "$body.$i" -w "client $i: HTTP %{http_code} in %{time_total} s\n" -H 'Expect:' \
    -H 'Content-Type: application/json' --data-binary @"$body" "$base/api/graphs/pagerank" || echo "client $i: curl exit $?" &
done
wait
for i in 1 2 3; do head -c 200 "$body.$i" 2>/dev/null; echo; rm -f "$body.$i"; done
curl -s -w " <- normal request: HTTP %{http_code}\n" -H 'Content-Type: application/json' \
  -d '{"a":[1,2],"b":[3,4]}' "$base/api/vectors/add"
curl -s "$base/actuator/gpumem/device" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("device pool in use:", d["inUseBytes"], "bytes")'
