"""Replay gpumem allocation traces against other GPU allocators and report how they compare.

The Java side (gpumem) records request traces and replays them through its own pool; this script replays the same
traces through PyTorch's CUDA caching allocator (with and without expandable segments), CuPy's memory pool and CUDA's
stream-ordered pool (cudaMallocAsync), measures the device memory each one holds at its peak, times raw
alloc+free pairs through a small C++ extension (allocator_latency.cpp), and writes one markdown report from the
Python and Java records.

Each allocator runs in a child process of its own: PyTorch reads PYTORCH_CUDA_ALLOC_CONF once per process, and a
crash or hang in one allocator must not cost the others their results. Records are appended to a JSON-lines file as
each one is measured, so a run that is cut short keeps what it measured.

Usage:
    python3 trace_replay.py replay --allocators torch,torch-expandable,cupy,cuda-async \\
        --trace a.trace --trace b.trace.gz --out replay.jsonl [--timeout 240]
    python3 trace_replay.py latency --allocators torch,torch-expandable \\
        --sizes 1024,65536,1048576,16777216,67108864 --iterations 10000 --out latency.jsonl [--build-dir DIR]
    python3 trace_replay.py report --in replay.jsonl --in latency.jsonl --in java.jsonl --out report.md

Trace format (UTF-8 text, gzip-compressed when the name ends in .gz):
    # gpumem trace 1
    # name service-uniform-64
    # source ServiceReplay schedule: ...
    a ID BYTES WORKER
    c ID WORKER

Only the stand-in allocator runs without a GPU; torch, cupy and CUDA are imported inside the code that needs them.
Exit codes: 0 when every record was written (an allocator's failure is written as an error record), 1 when no
allocator produced a result, 2 for bad arguments or a malformed trace or record file.
"""

import argparse
import bisect
import dataclasses
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HEADER = "# gpumem trace 1"
MIB = 1024 * 1024
KIB = 1024
MISSING = "\u2013"
RECORD_PREFIX = "@record "
DEFAULT_REPLAY_ALLOCATORS = "torch,torch-expandable,cupy,cuda-async"
DEFAULT_LATENCY_ALLOCATORS = "torch,torch-expandable"
DEFAULT_SIZES = "1024,65536,1048576,16777216,67108864"
REPORT_ALLOCATOR_ORDER = ("gpumem", "gpumem-fixed", "torch", "torch-expandable", "cupy", "cuda-async", "stand-in")
LATENCY_COLUMN_ORDER = (
    "gpumem hit",
    "torch",
    "torch-expandable",
    "cudaMallocAsync",
    "cudaMalloc",
    "cuMemAllocAsync+cuMemFreeAsync (JCuda)",
    "cuMemAlloc+cuMemFree (JCuda)",
)
LATENCY_BASELINE = "gpumem hit"
LATENCY_RATIO_COLUMNS = ("cudaMallocAsync", "cuMemAllocAsync+cuMemFreeAsync (JCuda)")
TORCH_ALLOC_CONF = {"torch": "expandable_segments:False", "torch-expandable": "expandable_segments:True"}
CUDA_MEM_POOL_ATTR_RELEASE_THRESHOLD = 4
CUDA_MEM_POOL_ATTR_RESERVED_MEM_HIGH = 6
UINT64_MAX = 2**64 - 1
_NON_NEGATIVE = re.compile(r"[0-9]+")
_INTEGER = re.compile(r"[+-]?[0-9]+")


# ---------------------------------------------------------------------------------------------------------------------
# Traces


@dataclasses.dataclass
class Trace:
    """A parsed trace: events in order, plus the numbers every allocator is measured against."""

    path: str
    name: str
    source: str
    events: list
    acquires: int
    peak_lent_bytes: int


def _open_text(path):
    if str(path).endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, "r", encoding="utf-8-sig")


