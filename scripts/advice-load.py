#!/usr/bin/env python3
"""Sends the sample 400 requests of mixed sizes from 8 clients, then prints the device pool's advice.

Usage: scripts/advice-load.py [base-url]   (default http://localhost:8080)
"""
import concurrent.futures
import json
import random
import sys
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://localhost:8080"


def post(path, body):
    request = urllib.request.Request(BASE + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    return urllib.request.urlopen(request).read()


def one(i, rng):
    n = rng.choice([1000, 3000, 10000, 30000, 100000, 300000])
    vector = [1.0] * n
    post("/api/vectors/add", {"a": vector, "b": vector})
    if i % 4 == 0:
        post("/api/graphs/pagerank", {"nodes": rng.choice([10000, 50000]), "edgesPerNode": 8, "seed": i,
                                      "iterations": 5})


rngs = [random.Random(i) for i in range(400)]
with concurrent.futures.ThreadPoolExecutor(8) as clients:
    list(clients.map(one, range(400), rngs))
advice = json.loads(urllib.request.urlopen(BASE + "/actuator/gpumem/device/advice").read())
advice["ladder"].pop("current")
advice["ladder"].pop("advised")
print(json.dumps(advice, indent=2))
