#!/usr/bin/env python3
"""Overloads the sample by memory: 24 clients send PageRank requests on server-generated graphs (about 78 MB of
device memory each) for 45 s, to the sample on a 512 MB emulated device and then on a 4 GB one, and checks what an
operator would: only 200 and 503 answers, every 503 with Retry-After, at most 4 pressure level changes logged per
minute, nothing lent or claimed once the clients stop, and goodput on 512 MB at least 90% of 4 GB's.

Usage: scripts/overload-sample.py [--jar sample-app/target/sample-app-0.1.0-SNAPSHOT.jar] [--seconds 45]
                                  [--sample-arg --gpumem.pressure.hysteresis.margin=0.05 ...]
Build the jar first (the README's command 1 without starting it). Exits 1 when a check fails.
"""
import argparse
import concurrent.futures
import json
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

NODES = 1_500_000
EDGES_PER_NODE = 8
CLIENTS = 24


def request(base, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as answer:
            return answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def client(base, index, end, answers, lock):
    seed = index * 100_000
    while time.monotonic() < end:
        seed += 1
        status, headers, body = request(base, "/api/graphs/pagerank", {"nodes": NODES, "edgesPerNode": EDGES_PER_NODE,
                                                                        "seed": seed, "iterations": 5})
        reason = json.loads(body).get("error", "")[:48] if status != 200 else None
        with lock:
            answers.append((status, headers.get("Retry-After"), reason))
        if status == 503:
            time.sleep(float(headers.get("Retry-After") or 1))


def run(jar, capacity, port, seconds, extra):
    log = tempfile.NamedTemporaryFile("w+", prefix="overload-" + capacity + "-", suffix=".log", delete=False)
    sample = subprocess.Popen(["java", "-jar", jar, "--server.port=" + str(port), "--gpumem.backend=host",
                               "--gpumem.host.capacity=" + capacity] + extra, stdout=log, stderr=subprocess.STDOUT)
    base = "http://localhost:%d" % port
    try:
        for _ in range(120):
            try:
                if request(base, "/actuator/health/readiness")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(1)
        else:
            raise SystemExit("the sample on %s did not start; see %s" % (capacity, log.name))
        answers, lock = [], threading.Lock()
        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as clients:
            for future in [clients.submit(client, base, i, start + seconds, answers, lock) for i in range(CLIENTS)]:
                future.result()
        elapsed = time.monotonic() - start
        device = json.loads(request(base, "/actuator/gpumem/device")[2])
        admission = json.loads(request(base, "/actuator/gpumem")[2])["admission"]
        log.flush()
        with open(log.name) as lines:
            changes = sum(1 for line in lines if "GPU memory pressure (DEVICE memory)" in line)
        statuses = [status for status, _, _ in answers]
        reasons = {}
        for status, _, reason in answers:
            if status == 503:
                reasons[reason] = reasons.get(reason, 0) + 1
        return {
            "capacity": capacity,
            "answers": len(answers),
            "ok": statuses.count(200),
            "unavailable": statuses.count(503),
            "other": sorted({s for s in statuses if s not in (200, 503)}),
            "without_retry_after": sum(1 for status, retry, _ in answers if status == 503 and not retry),
            "reasons": reasons,
            "goodput": statuses.count(200) / elapsed,
            "changes_per_minute": changes * 60 / elapsed,
            "lent_after": device["inUseBytes"],
            "claimed_after": admission["claimedBytes"],
            "log": log.name,
        }
    finally:
        sample.terminate()
        sample.wait(60)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jar", default="sample-app/target/sample-app-0.1.0-SNAPSHOT.jar")
    parser.add_argument("--seconds", type=float, default=45)
    parser.add_argument("--sample-arg", action="append", default=[], help="an argument for both runs of the sample")
    args = parser.parse_args()
    small = run(args.jar, "512MB", 18081, args.seconds, args.sample_arg)
    large = run(args.jar, "4GB", 18082, args.seconds, args.sample_arg)
    print("| device | answers | 200 | 503 | other | 503 without Retry-After | goodput (req/s) "
          "| pressure changes / min | lent after | claimed after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in (small, large):
        print("| %s | %d | %d | %d | %s | %d | %.2f | %.1f | %d | %d |" % (
            r["capacity"], r["answers"], r["ok"], r["unavailable"], r["other"] or "none", r["without_retry_after"],
            r["goodput"], r["changes_per_minute"], r["lent_after"], r["claimed_after"]))
    for r in (small, large):
        for reason, count in sorted(r["reasons"].items(), key=lambda item: -item[1]):
            print("%s: %d x 503 '%s...'" % (r["capacity"], count, reason))
    ratio = small["goodput"] / large["goodput"] if large["goodput"] else 0
    print("\ngoodput on 512MB / 4GB: %.2f (logs: %s, %s)" % (ratio, small["log"], large["log"]))
    failures = []
    for r in (small, large):
        if r["other"]:
            failures.append("%s answered %s" % (r["capacity"], r["other"]))
        if r["without_retry_after"]:
            failures.append("%s answered %d 503s without Retry-After" % (r["capacity"], r["without_retry_after"]))
        if r["changes_per_minute"] > 4:
            failures.append("%s logged %.1f pressure changes a minute" % (r["capacity"], r["changes_per_minute"]))
        if r["lent_after"] or r["claimed_after"]:
            failures.append("%s still lends %d bytes and has %d claimed" % (r["capacity"], r["lent_after"],
                                                                            r["claimed_after"]))
    if ratio < 0.9:
        failures.append("goodput on 512MB is %.2f of 4GB's, under 0.90" % ratio)
    for failure in failures:
        print("FAILED: " + failure)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