def read_trace(path):
    """Read and check a trace file; raise ValueError naming the file, line number, line and broken rule."""
    path = str(path)
    name = None
    source = None
    events = []
    acquired_at = {}
    closed_at = {}
    open_bytes = {}
    lent = 0
    peak_lent = 0

    def fail(number, line, rule):
        raise ValueError(f"trace {path} line {number}: {line!r}: {rule}")

    with _open_text(path) as text:
        number = 0
        for number, raw in enumerate(text, start=1):
            line = raw.rstrip("\r\n")
            if number == 1:
                if line.rstrip() != HEADER:
                    fail(number, line, f"missing header: the first line must be {HEADER!r}")
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("#"):
                if stripped.startswith("# name "):
                    if name is not None:
                        fail(number, line, "the trace name is given twice")
                    name = stripped[len("# name "):].strip()
                    if not name:
                        fail(number, line, "the trace name is empty")
                elif stripped.startswith("# source "):
                    source = stripped[len("# source "):].strip()
                continue
            fields = stripped.split()
            op = fields[0]
            if op == "a":
                if len(fields) != 4:
                    fail(number, line, f"'a' takes 3 fields (ID BYTES WORKER), found {len(fields) - 1}")
                buffer_id = _parse_id(fields[1], number, line, fail)
                if not _INTEGER.fullmatch(fields[2]):
                    fail(number, line, f"BYTES {fields[2]!r} is not an integer")
                nbytes = int(fields[2])
                if nbytes <= 0:
                    fail(number, line, f"BYTES must be positive, found {nbytes}")
                worker = _parse_worker(fields[3], number, line, fail)
                if buffer_id in acquired_at:
                    fail(number, line, f"buffer {buffer_id} was already acquired on line {acquired_at[buffer_id]}")
                acquired_at[buffer_id] = number
                open_bytes[buffer_id] = nbytes
                lent += nbytes
                peak_lent = max(peak_lent, lent)
                events.append(("a", buffer_id, nbytes, worker))
            elif op == "c":
                if len(fields) != 3:
                    fail(number, line, f"'c' takes 2 fields (ID WORKER), found {len(fields) - 1}")
                buffer_id = _parse_id(fields[1], number, line, fail)
                worker = _parse_worker(fields[2], number, line, fail)
                if buffer_id not in acquired_at:
                    fail(number, line, f"buffer {buffer_id} was never acquired")
                if buffer_id in closed_at:
                    fail(number, line, f"buffer {buffer_id} was already closed on line {closed_at[buffer_id]}")
                closed_at[buffer_id] = number
                lent -= open_bytes.pop(buffer_id)
                events.append(("c", buffer_id, worker))
            else:
                fail(number, line, f"unknown operation {op!r} (expected 'a' or 'c')")
    if number == 0:
        raise ValueError(f"trace {path}: the file is empty: missing header {HEADER!r}")
    if name is None:
        raise ValueError(f"trace {path}: missing '# name' line")
    return Trace(path, name, source, events, len(acquired_at), peak_lent)


def _parse_id(text, number, line, fail):
    if not _NON_NEGATIVE.fullmatch(text):
        fail(number, line, f"ID {text!r} is not a non-negative integer")
    return int(text)


def _parse_worker(text, number, line, fail):
    if not _NON_NEGATIVE.fullmatch(text):
        fail(number, line, f"WORKER {text!r} is not a non-negative integer")
    return int(text)


# ---------------------------------------------------------------------------------------------------------------------
# Allocators


