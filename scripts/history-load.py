#!/usr/bin/env python3
"""Sends the sample 400 vector requests of mixed sizes (4 KB to 8 MB vectors) from 8 clients: the load whose
recorded history docs/benchmarks.md replays.

Usage: scripts/history-load.py [base-url]   (default http://localhost:8080)
"""
import concurrent.futures
import json
import random
import sys
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8080"
SIZES = [1000, 10000, 100000, 300000, 1000000, 2000000]
BODIES = {n: json.dumps({"a": [1.0] * n, "b": [2.0] * n}).encode() for n in SIZES}


def one(rng):
    request = urllib.request.Request(BASE + "/api/vectors/add", data=BODIES[rng.choice(SIZES)],
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request).read()


rngs = [random.Random(i) for i in range(400)]
with concurrent.futures.ThreadPoolExecutor(8) as clients:
    list(clients.map(one, rngs))
