"""Tests for trace_replay.py that run without a GPU, torch or cupy.

Run: cd gpumem-gpu-verification/src/main/python && python3 -m unittest -v test_trace_replay
"""

import gzip
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import trace_replay

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_replay.py")

SMALL_TRACE = """# gpumem trace 1
# name small
# source handmade for the tests
a 0 1048576 5
a 1 256 5

# a comment between events
c 0 5
a 2 4096 7
c 1 5
"""

# Stand-in walk-through (sizes rounded to 512 B; a cached block is reused when >= size and < 2x size):
#   a0 1000 -> 1024 new (reserved 1024, 1 driver allocation); a1 1500 -> 1536 new (2560, 2)
#   c0, c1 -> cache {1024, 1536}
#   a2 1024 -> smallest fitting block is 1024, not 1536 -> cache {1536}
#   a3 400 -> 512: 1536 is not < 1024, so new 512 (3072, 3); c3 -> cache {512, 1536}
#   a4 200 -> 512 (only because of the rounding) reuses 512; a5 1400 -> 1536 reuses 1536
#   a6 100 -> 512 new (3584, 4)
# Lent: 1000, 2500, 1500, 0, 1024, 1424, 1024, 1224, 2624, 2724 -> peak 2724.
STAND_IN_TRACE = """# gpumem trace 1
# name stand-in-check
a 0 1000 0
a 1 1500 0
c 0 0
c 1 0
a 2 1024 0
a 3 400 0
c 3 0
a 4 200 0
a 5 1400 1
a 6 100 1
"""


def write(directory, name, text):
    path = os.path.join(directory, name)
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write(text)
    else:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    return path