class StandInAllocator:
    """A deterministic pure-Python caching allocator for tests off the GPU.

    Each request is rounded up to a multiple of 512 B. An allocation takes the smallest cached free block whose size
    is at least the rounded size and less than twice it; otherwise it makes a new block of exactly the rounded size,
    which counts as one driver allocation and grows the reserved bytes. A free puts the block back in the cache.
    Blocks are never split, merged or given back before close(), so the peak reserved is everything ever reserved.
    """

    name = "stand-in"
    granularity = 512

    def __init__(self):
        self._free = []
        self._blocks = {}
        self._next_handle = 0
        self._reserved = 0
        self._peak_reserved = 0
        self._driver_allocations = 0

    def alloc(self, nbytes):
        size = -(-nbytes // self.granularity) * self.granularity
        index = bisect.bisect_left(self._free, (size, -1))
        if index < len(self._free) and self._free[index][0] < 2 * size:
            block_size, handle = self._free.pop(index)
        else:
            block_size, handle = size, self._next_handle
            self._next_handle += 1
            self._driver_allocations += 1
            self._reserved += size
            self._peak_reserved = max(self._peak_reserved, self._reserved)
        self._blocks[handle] = block_size
        return handle

    def free(self, handle):
        bisect.insort(self._free, (self._blocks.pop(handle), handle))

    def peak_reserved_bytes(self):
        return self._peak_reserved

    def driver_allocations(self):
        return self._driver_allocations

    def extra_fields(self):
        return {}

    def close(self):
        self._free.clear()
        self._blocks.clear()
        self._reserved = 0


_torch_state = {}


def _import_torch(alloc_conf):
    """Import torch with PYTORCH_CUDA_ALLOC_CONF set first, initialise CUDA and return the module."""
    if "torch" not in sys.modules:
        os.environ["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
        os.environ["PYTORCH_ALLOC_CONF"] = alloc_conf
    elif os.environ.get("PYTORCH_CUDA_ALLOC_CONF") != alloc_conf:
        raise RuntimeError(
            f"torch was imported before PYTORCH_CUDA_ALLOC_CONF={alloc_conf} could be set; "
            "run each torch allocator in a process of its own")
    import torch

    if "ready" not in _torch_state:
        torch.cuda.init()
        warm_up = torch.empty(1, device="cuda")
        del warm_up
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        _torch_state["ready"] = True
    return torch


class TorchCachingAllocator:
    """PyTorch's CUDA caching allocator, driven through caching_allocator_alloc/delete on one side stream.

    Peak reserved is torch.cuda.max_memory_reserved() after reset_peak_memory_stats(); driver allocations are the
    growth of memory_stats()['num_device_alloc'] (device allocation calls, mapped and malloced) or, on a PyTorch
    without that key, of 'segment.all.allocated'. The key used is recorded.
    """

    def __init__(self, expandable):
        self.name = "torch-expandable" if expandable else "torch"
        self._alloc_conf = TORCH_ALLOC_CONF[self.name]
        torch = _import_torch(self._alloc_conf)
        self._torch = torch
        if "stream" not in _torch_state:
            _torch_state["stream"] = torch.cuda.Stream()
        self._stream = _torch_state["stream"]
        self._device = torch.cuda.current_device()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        stats = torch.cuda.memory_stats()
        self._count_key = "num_device_alloc" if "num_device_alloc" in stats else "segment.all.allocated"
        self._count_start = stats.get(self._count_key, 0)

    def alloc(self, nbytes):
        return self._torch.cuda.caching_allocator_alloc(nbytes, self._device, self._stream)

    def free(self, handle):
        self._torch.cuda.caching_allocator_delete(handle)

    def peak_reserved_bytes(self):
        return self._torch.cuda.max_memory_reserved()

    def driver_allocations(self):
        return self._torch.cuda.memory_stats().get(self._count_key, 0) - self._count_start

    def extra_fields(self):
        return {
            "driverAllocationsFrom": self._count_key,
            "allocConf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF"),
            "expandableSegments": self._expandable_segments_seen(),
        }

    def _expandable_segments_seen(self):
        try:
            flags = [segment.get("is_expandable") for segment in self._torch.cuda.memory_snapshot()]
        except Exception:
            return None
        flags = [flag for flag in flags if flag is not None]
        return any(flags) if flags else None

    def close(self):
        self._torch.cuda.synchronize()
        self._torch.cuda.empty_cache()


def _import_cupy():
    import cupy

    cupy.cuda.runtime.memGetInfo()
    return cupy


class CupyPoolAllocator:
    """CuPy's cupy.cuda.MemoryPool over a base allocator that counts calls to CuPy's cudaMalloc wrapper.

    Peak reserved is the largest pool.total_bytes() seen after any allocation.
    """

    name = "cupy"

    def __init__(self):
        cupy = _import_cupy()
        base_malloc = cupy.cuda.memory._malloc
        self._base_calls = 0

        def counting_malloc(size):
            self._base_calls += 1
            return base_malloc(size)

        self._pool = cupy.cuda.MemoryPool(counting_malloc)
        self._pointers = {}
        self._next_handle = 0
        self._peak = 0

    def alloc(self, nbytes):
        pointer = self._pool.malloc(nbytes)
        self._peak = max(self._peak, self._pool.total_bytes())
        handle = self._next_handle
        self._next_handle += 1
        self._pointers[handle] = pointer
        return handle

    def free(self, handle):
        del self._pointers[handle]

    def peak_reserved_bytes(self):
        return self._peak

    def driver_allocations(self):
        return self._base_calls

    def extra_fields(self):
        return {}

    def close(self):
        self._pointers.clear()
        self._pool.free_all_blocks()


_cupy_state = {}


class CudaAsyncAllocator:
    """CUDA's stream-ordered allocator (cudaMallocAsync/cudaFreeAsync) on the device's default memory pool.

    The pool's release threshold is set to the maximum so that it keeps what it reserved, like the other caching
    allocators. Peak reserved is cudaMemPoolAttrReservedMemHigh, reset before each trace; memGetInfoDeltaBytes is the
    largest drop of the device's free memory below its value at the start, sampled after every allocation. The pool
    does not count its driver calls, so driver allocations are None.
    """

    name = "cuda-async"

    def __init__(self):
        cupy = _import_cupy()
        runtime = cupy.cuda.runtime
        self._runtime = runtime
        if "stream" not in _cupy_state:
            _cupy_state["stream"] = cupy.cuda.Stream(non_blocking=True)
        self._stream = _cupy_state["stream"]
        self._pool = runtime.deviceGetDefaultMemPool(runtime.getDevice())
        self._release_threshold = getattr(
            runtime, "cudaMemPoolAttrReleaseThreshold", CUDA_MEM_POOL_ATTR_RELEASE_THRESHOLD)
        self._reserved_high = getattr(runtime, "cudaMemPoolAttrReservedMemHigh", CUDA_MEM_POOL_ATTR_RESERVED_MEM_HIGH)
        runtime.memPoolSetAttribute(self._pool, self._release_threshold, UINT64_MAX)
        runtime.memPoolSetAttribute(self._pool, self._reserved_high, 0)
        self._free_at_start = runtime.memGetInfo()[0]
        self._largest_drop = 0

    def alloc(self, nbytes):
        pointer = self._runtime.mallocAsync(nbytes, self._stream.ptr)
        self._largest_drop = max(self._largest_drop, self._free_at_start - self._runtime.memGetInfo()[0])
        return pointer

    def free(self, handle):
        self._runtime.freeAsync(handle, self._stream.ptr)

    def peak_reserved_bytes(self):
        return self._runtime.memPoolGetAttribute(self._pool, self._reserved_high)

    def driver_allocations(self):
        return None

    def extra_fields(self):
        return {"memGetInfoDeltaBytes": self._largest_drop}

    def close(self):
        self._stream.synchronize()
        self._runtime.memPoolTrimTo(self._pool, 0)


ALLOCATORS = {
    "stand-in": StandInAllocator,
    "torch": lambda: TorchCachingAllocator(expandable=False),
    "torch-expandable": lambda: TorchCachingAllocator(expandable=True),
    "cupy": CupyPoolAllocator,
    "cuda-async": CudaAsyncAllocator,
}


# ---------------------------------------------------------------------------------------------------------------------
# Replay


def replay(trace, allocator):
    """Run the trace's events in order on the calling thread and return the record.

    The worker field is ignored: the Python allocators cache per stream, not per thread, so one thread on one stream
    replays every worker's requests. Buffers still open at the end are freed after the timed loop; peak figures are
    read before allocator.close(), which the caller does.
    """
    handles = {}
    started = time.perf_counter()
    try:
        for event in trace.events:
            if event[0] == "a":
                handles[event[1]] = allocator.alloc(event[2])
            else:
                allocator.free(handles.pop(event[1]))
        seconds = time.perf_counter() - started
    finally:
        for handle in handles.values():
            try:
                allocator.free(handle)
            except Exception:
                pass
    peak_reserved = allocator.peak_reserved_bytes()
    record = {
        "trace": trace.name,
        "allocator": getattr(allocator, "name", type(allocator).__name__),
        "acquires": trace.acquires,
        "peakLentBytes": trace.peak_lent_bytes,
        "peakReservedBytes": peak_reserved,
        "reservedPerLent": round(peak_reserved / trace.peak_lent_bytes, 3) if trace.peak_lent_bytes else None,
        "driverAllocations": allocator.driver_allocations(),
        "seconds": round(seconds, 6),
    }
    record.update(allocator.extra_fields())
    return record


def _describe(error):
    text = f"{type(error).__name__}: {error}"
    return " ".join(text.split())


def replay_allocator(name, traces, registry=None):
    """Replay every trace on a fresh instance of the named allocator; yield one record per trace.

    A failure on one trace yields an error record for it and the next trace starts afresh.
    """
    registry = ALLOCATORS if registry is None else registry
    for trace in traces:
        if name not in registry:
            yield {"trace": trace.name, "allocator": name,
                   "error": f"unknown allocator {name!r}; known: {', '.join(sorted(registry))}"}
            continue
        try:
            allocator = registry[name]()
        except Exception as error:
            traceback.print_exc()
            yield {"trace": trace.name, "allocator": name, "error": _describe(error)}
            continue
        try:
            record = replay(trace, allocator)
            record["allocator"] = name
        except Exception as error:
            traceback.print_exc()
            record = {"trace": trace.name, "allocator": name, "error": _describe(error)}
        try:
            allocator.close()
        except Exception as error:
            traceback.print_exc()
            record["closeError"] = _describe(error)
        yield record


# ---------------------------------------------------------------------------------------------------------------------
# Child processes


def run_child(command, timeout, on_record):
    """Run a child process, passing each record line it prints to on_record as it arrives.

    Returns None when the child exited with 0, else {"error": one line saying why (timeout, exit code or signal,
    and the last line of its stderr), "stderrTail": the last lines of its stderr}.
    """
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               start_new_session=True)
    stderr_lines = []

    def read_stdout():
        for raw in process.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            if line.startswith(RECORD_PREFIX):
                try:
                    record = json.loads(line[len(RECORD_PREFIX):])
                except ValueError:
                    stderr_lines.append(f"unreadable record line: {line[:200]}")
                    continue
                on_record(record)

    def read_stderr():
        for raw in process.stderr:
            sys.stderr.write(raw.decode("utf-8", "replace"))
            stderr_lines.append(raw.decode("utf-8", "replace").rstrip())
            del stderr_lines[:-40]

    readers = [threading.Thread(target=read_stdout, daemon=True), threading.Thread(target=read_stderr, daemon=True)]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            process.kill()
        process.wait()
    for reader in readers:
        reader.join(timeout=10)
    lines = [line.strip() for line in stderr_lines if line.strip()]
    if timed_out:
        error = f"timed out after {timeout:g} s"
    elif process.returncode < 0:
        error = f"child killed by signal {_signal_name(-process.returncode)}"
    elif process.returncode > 0:
        error = f"child exited with code {process.returncode}" + (f": {lines[-1]}" if lines else "")
    else:
        return None
    failure = {"error": error}
    if lines:
        failure["stderrTail"] = " / ".join(lines[-8:])[-2000:]
    return failure