def read_jsonl(path):
    with open(path, encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def run_script(*arguments):
    return subprocess.run([sys.executable, SCRIPT, *arguments], capture_output=True, text=True, timeout=120)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()


class ReadTraceTest(TempDirTest):
    def check_small(self, trace):
        self.assertEqual(trace.name, "small")
        self.assertEqual(trace.source, "handmade for the tests")
        self.assertEqual(trace.events, [("a", 0, 1048576, 5), ("a", 1, 256, 5), ("c", 0, 5), ("a", 2, 4096, 7),
                                        ("c", 1, 5)])
        self.assertEqual(trace.acquires, 3)
        self.assertEqual(trace.peak_lent_bytes, 1048576 + 256)

    def test_reads_events_name_source_acquires_and_peak_lent(self):
        self.check_small(trace_replay.read_trace(write(self.tmp, "small.trace", SMALL_TRACE)))

    def test_reads_gzip_compressed_trace(self):
        self.check_small(trace_replay.read_trace(write(self.tmp, "small.trace.gz", SMALL_TRACE)))

    def test_peak_lent_follows_event_order(self):
        text = "# gpumem trace 1\n# name order\na 0 100 0\nc 0 0\na 1 60 0\na 2 60 0\nc 1 0\na 3 10 0\n"
        trace = trace_replay.read_trace(write(self.tmp, "order.trace", text))
        self.assertEqual(trace.peak_lent_bytes, 120)
        self.assertEqual(trace.acquires, 4)

    def test_open_buffers_at_the_end_are_allowed(self):
        text = "# gpumem trace 1\n# name open\na 0 10 0\na 1 20 0\n"
        trace = trace_replay.read_trace(write(self.tmp, "open.trace", text))
        self.assertEqual(trace.peak_lent_bytes, 30)

    def assert_malformed(self, body, line_number, fragment, header="# gpumem trace 1\n# name bad\n"):
        path = write(self.tmp, "bad.trace", header + body)
        with self.assertRaises(ValueError) as caught:
            trace_replay.read_trace(path)
        message = str(caught.exception)
        self.assertIn(f"trace {path} line {line_number}: ", message)
        self.assertIn(fragment, message)
        return message

    def test_unknown_operation(self):
        message = self.assert_malformed("a 0 10 0\nx 0 0\n", 4, "unknown operation 'x'")
        self.assertIn("'x 0 0'", message)

    def test_wrong_field_count(self):
        self.assert_malformed("a 0 10\n", 3, "'a' takes 3 fields (ID BYTES WORKER), found 2")
        self.assert_malformed("a 0 10 0\nc 0\n", 4, "'c' takes 2 fields (ID WORKER), found 1")
        self.assert_malformed("a 0 10 0 1\n", 3, "found 4")

    def test_non_positive_bytes(self):
        self.assert_malformed("a 0 0 0\n", 3, "BYTES must be positive, found 0")
        self.assert_malformed("a 0 -5 0\n", 3, "BYTES must be positive, found -5")
        self.assert_malformed("a 0 ten 0\n", 3, "BYTES 'ten' is not an integer")

    def test_bad_id_and_worker(self):
        self.assert_malformed("a -1 10 0\n", 3, "ID '-1' is not a non-negative integer")
        self.assert_malformed("a 0 10 w\n", 3, "WORKER 'w' is not a non-negative integer")

    def test_close_before_acquire(self):
        message = self.assert_malformed("a 0 10 0\nc 9 1\na 9 10 0\n", 4, "buffer 9 was never acquired")
        self.assertIn("'c 9 1'", message)

    def test_acquired_twice(self):
        self.assert_malformed("a 1 10 0\nc 1 0\na 1 10 0\n", 5, "buffer 1 was already acquired on line 3")

    def test_closed_twice(self):
        self.assert_malformed("a 1 10 0\nc 1 0\nc 1 0\n", 5, "buffer 1 was already closed on line 4")

    def test_missing_header(self):
        self.assert_malformed("a 0 10 0\n", 1, "missing header", header="# gpumem trace 2\n# name bad\n")
        self.assert_malformed("", 1, "missing header", header="# name bad\n# gpumem trace 1\n")

    def test_missing_name_and_empty_file(self):
        path = write(self.tmp, "noname.trace", "# gpumem trace 1\na 0 10 0\n")
        with self.assertRaisesRegex(ValueError, "missing '# name' line"):
            trace_replay.read_trace(path)
        path = write(self.tmp, "empty.trace", "")
        with self.assertRaisesRegex(ValueError, "empty"):
            trace_replay.read_trace(path)


class StandInTest(TempDirTest):
    def test_exact_peak_reserved_and_driver_allocations(self):
        trace = trace_replay.read_trace(write(self.tmp, "s.trace", STAND_IN_TRACE))
        self.assertEqual(trace.peak_lent_bytes, 2724)
        record = trace_replay.replay(trace, trace_replay.StandInAllocator())
        self.assertEqual(record["peakReservedBytes"], 3584)
        self.assertEqual(record["driverAllocations"], 4)
        self.assertEqual(record["reservedPerLent"], round(3584 / 2724, 3))
        self.assertEqual(record["acquires"], 7)
        self.assertEqual(set(record), {"trace", "allocator", "acquires", "peakLentBytes", "peakReservedBytes",
                                       "reservedPerLent", "driverAllocations", "seconds"})

    def test_reuse_after_close_makes_no_new_block(self):
        allocator = trace_replay.StandInAllocator()
        first = allocator.alloc(700)
        allocator.free(first)
        allocator.alloc(1024)
        self.assertEqual((allocator.peak_reserved_bytes(), allocator.driver_allocations()), (1024, 1))


class BrokenAllocator(trace_replay.StandInAllocator):
    """Fails on its second allocation; remembers being closed and what it was asked to free."""

    name = "broken"
    instances = []

    def __init__(self):
        super().__init__()
        self.allocs = 0
        self.frees = 0
        self.closed = False
        BrokenAllocator.instances.append(self)

    def alloc(self, nbytes):
        self.allocs += 1
        if self.allocs == 2:
            raise RuntimeError("device on fire")
        return super().alloc(nbytes)

    def free(self, handle):
        self.frees += 1
        super().free(handle)

    def close(self):
        self.closed = True
        super().close()


def failing_factory():
    raise ImportError("No module named 'torch'")


class IsolationTest(TempDirTest):
    def setUp(self):
        super().setUp()
        BrokenAllocator.instances = []
        self.traces = [trace_replay.read_trace(write(self.tmp, "s.trace", STAND_IN_TRACE)),
                       trace_replay.read_trace(write(self.tmp, "small.trace", SMALL_TRACE))]

    def test_failing_allocator_gives_error_records_and_others_still_run(self):
        extra = {"broken": BrokenAllocator, "no-torch": failing_factory}
        with mock.patch.dict(trace_replay.ALLOCATORS, extra), mock.patch("sys.stderr", new=io.StringIO()):
            records = {name: list(trace_replay.replay_allocator(name, self.traces))
                       for name in ("broken", "no-torch", "stand-in")}
        self.assertEqual(records["broken"], [
            {"trace": "stand-in-check", "allocator": "broken", "error": "RuntimeError: device on fire"},
            {"trace": "small", "allocator": "broken", "error": "RuntimeError: device on fire"},
        ])
        self.assertTrue(all(instance.closed for instance in BrokenAllocator.instances))
        self.assertEqual([instance.frees for instance in BrokenAllocator.instances], [1, 1])
        self.assertEqual([record["error"] for record in records["no-torch"]],
                         ["ImportError: No module named 'torch'"] * 2)
        self.assertEqual([record["peakReservedBytes"] for record in records["stand-in"]], [3584, 1048576 + 512 + 4096])
        self.assertEqual([record["allocator"] for record in records["stand-in"]], ["stand-in", "stand-in"])

    def test_unknown_allocator_gives_error_records(self):
        records = list(trace_replay.replay_allocator("no-such", self.traces))
        self.assertEqual([record["trace"] for record in records], ["stand-in-check", "small"])
        self.assertTrue(all(record["error"].startswith("unknown allocator 'no-such'") for record in records))


class ChildProcessTest(unittest.TestCase):
    def test_records_arrive_before_a_timeout_and_the_timeout_is_reported(self):
        code = ("import json, sys, time; print('@record ' + json.dumps({'allocator': 'x', 'trace': 't'}), flush=True);"
                " print('noise', flush=True); time.sleep(60)")
        seen = []
        failure = trace_replay.run_child([sys.executable, "-c", code], 5, seen.append)
        self.assertEqual(seen, [{"allocator": "x", "trace": "t"}])
        self.assertEqual(failure, {"error": "timed out after 5 s"})

    def test_exit_code_and_stderr_are_reported(self):
        code = "import sys; sys.stderr.write('Traceback...\\nRuntimeError: boom\\n'); sys.exit(3)"
        with mock.patch("sys.stderr"):
            failure = trace_replay.run_child([sys.executable, "-c", code], 30, lambda record: None)
        self.assertEqual(failure, {"error": "child exited with code 3: RuntimeError: boom",
                                   "stderrTail": "Traceback... / RuntimeError: boom"})

    def test_signal_is_reported(self):
        code = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
        failure = trace_replay.run_child([sys.executable, "-c", code], 30, lambda record: None)
        self.assertEqual(failure["error"], "child killed by signal SIGSEGV")

    def test_success_returns_none(self):
        self.assertIsNone(trace_replay.run_child([sys.executable, "-c", "pass"], 30, lambda record: None))


class ReplayCommandTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.stand_in_trace = write(self.tmp, "s.trace", STAND_IN_TRACE)
        self.small_trace = write(self.tmp, "small.trace.gz", SMALL_TRACE)
        self.out = os.path.join(self.tmp, "out", "replay.jsonl")

    def test_stand_in_records_are_appended(self):
        os.makedirs(os.path.dirname(self.out))
        with open(self.out, "w", encoding="utf-8") as out:
            out.write(json.dumps({"trace": "earlier", "allocator": "gpumem", "peakReservedBytes": 1}) + "\n")
        result = run_script("replay", "--allocators", "stand-in", "--trace", self.stand_in_trace,
                            "--trace", self.small_trace, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        records = read_jsonl(self.out)
        self.assertEqual(records[0]["trace"], "earlier")
        check, small = records[1:]
        self.assertEqual((check["trace"], check["allocator"]), ("stand-in-check", "stand-in"))
        self.assertEqual((check["peakReservedBytes"], check["peakLentBytes"], check["driverAllocations"]),
                         (3584, 2724, 4))
        for record in (check, small):
            self.assertEqual(record["reservedPerLent"],
                             round(record["peakReservedBytes"] / record["peakLentBytes"], 3))
            self.assertIsInstance(record["seconds"], float)
        self.assertEqual(small["acquires"], 3)
        self.assertIn("stand-in-check stand-in: peak reserved 0.0 MiB, reserved/lent 1.316, driver allocations 4",
                      result.stdout)

    def test_failing_allocator_is_recorded_and_others_still_run(self):
        result = run_script("replay", "--allocators", "no-such,stand-in", "--trace", self.stand_in_trace,
                            "--trace", self.small_trace, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        records = read_jsonl(self.out)
        self.assertEqual([(record["allocator"], record["trace"], "error" in record) for record in records], [
            ("no-such", "stand-in-check", True),
            ("no-such", "small", True),
            ("stand-in", "stand-in-check", False),
            ("stand-in", "small", False),
        ])
        self.assertIn("ERROR unknown allocator 'no-such'", result.stdout)

    def test_no_allocator_succeeding_exits_1(self):
        result = run_script("replay", "--allocators", "no-such", "--trace", self.stand_in_trace, "--out", self.out)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(len(read_jsonl(self.out)), 1)

    def test_malformed_trace_exits_2_before_running_anything(self):
        bad = write(self.tmp, "bad.trace", "# gpumem trace 1\n# name bad\nc 9 1\n")
        result = run_script("replay", "--allocators", "stand-in", "--trace", self.stand_in_trace, "--trace", bad,
                            "--out", self.out)
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"trace {bad} line 3: 'c 9 1': buffer 9 was never acquired", result.stderr)
        self.assertFalse(os.path.exists(self.out))

    def test_bad_arguments_exit_2(self):
        self.assertEqual(run_script("replay", "--trace", self.stand_in_trace).returncode, 2)
        self.assertEqual(run_script("replay", "--trace", self.stand_in_trace, "--out", self.out, "--timeout", "-1")
                         .returncode, 2)
        self.assertEqual(run_script("latency", "--sizes", "1024,0", "--out", self.out).returncode, 2)


MIB = 1024 * 1024

PYTHON_RECORDS = [
    {"trace": "alpha", "allocator": "torch", "acquires": 10, "peakLentBytes": 10 * MIB, "peakReservedBytes": 20 * MIB,
     "reservedPerLent": 2.0, "driverAllocations": 4, "seconds": 0.5, "driverAllocationsFrom": "num_device_alloc"},
    {"trace": "alpha", "allocator": "torch-expandable", "error": "RuntimeError: CUDA error: out of memory"},
    {"trace": "alpha", "allocator": "cupy", "acquires": 10, "peakLentBytes": 10 * MIB, "peakReservedBytes": 11 * MIB,
     "reservedPerLent": 1.1, "driverAllocations": 9, "seconds": 0.4},
    {"trace": "alpha", "allocator": "cuda-async", "acquires": 10, "peakLentBytes": 10 * MIB,
     "peakReservedBytes": 14 * MIB, "reservedPerLent": 1.4, "driverAllocations": None, "seconds": 0.3,
     "memGetInfoDeltaBytes": 16 * MIB},
    {"trace": "beta", "allocator": "mystery", "acquires": 4, "peakLentBytes": 7 * MIB,
     "peakReservedBytes": 19 * MIB // 2, "reservedPerLent": 1.357, "driverAllocations": 7, "seconds": 0.1},
    {"trace": "beta", "allocator": "stand-in", "acquires": 4, "peakLentBytes": 7 * MIB, "peakReservedBytes": 9 * MIB,
     "reservedPerLent": 1.286, "driverAllocations": 5, "seconds": 0.1},
    {"trace": "beta", "allocator": "torch", "acquires": 4, "peakLentBytes": 7 * MIB, "peakReservedBytes": 10 * MIB,
     "reservedPerLent": 1.429, "driverAllocations": 2, "seconds": 0.1},
    {"trace": "gamma", "allocator": "torch", "error": "timed out after 240 s"},
    {"trace": "gamma", "allocator": "cupy", "acquires": 2, "peakLentBytes": 2 * MIB, "peakReservedBytes": 3 * MIB,
     "reservedPerLent": 1.5, "driverAllocations": 1, "seconds": 0.1},
    {"allocator": "torch", "bytes": 1024, "nanosPerPair": 80.3, "iterations": 10000, "from": "C++"},
    {"allocator": "cudaMallocAsync", "bytes": 1024, "nanosPerPair": 175.0, "iterations": 10000, "from": "C++"},
    {"allocator": "cudaMallocAsync", "bytes": 1048576, "nanosPerPair": 300.0, "iterations": 10000, "from": "C++"},
    {"allocator": "cudaMalloc", "bytes": 65536, "nanosPerPair": 12000.0, "iterations": 200, "from": "C++"},
    {"allocator": "torch-expandable", "error": "timed out after 300 s", "from": "C++"},
]

JAVA_RECORDS = [
    {"trace": "alpha", "allocator": "gpumem", "acquires": 10, "peakLentBytes": 10 * MIB, "peakReservedBytes": 12 * MIB,
     "reservedPerLent": 1.2, "driverAllocations": 3, "seconds": 0.2},
    {"trace": "alpha", "allocator": "gpumem-fixed", "acquires": 10, "peakLentBytes": 10 * MIB,
     "peakReservedBytes": 16 * MIB, "reservedPerLent": 1.6, "driverAllocations": 2, "seconds": 0.2},
    {"trace": "beta", "allocator": "gpumem", "acquires": 4, "peakLentBytes": 7 * MIB, "peakReservedBytes": 8 * MIB,
     "reservedPerLent": 1.143, "driverAllocations": 1, "seconds": 0.1},
    {"allocator": "gpumem hit", "bytes": 1024, "nanosPerPair": 50.0, "from": "JMH"},
    {"allocator": "gpumem hit", "bytes": 1048576, "nanosPerPair": 60.0, "from": "JMH"},
    {"allocator": "cuMemAllocAsync+cuMemFreeAsync (JCuda)", "bytes": 1024, "nanosPerPair": 250.0, "from": "JMH"},
]

EXPECTED_REPORT = """# Allocator comparison

## Trace alpha

| allocator | peak reserved (MiB) | peak lent (MiB) | reserved / lent | driver allocations |
| --- | ---: | ---: | ---: | ---: |
| gpumem | 12.0 | 10.0 | 1.200 | 3 |
| gpumem-fixed | 16.0 | 10.0 | 1.600 | 2 |
| torch | 20.0 | 10.0 | 2.000 | 4 |
| torch-expandable | error: RuntimeError: CUDA error: out of memory | \u2013 | \u2013 | \u2013 |
| cupy | 11.0 | 10.0 | 1.100 | 9 |
| cuda-async | 14.0 | 10.0 | 1.400 | \u2013 |

gpumem peak reserved 12582912 B against the best of the others, cupy at 11534336 B: ratio 1.091, \
above the best by 9.1 %.

## Trace beta

| allocator | peak reserved (MiB) | peak lent (MiB) | reserved / lent | driver allocations |
| --- | ---: | ---: | ---: | ---: |
| gpumem | 8.0 | 7.0 | 1.143 | 1 |
| torch | 10.0 | 7.0 | 1.429 | 2 |
| stand-in | 9.0 | 7.0 | 1.286 | 5 |
| mystery | 9.5 | 7.0 | 1.357 | 7 |

gpumem peak reserved 8388608 B against the best of the others, stand-in at 9437184 B: ratio 0.889, at or below the best.

## Trace gamma

| allocator | peak reserved (MiB) | peak lent (MiB) | reserved / lent | driver allocations |
| --- | ---: | ---: | ---: | ---: |
| torch | error: timed out after 240 s | \u2013 | \u2013 | \u2013 |
| cupy | 3.0 | 2.0 | 1.500 | 1 |

gpumem: no result for this trace.

## Latency: ns per alloc+free pair

| size | gpumem hit | torch | cudaMallocAsync | cudaMalloc | cuMemAllocAsync+cuMemFreeAsync (JCuda) \
| cudaMallocAsync / gpumem hit | cuMemAllocAsync+cuMemFreeAsync (JCuda) / gpumem hit |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 KiB | 50.0 | 80.3 | 175.0 | \u2013 | 250.0 | 3.5 | 5.0 |
| 64 KiB | \u2013 | \u2013 | \u2013 | 12000.0 | \u2013 | \u2013 | \u2013 |
| 1 MiB | 60.0 | \u2013 | 300.0 | \u2013 | \u2013 | 5.0 | \u2013 |

Sources: gpumem hit: JMH; torch: C++; cudaMallocAsync: C++; cudaMalloc: C++; \
cuMemAllocAsync+cuMemFreeAsync (JCuda): JMH.

Errors:

- torch-expandable (C++): error: timed out after 300 s
"""


class ReportTest(TempDirTest):
    def test_render_report_exactly(self):
        self.assertEqual(trace_replay.render_report(PYTHON_RECORDS + JAVA_RECORDS), EXPECTED_REPORT)

    def test_report_does_not_depend_on_record_order(self):
        records = list(reversed(JAVA_RECORDS)) + list(reversed(PYTHON_RECORDS))
        self.assertEqual(trace_replay.render_report(records), EXPECTED_REPORT)

    def test_report_command_reads_python_and_java_files(self):
        python_file = os.path.join(self.tmp, "python.jsonl")
        java_file = os.path.join(self.tmp, "java.jsonl")
        for path, records in ((python_file, PYTHON_RECORDS), (java_file, JAVA_RECORDS)):
            with open(path, "w", encoding="utf-8") as out:
                out.write("".join(json.dumps(record) + "\n" for record in records) + "\n")
        report = os.path.join(self.tmp, "report.md")
        result = run_script("report", "--in", python_file, "--in", java_file, "--out", report)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(report, encoding="utf-8") as text:
            self.assertEqual(text.read(), EXPECTED_REPORT)

    def test_gpumem_alone_and_no_latency(self):
        text = trace_replay.render_report([JAVA_RECORDS[0]])
        self.assertIn("gpumem: no other allocator to compare with.", text)
        self.assertIn("No latency measurements.", text)

    def test_bad_record_file_exits_2(self):
        path = os.path.join(self.tmp, "bad.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            out.write(json.dumps(JAVA_RECORDS[0]) + "\n{not json\n")
        result = run_script("report", "--in", path, "--out", os.path.join(self.tmp, "r.md"))
        self.assertEqual(result.returncode, 2)
        self.assertIn(f"records {path} line 2: not JSON", result.stderr)


if __name__ == "__main__":
    unittest.main()