def _signal_name(number):
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


class RecordWriter:
    """Appends records to a JSON-lines file as they arrive and prints one line for each."""

    def __init__(self, path):
        self.path = path
        self.succeeded = 0
        self.written = 0
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)

    def write(self, record):
        with open(self.path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        self.written += 1
        if "error" not in record:
            self.succeeded += 1
        print(describe_record(record), flush=True)


def describe_record(record):
    """One human-readable line for a replay or latency record."""
    if "trace" in record:
        subject = record["trace"]
    elif "bytes" in record:
        subject = _format_bytes(record["bytes"])
    else:
        subject = ""
    head = f"{subject} {record.get('allocator')}".strip()
    if "error" in record:
        return f"{head}: ERROR {record['error']}"
    if "nanosPerPair" in record:
        return f"{head}: {record['nanosPerPair']:.1f} ns per pair ({record.get('iterations')} iterations)"
    drivers = record.get("driverAllocations")
    return (f"{head}: peak reserved {record['peakReservedBytes'] / MIB:.1f} MiB, "
            f"reserved/lent {_format_ratio(record.get('reservedPerLent'), 3)}, "
            f"driver allocations {MISSING if drivers is None else drivers}, {record.get('seconds', 0):.2f} s")


def _script_command(*arguments):
    return [sys.executable, os.path.abspath(__file__), *arguments]


def command_replay(arguments):
    allocators = _split_names(arguments.allocators)
    traces = [read_trace(path) for path in arguments.trace]
    writer = RecordWriter(arguments.out)
    for name in allocators:
        pending = [trace.name for trace in traces]

        def on_record(record, pending=pending):
            if record.get("trace") in pending:
                pending.remove(record["trace"])
            writer.write(record)

        trace_arguments = []
        for trace in traces:
            trace_arguments += ["--trace", os.path.abspath(trace.path)]
        failure = run_child(_script_command("replay-child", "--allocator", name, *trace_arguments),
                            arguments.timeout, on_record)
        for trace_name in pending:
            writer.write({"trace": trace_name, "allocator": name,
                          **(failure or {"error": "the child finished without a record for this trace"})})
    return 0 if writer.succeeded else 1


def _exit_when_orphaned(interval=1.0):
    """Exit this child as soon as the process that started it is gone, so that no orphan keeps the GPU busy."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def command_replay_child(arguments):
    _exit_when_orphaned()
    traces = [read_trace(path) for path in arguments.trace]
    for record in replay_allocator(arguments.allocator, traces):
        print(RECORD_PREFIX + json.dumps(record), flush=True)
    return 0


def command_latency(arguments):
    allocators = _split_names(arguments.allocators)
    sizes = _parse_sizes(arguments.sizes)
    writer = RecordWriter(arguments.out)
    for name in allocators:
        failure = run_child(
            _script_command("latency-child", "--allocator", name, "--sizes", ",".join(map(str, sizes)),
                            "--iterations", str(arguments.iterations),
                            "--malloc-iterations", str(arguments.malloc_iterations),
                            "--build-dir", os.path.abspath(arguments.build_dir)),
            arguments.timeout, writer.write)
        if failure:
            writer.write({"allocator": name, **failure, "from": "C++"})
    return 0 if writer.succeeded else 1


def load_latency_extension(build_dir):
    """Compile (or reuse) allocator_latency.cpp as a torch extension and return the module.

    torch waits forever on a build directory's 'lock' file; one left by a child killed while compiling is removed
    first, which is safe because the children run one at a time.
    """
    from torch.utils.cpp_extension import load

    os.makedirs(build_dir, exist_ok=True)
    stale_lock = os.path.join(build_dir, "lock")
    if os.path.exists(stale_lock):
        os.remove(stale_lock)
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "allocator_latency.cpp")
    return load(name="gpumem_allocator_latency", sources=[source], extra_cflags=["-O2"], build_directory=build_dir,
                with_cuda=True, verbose=False)


def command_latency_child(arguments):
    _exit_when_orphaned()
    if arguments.allocator not in TORCH_ALLOC_CONF:
        raise SystemExit(f"unknown latency allocator {arguments.allocator!r}; known: {', '.join(TORCH_ALLOC_CONF)}")
    _import_torch(TORCH_ALLOC_CONF[arguments.allocator])
    module = load_latency_extension(arguments.build_dir)
    sizes = _parse_sizes(arguments.sizes)
    measurements = [(arguments.allocator, module.torch_pair, arguments.iterations)]
    if arguments.allocator == "torch":
        measurements += [("cudaMallocAsync", module.cuda_async_pair, arguments.iterations),
                         ("cudaMalloc", module.cuda_pair, arguments.malloc_iterations)]
    for label, pair, iterations in measurements:
        for size in sizes:
            try:
                record = {"allocator": label, "bytes": size, "nanosPerPair": round(pair(size, iterations), 1),
                          "iterations": iterations, "from": "C++"}
            except Exception as error:
                traceback.print_exc()
                record = {"allocator": label, "bytes": size, "error": _describe(error), "from": "C++"}
            print(RECORD_PREFIX + json.dumps(record), flush=True)
    return 0


def _split_names(text):
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise ValueError("no allocator named")
    return names


def _parse_sizes(text):
    sizes = []
    for part in text.split(","):
        part = part.strip()
        if not _NON_NEGATIVE.fullmatch(part) or int(part) <= 0:
            raise ValueError(f"size {part!r} is not a positive integer")
        sizes.append(int(part))
    return sizes


# ---------------------------------------------------------------------------------------------------------------------
# Report


def read_records(path):
    """Read a JSON-lines record file; raise ValueError naming the file and line of a bad line."""
    records = []
    with open(path, "r", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as error:
                raise ValueError(f"records {path} line {number}: not JSON: {error}") from None
            if not isinstance(record, dict) or "allocator" not in record:
                raise ValueError(f"records {path} line {number}: not a record with an 'allocator' field")
            records.append(record)
    return records


def _format_mib(nbytes):
    return MISSING if nbytes is None else f"{nbytes / MIB:.1f}"


def _format_ratio(value, decimals):
    return MISSING if value is None else f"{value:.{decimals}f}"


def _format_bytes(nbytes):
    if nbytes % MIB == 0:
        return f"{nbytes // MIB} MiB"
    if nbytes % KIB == 0:
        return f"{nbytes // KIB} KiB"
    return f"{nbytes} B"


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|")


def _error_cell(error):
    text = _cell(error)
    return "error: " + (text if len(text) <= 200 else text[:199] + "\u2026")


def _ordered(names, preferred):
    known = [name for name in preferred if name in names]
    return known + sorted(name for name in names if name not in preferred)


def _reserved_per_lent(record):
    reserved, lent = record.get("peakReservedBytes"), record.get("peakLentBytes")
    if reserved is not None and lent:
        return reserved / lent
    return record.get("reservedPerLent")


def _comparison_line(by_allocator):
    gpumem = by_allocator.get("gpumem")
    if gpumem is None or gpumem.get("peakReservedBytes") is None:
        return "gpumem: no result for this trace."
    others = [(record["peakReservedBytes"], name) for name, record in by_allocator.items()
              if not name.startswith("gpumem") and record.get("peakReservedBytes") is not None]
    if not others:
        return "gpumem: no other allocator to compare with."
    best_bytes, best_name = min(others)
    mine = gpumem["peakReservedBytes"]
    if best_bytes == 0:
        return f"gpumem peak reserved {mine} B against the best of the others, {best_name} at 0 B."
    ratio = mine / best_bytes
    verdict = "at or below the best" if mine <= best_bytes else f"above the best by {(ratio - 1) * 100:.1f} %"
    return (f"gpumem peak reserved {mine} B against the best of the others, {best_name} at {best_bytes} B: "
            f"ratio {ratio:.3f}, {verdict}.")


def _replay_section(records):
    by_trace = {}
    for record in records:
        by_trace.setdefault(record["trace"], {})[record["allocator"]] = record
    lines = []
    for trace in sorted(by_trace):
        by_allocator = by_trace[trace]
        lines += [f"## Trace {trace}", "",
                  "| allocator | peak reserved (MiB) | peak lent (MiB) | reserved / lent | driver allocations |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for name in _ordered(by_allocator, REPORT_ALLOCATOR_ORDER):
            record = by_allocator[name]
            if "error" in record:
                lines.append(f"| {_cell(name)} | {_error_cell(record['error'])} | {MISSING} | {MISSING} | {MISSING} |")
                continue
            drivers = record.get("driverAllocations")
            lines.append(f"| {_cell(name)} | {_format_mib(record.get('peakReservedBytes'))} | "
                         f"{_format_mib(record.get('peakLentBytes'))} | "
                         f"{_format_ratio(_reserved_per_lent(record), 3)} | "
                         f"{MISSING if drivers is None else drivers} |")
        lines += ["", _comparison_line(by_allocator), ""]
    return lines


def _latency_section(records):
    cells = {}
    sources = {}
    errors = []
    for record in records:
        name = record["allocator"]
        if "nanosPerPair" in record and "bytes" in record:
            cells.setdefault(record["bytes"], {})[name] = record["nanosPerPair"]
            sources.setdefault(name, set()).add(str(record.get("from", "?")))
        elif "error" in record:
            where = f" at {_format_bytes(record['bytes'])}" if "bytes" in record else ""
            errors.append(f"- {_cell(name)} ({_cell(record.get('from', '?'))}){where}: {_error_cell(record['error'])}")
    lines = ["## Latency: ns per alloc+free pair", ""]
    if not cells:
        lines += ["No latency measurements.", ""]
    else:
        columns = _ordered(sources, LATENCY_COLUMN_ORDER)
        ratio_columns = [name for name in LATENCY_RATIO_COLUMNS if name == "cudaMallocAsync" or name in sources]
        header = ["size"] + columns + [f"{name} / {LATENCY_BASELINE}" for name in ratio_columns]
        lines += ["| " + " | ".join(_cell(title) for title in header) + " |",
                  "| --- |" + " ---: |" * (len(header) - 1)]
        for size in sorted(cells):
            row = cells[size]
            values = [_format_ratio(row.get(name), 1) for name in columns]
            baseline = row.get(LATENCY_BASELINE)
            for name in ratio_columns:
                other = row.get(name)
                values.append(_format_ratio(other / baseline, 1) if other is not None and baseline else MISSING)
            lines.append(f"| {_format_bytes(size)} | " + " | ".join(values) + " |")
        lines += ["", "Sources: " + "; ".join(f"{_cell(name)}: {', '.join(sorted(sources[name]))}"
                                              for name in columns) + ".", ""]
    if errors:
        lines += ["Errors:", ""] + sorted(errors) + [""]
    return lines


def render_report(records):
    """Render replay and latency records as markdown; records without duplicates give the same text in any order.

    Where a (trace, allocator) or (allocator, bytes) pair appears twice, the later record counts.
    """
    replay_records = [record for record in records if "trace" in record]
    latency_records = [record for record in records if "trace" not in record]
    lines = ["# Allocator comparison", ""]
    if replay_records:
        lines += _replay_section(replay_records)
    else:
        lines += ["No replay records.", ""]
    lines += _latency_section(latency_records)
    while lines and lines[-1] == "":
        lines.pop()
    return "\n".join(lines) + "\n"


def command_report(arguments):
    records = []
    for path in arguments.inputs:
        records += read_records(path)
    text = render_report(records)
    directory = os.path.dirname(os.path.abspath(arguments.out))
    os.makedirs(directory, exist_ok=True)
    with open(arguments.out, "w", encoding="utf-8") as out:
        out.write(text)
    print(f"wrote {arguments.out} from {len(records)} records")
    return 0


# ---------------------------------------------------------------------------------------------------------------------
# Command line


def _positive_int(text):
    if not _NON_NEGATIVE.fullmatch(text.strip()) or int(text) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return int(text)


def _positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not positive")
    return value


def build_parser():
    parser = argparse.ArgumentParser(description="Replay gpumem traces on other GPU allocators and report.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{replay,latency,report}")

    replay_parser = commands.add_parser("replay", help="replay traces, one child process per allocator")
    replay_parser.add_argument("--allocators", default=DEFAULT_REPLAY_ALLOCATORS,
                               help=f"comma-separated, from: {', '.join(ALLOCATORS)} "
                                    f"(default {DEFAULT_REPLAY_ALLOCATORS})")
    replay_parser.add_argument("--trace", action="append", required=True, help="trace file (.gz allowed); repeatable")
    replay_parser.add_argument("--out", required=True, help="JSON-lines file the records are appended to")
    replay_parser.add_argument("--timeout", type=_positive_float, default=240.0, help="seconds per child (default 240)")

    latency_parser = commands.add_parser("latency", help="time alloc+free pairs through allocator_latency.cpp")
    latency_parser.add_argument("--allocators", default=DEFAULT_LATENCY_ALLOCATORS,
                                help=f"comma-separated, from: {', '.join(TORCH_ALLOC_CONF)} "
                                     f"(default {DEFAULT_LATENCY_ALLOCATORS})")
    latency_parser.add_argument("--sizes", default=DEFAULT_SIZES,
                                help=f"bytes, comma-separated (default {DEFAULT_SIZES})")
    latency_parser.add_argument("--iterations", type=_positive_int, default=10000, help="pairs timed per size")
    latency_parser.add_argument("--malloc-iterations", type=_positive_int, default=200,
                                help="pairs timed per size for plain cudaMalloc+cudaFree (default 200)")
    latency_parser.add_argument("--out", required=True, help="JSON-lines file the records are appended to")
    latency_parser.add_argument("--build-dir", default=os.path.join(tempfile.gettempdir(), "gpumem_allocator_latency"),
                                help="build directory of the C++ extension")
    latency_parser.add_argument("--timeout", type=_positive_float, default=300.0,
                                help="seconds per child (default 300)")

    report_parser = commands.add_parser("report", help="write the markdown report from record files")
    report_parser.add_argument("--in", dest="inputs", action="append", required=True, help="JSON-lines record file")
    report_parser.add_argument("--out", required=True, help="markdown file to write")

    replay_child = commands.add_parser("replay-child")
    replay_child.add_argument("--allocator", required=True)
    replay_child.add_argument("--trace", action="append", required=True)

    latency_child = commands.add_parser("latency-child")
    latency_child.add_argument("--allocator", required=True)
    latency_child.add_argument("--sizes", required=True)
    latency_child.add_argument("--iterations", type=_positive_int, required=True)
    latency_child.add_argument("--malloc-iterations", type=_positive_int, required=True)
    latency_child.add_argument("--build-dir", required=True)
    return parser


COMMANDS = {
    "replay": command_replay,
    "replay-child": command_replay_child,
    "latency": command_latency,
    "latency-child": command_latency_child,
    "report": command_report,
}


def main(argv=None):
    arguments = build_parser().parse_args(argv)
    try:
        return COMMANDS[arguments.command](arguments)
    except (ValueError, OSError) as error:
        print(f"{sys.argv[0]} {arguments.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
