"""perseus on a real NVIDIA GPU, end to end: `python3 -m perseus.gpu_check`.

1. Profiles a real transformer layer (torch.nn.TransformerEncoderLayer, sized
   so a forward takes ~8 ms) offline at a few SM clocks with thermally stable
   windows: a warm-up until the power settles, windows of >= 5 s per clock so
   the ~100 ms energy counter is accurate (power is taken between counter
   updates, over whole update periods), clocks visited in an interleaved order
   and then again in reverse so thermal drift cancels, a forward-only and a
   forward+backward window per clock so forward and backward energy separate.
   Prints the profile: clock, forward/backward time and energy, with the
   half-difference between the two passes as the uncertainty.
2. Computes the frontier of an emulated pipeline of that layer (stages of
   2, 2, 2 and 3 layers, 1F1B) with perseus.build_problem / solve_frontier,
   runs all-max and the no-slowdown plan for real on this GPU over long
   windows (every computation at its plan's clock, stage after stage), and
   prints predicted and measured energy, savings and slowdown.
3. Measures what a clock change does to the computations running through
   it: forwards back to back at one clock, the clock locked to another
   between two of them, and each forward's duration and NVML's reported
   clock after the lock call; compared with two models of a late switch
   (docs/real_gpu.md, "Clock switches as the computations see them").
4. Profiles the layer online through the perseus runtime (`perseus serve` and
   perseus.RankClient) and compares the two profiles, when a perseus binary is
   at hand; otherwise prints "online profiling comparison: not run (<reason>)".

Locking clocks needs root, or a running perseusd (--daemon SOCKET). Without a
GPU (no NVML, no GPU, or torch.cuda.is_available() False) it prints one line,
"skipped: no NVIDIA GPU (...)", and exits 0; a library path given that is
missing or not a library is an error (exit 1). docs/real_gpu.md explains the
figures. scripts/gpu_check.sh runs `perseus doctor` first, then this.
"""
import argparse
import collections
import contextlib
import csv
import ctypes
import io
import json
import math
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from ._argtypes import integer, integer_list, seconds

NVML_SUCCESS = 0
NVML_ERROR_NO_PERMISSION = 4
NVML_CLOCK_SM = 1


# ---------------------------------------------------------------------------
# Pure helpers (tested in python/tests/test_gpu_check.py)
# ---------------------------------------------------------------------------

def counter_power(samples):
    """Mean power from polled (time_s, energy_j) readings of a counter that
    updates in steps: the energy between the first and the last update seen,
    over the time between them (whole update periods, so the steps do not bias
    it). Returns (power_w, span_s, updates). With fewer than two updates it
    falls back to the first and last readings (span_s then says how long)."""
    if len(samples) < 2:
        raise ValueError("need at least 2 energy readings")
    changes = [cur for prev, cur in zip(samples, samples[1:]) if cur[1] != prev[1]]
    if len(changes) < 2:
        (t0, e0), (t1, e1) = samples[0], samples[-1]
        return ((e1 - e0) / (t1 - t0) if t1 > t0 else 0.0), t1 - t0, len(changes)
    (t0, e0), (t1, e1) = changes[0], changes[-1]
    return (e1 - e0) / (t1 - t0), t1 - t0, len(changes)


def choose_clocks(supported_mhz, count, lowest_fraction=0.5):
    """`count` supported clocks evenly spread from the highest down to
    `lowest_fraction` of it, descending, the highest always included."""
    top = max(supported_mhz)
    chosen = []
    for i in range(count):
        target = top - (top - top * lowest_fraction) * i / max(1, count - 1)
        nearest = min(supported_mhz, key=lambda f: (abs(f - target), -f))
        if nearest not in chosen:
            chosen.append(nearest)
    return sorted(chosen, reverse=True)


def interleave(clocks):
    """Highest, lowest, second highest, second lowest, ...: neighbouring
    windows differ a lot, so a slow drift does not line up with the clock."""
    order, lo, hi = [], 0, len(clocks) - 1
    while lo <= hi:
        order.append(clocks[lo])
        if lo != hi:
            order.append(clocks[hi])
        lo, hi = lo + 1, hi - 1
    return order


def one_f_one_b(stage, stages, microbatches):
    """The 1F1B order of one stage: [(instruction, microbatch), ...]."""
    warmup = min(stages - stage - 1, microbatches)
    order = [("forward", m) for m in range(warmup)]
    f, b = warmup, 0
    while f < microbatches:
        order += [("forward", f), ("backward", b)]
        f, b = f + 1, b + 1
    return order + [("backward", m) for m in range(b, microbatches)]


def replay_pipeline(stage_ops, duration):
    """One iteration of a pipeline replayed from computation durations.

    stage_ops: per stage, [(instruction, microbatch, ...), ...] in execution
    order; duration(stage, instruction, microbatch) -> seconds. A forward
    waits for the previous stage's forward of its microbatch, a backward for
    the next stage's backward (the last stage's for its own forward);
    communication takes no time, as in perseus's model. Returns
    (iteration_time_s, [busy_s per stage])."""
    stages = len(stage_ops)
    finish, pos, free = {}, [0] * stages, [0.0] * stages
    remaining = sum(len(ops) for ops in stage_ops)
    while remaining:
        progressed = False
        for s, ops in enumerate(stage_ops):
            while pos[s] < len(ops):
                ins, mb = ops[pos[s]][0], ops[pos[s]][1]
                if ins == "forward":
                    dep = (s - 1, "forward", mb) if s > 0 else None
                else:
                    dep = (s + 1, "backward", mb) if s < stages - 1 else (s, "forward", mb)
                if dep is not None and dep not in finish:
                    break
                start = max(free[s], finish[dep] if dep is not None else 0.0)
                free[s] = finish[(s, ins, mb)] = start + duration(s, ins, mb)
                pos[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:
            raise ValueError("the stage schedules wait on each other forever")
    busy = [sum(duration(s, op[0], op[1]) for op in ops) for s, ops in enumerate(stage_ops)]
    return max(free), busy


def profile_csv(rows, stage_layers):
    """Zeus-format profile text of a pipeline whose stage s runs the layer
    stage_layers[s] times per computation. rows: dicts with clock_mhz,
    forward_s, backward_s, forward_j, backward_j (one layer)."""
    out = ["stage,instruction,frequency,time,energy"]
    for s, k in enumerate(stage_layers):
        for ins in ("forward", "backward"):
            for r in rows:
                out.append("%d,%s,%d,%.9f,%.9f" % (s, ins, r["clock_mhz"], k * r[ins + "_s"], k * r[ins + "_j"]))
    return "\n".join(out) + "\n"


def parse_profile_rows(text):
    """{(stage, instruction, clock_mhz): (time_s, energy_j)} from Zeus CSV text."""
    rows = {}
    for r in csv.DictReader(io.StringIO(text)):
        rows[(int(r["stage"]), r["instruction"], int(float(r["frequency"])))] = (float(r["time"]), float(r["energy"]))
    return rows


def compare_profiles(offline, online):
    """Per online clock within the offline clocks' range (stage 0): relative
    differences of online vs offline time and energy, the offline figures
    interpolated linearly in the clock between the two nearest offline clocks
    (exact where both profiled the clock). offline: rows as for profile_csv;
    online: as parse_profile_rows returns. [(clock, instruction, dtime,
    denergy, exact), ...], by clock descending."""
    by_clock = sorted(offline, key=lambda r: r["clock_mhz"])
    out = []
    for (stage, ins, clock), (t, e) in sorted(online.items(), key=lambda kv: (-kv[0][2], kv[0][1])):
        if stage != 0 or ins not in ("forward", "backward") or not by_clock:
            continue
        if not by_clock[0]["clock_mhz"] <= clock <= by_clock[-1]["clock_mhz"]:
            continue
        hi = next(i for i, r in enumerate(by_clock) if r["clock_mhz"] >= clock)
        lo = hi if by_clock[hi]["clock_mhz"] == clock else hi - 1
        a, b = by_clock[lo], by_clock[hi]
        w = 0.0 if a is b else (clock - a["clock_mhz"]) / (b["clock_mhz"] - a["clock_mhz"])
        ref_t = a[ins + "_s"] + w * (b[ins + "_s"] - a[ins + "_s"])
        ref_e = a[ins + "_j"] + w * (b[ins + "_j"] - a[ins + "_j"])
        out.append((clock, ins, t / ref_t - 1, e / ref_e - 1, a is b))
    return out


def switch_timing(before_s, after, to_mhz):
    """What one clock change did, from forwards timed around it.

    before_s: forward durations at the old clock, before the lock call.
    after: (start s after the lock call, duration s, NVML's SM clock read
    after the forward) for every forward after the call, back to back; the
    last third must run at the new clock. Returns the old and new forward
    durations (medians), when NVML first showed `to_mhz` (the end of the first
    forward after which it read so, or None), when the computations reached
    the new speed (`effective_s`: the start of the first forward closer to the
    new duration than the old, or of the one before it when that one is more
    than 5% of the way and beyond three times the old forwards' median
    absolute deviation, plus the part of it that ran at the old speed),
    forwards in between (neither within 25% of the gap of either duration),
    the measured extra time `late_s` (sum of durations - count * new) and what
    two models predict for it with the NVML latency L: the GPU runs at the old
    clock for L seconds whatever it runs (`late_full_s`), or only the first
    computation after the change runs late (`late_first_s`, what
    OptionWithClockLatency assumes when L exceeds a computation)."""
    if len(before_s) < 3 or len(after) < 6:
        return None
    old = statistics.median(before_s)
    settled = after[len(after) - len(after) // 3:]
    new = statistics.median(d for _, d, _ in settled)
    gap = old - new
    out = {"old_s": old, "new_s": new, "forwards": len(after), "nvml_s": None, "effective_s": None,
           "between": 0, "late_s": sum(d for _, d, _ in after) - len(after) * new}
    for t, d, mhz in after:
        if mhz == to_mhz:
            out["nvml_s"] = t + d
            break
    if abs(gap) < 0.02 * old:  # the two clocks run this layer at the same speed (capped, or not GPU-bound)
        return out
    noise = 3 * statistics.median(abs(d - old) for d in before_s)  # the old forwards' own spread
    for i, (t, d, _) in enumerate(after):
        if abs(d - new) < abs(d - old):
            prev = after[i - 1][1] if i > 0 else old
            if (prev - old) / (new - old) > 0.05 and abs(prev - old) > noise:
                t, d = after[i - 1][0], after[i - 1][1]  # the one before already ran partly at the new speed
            # d = x + (1 - x / old) * new for x seconds at the old clock
            x = min(max((d - new) * old / gap, 0.0), d)
            out["effective_s"] = t + x
            break
    out["between"] = sum(1 for _, d, _ in after if min(abs(d - old), abs(d - new)) > 0.25 * abs(gap))
    latency = out["nvml_s"]
    if latency is not None:
        out["late_full_s"] = latency * (1 - new / old)
        out["late_first_s"] = min(latency, old) * (1 - new / old)
    return out


class NvmlPathError(Exception):
    """A library path someone gave that is missing or not a library."""


def nvml_skip_reason(library):
    """None when NVML loads and sees a GPU; else why not, for the skip line.

    Only a library named the driver's way (a file name the loader searches
    for) can mean no driver. A path (--nvml-library, PERSEUS_NVML_LIBRARY)
    that is missing or not a library raises NvmlPathError: a mistyped path
    must not read as a machine without a GPU (as perseus doctor says).
    """
    try:
        nvml = Nvml(library)
    except OSError as e:
        if "/" in library:
            if not os.path.exists(library):
                raise NvmlPathError("%s does not exist: --nvml-library or PERSEUS_NVML_LIBRARY names a missing file "
                                    "(unset, the driver's libnvidia-ml.so.1 is looked for)" % library) from e
            raise NvmlPathError("%s is not a library this machine can load (%s)" % (library, e)) from e
        if "No such file" in str(e) or "cannot open" in str(e):
            return "no NVIDIA driver: %s not found" % library
        return "no NVIDIA driver: %s cannot be loaded: %s" % (library, e)
    except NvmlError as e:
        return "no NVIDIA driver: %s" % e
    except AttributeError as e:  # a library without the NVML symbols
        if "/" in library:
            raise NvmlPathError("%s is not a usable NVML library: %s" % (library, e)) from e
        return "%s is not a usable NVML library: %s" % (library, e)
    try:
        if nvml.count() == 0:
            return "NVML sees no GPU"
    finally:
        nvml.shutdown()
    return None


# ---------------------------------------------------------------------------
# The GPU: NVML through ctypes for reading (no root needed) and, as root, for
# locking clocks; or perseusd (no root) for locking.
# ---------------------------------------------------------------------------

class NvmlError(Exception):
    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


class Nvml:
    """The NVML calls this script needs (the same ones perseus's NvmlGpu uses)."""

    def __init__(self, library):
        self.lib = ctypes.CDLL(library)
        self.lib.nvmlErrorString.restype = ctypes.c_char_p
        self._check(self.lib.nvmlInit_v2(), "nvmlInit_v2")

    def _check(self, r, call):
        if r != NVML_SUCCESS:
            text = self.lib.nvmlErrorString(r)
            raise NvmlError("%s: %s (NVML error %d)" % (call, text.decode() if text else "?", r), r)

    def shutdown(self):
        self.lib.nvmlShutdown()

    def count(self):
        n = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetCount_v2(ctypes.byref(n)), "nvmlDeviceGetCount_v2")
        return n.value

    def handle(self, index):
        h = ctypes.c_void_p()
        self._check(self.lib.nvmlDeviceGetHandleByIndex_v2(ctypes.c_uint(index), ctypes.byref(h)),
                    "nvmlDeviceGetHandleByIndex_v2(%d)" % index)
        return h

    def _string(self, fn, h, call):
        buf = ctypes.create_string_buffer(96)
        self._check(fn(h, buf, ctypes.c_uint(len(buf))), call)
        return buf.value.decode()

    def name(self, h):
        return self._string(self.lib.nvmlDeviceGetName, h, "nvmlDeviceGetName")

    def uuid(self, h):
        return self._string(self.lib.nvmlDeviceGetUUID, h, "nvmlDeviceGetUUID")

    def _list(self, fn, call, *args):
        n = ctypes.c_uint(256)
        buf = (ctypes.c_uint * 256)()
        self._check(fn(*args, ctypes.byref(n), buf), call)
        return list(buf[:n.value])

    def supported_sm_clocks(self, h):
        """SM clocks at the highest memory clock, descending (as perseus lists them)."""
        memory = self._list(self.lib.nvmlDeviceGetSupportedMemoryClocks, "nvmlDeviceGetSupportedMemoryClocks", h)
        top = max(memory)
        graphics = self._list(self.lib.nvmlDeviceGetSupportedGraphicsClocks,
                              "nvmlDeviceGetSupportedGraphicsClocks", h, ctypes.c_uint(top))
        return sorted(set(graphics), reverse=True)

    def lock(self, h, mhz):
        self._check(self.lib.nvmlDeviceSetGpuLockedClocks(h, ctypes.c_uint(mhz), ctypes.c_uint(mhz)),
                    "nvmlDeviceSetGpuLockedClocks(%d)" % mhz)

    def unlock(self, h):
        self._check(self.lib.nvmlDeviceResetGpuLockedClocks(h), "nvmlDeviceResetGpuLockedClocks")

    def energy_j(self, h):
        mj = ctypes.c_ulonglong()
        self._check(self.lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(mj)),
                    "nvmlDeviceGetTotalEnergyConsumption")
        return mj.value / 1000.0

    def power_w(self, h):
        mw = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(mw)), "nvmlDeviceGetPowerUsage")
        return mw.value / 1000.0

    def achieved_sm_clock(self, h):
        mhz = ctypes.c_uint()
        self._check(self.lib.nvmlDeviceGetClockInfo(h, ctypes.c_int(NVML_CLOCK_SM), ctypes.byref(mhz)),
                    "nvmlDeviceGetClockInfo(SM)")
        return mhz.value


class DaemonClocks:
    """Locks clocks through perseusd's socket (docs/gpu_control.md, "Protocol")."""

    def __init__(self, path, gpu):
        self.gpu = gpu
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb")
        self._call({"op": "hello", "gpu": gpu})

    def _call(self, request):
        self.file.write((json.dumps(request) + "\n").encode())
        self.file.flush()
        line = self.file.readline()
        if not line:
            raise RuntimeError("perseusd closed the connection")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError("perseusd: %s" % reply.get("error"))
        return reply

    def lock(self, mhz):
        self._call({"op": "set_clock", "gpu": self.gpu, "sm_clock_mhz": mhz})

    def unlock(self):
        self._call({"op": "reset", "gpu": self.gpu})

    def close(self):
        self.sock.close()  # perseusd resets whatever this connection locked


class Gpu:
    """One GPU: NVML for reading, NVML or perseusd for locking."""

    def __init__(self, nvml, index, daemon_socket=""):
        self.nvml, self.index = nvml, index
        self.h = nvml.handle(index)
        self.name, self.uuid = nvml.name(self.h), nvml.uuid(self.h)
        self.clocks = nvml.supported_sm_clocks(self.h)
        self.daemon = DaemonClocks(daemon_socket, index) if daemon_socket else None
        self.locked = None

    def lock(self, mhz):
        if mhz == self.locked:
            return
        if self.daemon:
            self.daemon.lock(mhz)
        else:
            self.nvml.lock(self.h, mhz)
        self.locked = mhz

    def unlock(self):
        if self.locked is None:
            return
        self.locked = None
        if self.daemon:
            self.daemon.unlock()
        else:
            self.nvml.unlock(self.h)

    def close(self):
        try:
            self.unlock()
        finally:
            if self.daemon:
                self.daemon.close()

    def energy_j(self):
        return self.nvml.energy_j(self.h)

    def power_w(self):
        return self.nvml.power_w(self.h)

    def achieved_mhz(self):
        try:
            return self.nvml.achieved_sm_clock(self.h)
        except (NvmlError, AttributeError):  # AttributeError: a library without nvmlDeviceGetClockInfo
            return None


# ---------------------------------------------------------------------------
# Running work on the GPU while reading the energy counter
# ---------------------------------------------------------------------------

class Meter:
    """Energy and achieved-clock readings, taken whenever the host waits on the GPU."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.energy = []   # (time_s, energy_j)
        self.clocks = []   # achieved MHz, about every 100 ms
        self._next_clock_s = 0.0

    def reset(self):
        self.energy, self.clocks = [], []

    def read(self):
        now = time.perf_counter()
        self.energy.append((now, self.gpu.energy_j()))
        if now >= self._next_clock_s:
            mhz = self.gpu.achieved_mhz()
            if mhz is not None:
                self.clocks.append(mhz)
            self._next_clock_s = now + 0.1

    def wait(self, event):
        """Reads the counter about every 0.5 ms until `event` (a CUDA event) has completed."""
        while not event.query():
            self.read()
            time.sleep(0.0005)
        self.read()


class Layer:
    """A TransformerEncoderLayer forward and backward on one CUDA device."""

    def __init__(self, torch, device, d_model, nhead, ffn, seq, batch, dtype):
        self.torch, self.device = torch, device
        self.d_model, self.nhead, self.ffn, self.seq, self.batch, self.dtype = d_model, nhead, ffn, seq, batch, dtype
        self.module = torch.nn.TransformerEncoderLayer(d_model, nhead, ffn, dropout=0.0, batch_first=True,
                                                       device=device, dtype=dtype)
        self.resize(batch)

    def resize(self, batch):
        self.batch = batch
        self.x = self.torch.randn(batch, self.seq, self.d_model, device=self.device, dtype=self.dtype,
                                  requires_grad=True)
        self.grad = self.torch.randn(batch, self.seq, self.d_model, device=self.device, dtype=self.dtype)

    def forward(self, layers=1):
        y = self.x
        for _ in range(layers):
            y = self.module(y)
        return y

    def backward(self, y):
        y.backward(self.grad)

    def describe(self):
        return "TransformerEncoderLayer(d_model=%d, nhead=%d, dim_feedforward=%d), batch %d x %d tokens, %s" % (
            self.d_model, self.nhead, self.ffn, self.batch, self.seq, str(self.dtype).replace("torch.", ""))


def event(torch):
    e = torch.cuda.Event(enable_timing=True)
    e.record()
    return e


def run_window(torch, layer, meter, kind, seconds, depth=3):
    """Runs `kind` ("F": forwards, "FB": forward+backward) back to back for
    `seconds`, at most `depth` iterations queued, reading the counter while
    waiting. Returns forward and backward durations, GPU time and power."""
    meter.reset()
    meter.read()
    records, pending = [], collections.deque()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        while len(pending) >= depth:
            meter.wait(pending.popleft()[-1])
        a = event(torch)
        y = layer.forward()
        b = event(torch)
        if kind == "FB":
            layer.backward(y)
            c = event(torch)
            rec = (a, b, c)
        else:
            del y
            rec = (a, b)
        records.append(rec)
        pending.append(rec)
    while pending:
        meter.wait(pending.popleft()[-1])
    power_w, span_s, updates = counter_power(meter.energy)
    forward_s = [r[0].elapsed_time(r[1]) / 1e3 for r in records]
    backward_s = [r[1].elapsed_time(r[2]) / 1e3 for r in records] if kind == "FB" else []
    gpu_s = records[0][0].elapsed_time(records[-1][-1]) / 1e3
    return {"iterations": len(records), "forward_s": forward_s, "backward_s": backward_s, "gpu_s": gpu_s,
            "power_w": power_w, "counter_span_s": span_s, "counter_updates": updates,
            "achieved_mhz": statistics.median(meter.clocks) if meter.clocks else None}


def size_layer(torch, layer, target_s, max_batch, inflight_forwards, fixed_batch=None):
    """Picks the batch so that a forward at the current clock takes about
    target_s, and `inflight_forwards` forwards' activations fit in half of
    the free GPU memory (or takes `fixed_batch`). Returns the forward's time."""
    if fixed_batch:
        layer.resize(fixed_batch)
    for attempt in range(4):
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        y = layer.forward()
        per_forward = max(1, torch.cuda.memory_allocated() - before)
        layer.backward(y)
        del y
        free, _ = torch.cuda.mem_get_info()
        max_batch = max(1, min(max_batch, int(layer.batch * 0.5 * free / (inflight_forwards * per_forward))))
        times = []
        for _ in range(8):
            a = event(torch)
            y = layer.forward()
            b = event(torch)
            layer.backward(y)
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
        t = statistics.median(times[3:])
        if fixed_batch:
            return t
        batch = max(1, min(max_batch, round(layer.batch * target_s / t)))
        if batch == layer.batch or attempt == 3:
            return t
        layer.resize(batch)


# ---------------------------------------------------------------------------
# The three steps
# ---------------------------------------------------------------------------

def warm_up(torch, layer, meter, gpu, args):
    """Forward+backward at the highest clock until the power settles."""
    gpu.lock(gpu.clocks[0])
    start, powers = time.perf_counter(), []
    while True:
        w = run_window(torch, layer, meter, "FB", min(2.0, args.warmup_max_s))
        powers.append(w["power_w"])
        elapsed = time.perf_counter() - start
        last = powers[-3:]
        spread = (max(last) - min(last)) / statistics.mean(last) if len(last) == 3 else float("inf")
        if (spread <= 0.01 and elapsed >= args.warmup_min_s) or elapsed >= args.warmup_max_s:
            return elapsed, powers[-1], spread


def offline_profile(torch, layer, meter, gpu, args, clocks, log):
    """Two passes over the clocks (interleaved, then reversed); per clock a
    forward-only and a forward+backward window. Returns one row per clock."""
    order = interleave(clocks)
    passes = [order, list(reversed(order))]
    windows = collections.defaultdict(list)  # (clock, kind) -> [window per pass]
    for p, pass_order in enumerate(passes):
        for clock in pass_order:
            gpu.lock(clock)
            kinds = ["F", "FB"] if p == 0 else ["FB", "F"]
            run_window(torch, layer, meter, kinds[0], args.settle_s)  # the new clock settles
            for kind in kinds:
                windows[(clock, kind)].append(run_window(torch, layer, meter, kind, args.window_s))
        log("  pass %d of 2 done" % (p + 1))
    rows = []
    for clock in clocks:
        per_pass = []
        for f, fb in zip(windows[(clock, "F")], windows[(clock, "FB")]):
            forward_s = statistics.mean(f["forward_s"])
            forward_j = f["power_w"] * f["gpu_s"] / f["iterations"]
            both_j = fb["power_w"] * fb["gpu_s"] / fb["iterations"]
            per_pass.append({"forward_s": forward_s, "backward_s": statistics.mean(fb["backward_s"]),
                             "forward_j": forward_j, "backward_j": both_j - forward_j,
                             "forward_w": f["power_w"], "both_w": fb["power_w"]})
        row = {"clock_mhz": clock}
        for key in per_pass[0]:
            values = [pp[key] for pp in per_pass]
            row[key] = statistics.mean(values)
            row[key + "_pm"] = (max(values) - min(values)) / 2
        achieved = [w["achieved_mhz"] for k in ("F", "FB") for w in windows[(clock, k)] if w["achieved_mhz"]]
        row["achieved_mhz"] = statistics.median(achieved) if achieved else None
        row["counter_updates"] = min(w["counter_updates"] for k in ("F", "FB") for w in windows[(clock, k)])
        rows.append(row)
    return rows


def blocking_power(meter, gpu, torch, seconds):
    """Power of the idle GPU at its highest clock (what a stage draws while it waits)."""
    gpu.lock(gpu.clocks[0])
    torch.cuda.synchronize()
    meter.reset()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        meter.read()
        time.sleep(0.001)
    return counter_power(meter.energy)[0]


def run_pipeline(torch, layer, meter, gpu, stage_ops, stage_layers, seconds, depth=3):
    """Emulates whole iterations of the pipeline on this GPU for `seconds`:
    every stage's computations, stage after stage, each at its clock (the
    host waits for the GPU to finish before changing the clock). Returns the
    mean duration per computation, energy per iteration and switch counts."""
    meter.reset()
    meter.read()
    records, pending = [], collections.deque()
    iterations = switches = 0
    start = time.perf_counter()
    while iterations == 0 or time.perf_counter() - start < seconds:
        for s, ops in enumerate(stage_ops):
            outputs = {}
            for ins, mb, clock in ops:
                if clock != gpu.locked:
                    while pending:
                        meter.wait(pending.popleft()[-1])
                    gpu.lock(clock)
                    switches += 1
                while len(pending) >= depth:
                    meter.wait(pending.popleft()[-1])
                a = event(torch)
                if ins == "forward":
                    outputs[mb] = layer.forward(stage_layers[s])
                else:
                    layer.backward(outputs.pop(mb))
                b = event(torch)
                records.append((s, ins, mb, a, b))
                pending.append((a, b))
        iterations += 1
    while pending:
        meter.wait(pending.popleft()[-1])
    wall_s = time.perf_counter() - start
    power_w = counter_power(meter.energy)[0]
    durations = collections.defaultdict(list)
    for s, ins, mb, a, b in records:
        durations[(s, ins, mb)].append(a.elapsed_time(b) / 1e3)
    mean = {k: statistics.mean(v) for k, v in durations.items()}
    busy_s = sum(mean.values())
    return {"iterations": iterations, "energy_j": power_w * wall_s / iterations, "power_w": power_w,
            "durations": mean, "switches": switches / iterations,
            "bubbles_s": max(0.0, wall_s / iterations - busy_s)}


def compare_plans(torch, layer, meter, gpu, args, rows, blocking_w, log):
    """Frontier from the offline profile; all-max vs no-slowdown, predicted and measured."""
    import perseus  # noqa: PLC0415 - the native module is only needed from here on

    stage_layers = args.stage_layers
    problem = perseus.build_problem(perseus.parse_profile_csv(profile_csv(rows, stage_layers), "gpu_check profile"),
                                    schedule="1f1b", microbatches=args.microbatches, blocking_power_w=blocking_w)
    frontier = perseus.solve_frontier(problem)
    no_slowdown = frontier.no_slowdown_plan()
    if no_slowdown is None:  # only rounding can cause this: the fastest plan is all-max or faster
        no_slowdown = frontier.plans[0]
    plans = {"all-max": frontier.all_max, "no-slowdown": no_slowdown}
    ops = {name: perseus.stage_plans(problem, plan) for name, plan in plans.items()}
    measured = collections.defaultdict(list)
    for name in ["all-max", "no-slowdown", "no-slowdown", "all-max"]:  # ABBA: drift cancels
        measured[name].append(run_pipeline(torch, layer, meter, gpu, ops[name], stage_layers, args.compare_window_s))
        log("  %s window: %.1f W" % (name, measured[name][-1]["power_w"]))
    result = {}
    for name, runs in measured.items():
        durations = {k: statistics.mean(r["durations"][k] for r in runs) for k in runs[0]["durations"]}
        time_s, busy = replay_pipeline(ops[name], lambda s, i, m, d=durations: d[(s, i, m)])
        gpu_j = statistics.mean(r["energy_j"] for r in runs)
        bubbles_s = statistics.mean(r["bubbles_s"] for r in runs)
        # The emulation's bubbles (the GPU idle while the host switches clocks) are not the
        # pipeline's: their energy, taken at the blocking power, is not the plan's.
        compute_j = gpu_j - blocking_w * bubbles_s
        blocking_j = blocking_w * sum(time_s - b for b in busy)
        result[name] = {"predicted_time_s": plans[name].time_s, "predicted_energy_j": plans[name].energy_j,
                        "time_s": time_s, "energy_j": compute_j + blocking_j, "compute_j": compute_j,
                        "gpu_j": gpu_j, "energy_with_bubbles_j": gpu_j + blocking_j,
                        "blocking_j": blocking_j, "switches": runs[0]["switches"], "bubbles_s": bubbles_s,
                        "stage_plans": [[list(op) for op in stage] for stage in ops[name]]}
    return stage_layers, len(frontier.plans), result


def measure_switch(torch, layer, gpu, from_mhz, to_mhz, before_s=0.3, after_s=0.6):
    """Forwards back to back at `from_mhz` for `before_s`, then gpu.lock(to_mhz)
    between two forwards and forwards for `after_s` more. The host waits for
    every forward (so a forward starts when the host launches it, to within
    the launch latency) and reads NVML's SM clock after it. Returns the lock
    call's duration and the inputs of switch_timing."""
    def forward():
        a = event(torch)
        y = layer.forward()
        b = event(torch)
        torch.cuda.synchronize()
        del y
        return a.elapsed_time(b) / 1e3

    gpu.lock(from_mhz)
    before = []
    end = time.perf_counter() + before_s
    while time.perf_counter() < end:
        before.append(forward())
    t0 = time.perf_counter()
    gpu.lock(to_mhz)
    call_s = time.perf_counter() - t0
    after = []
    while True:
        t = time.perf_counter() - t0
        if t >= after_s:
            break
        after.append((t, forward(), gpu.achieved_mhz()))
    return {"from_mhz": from_mhz, "to_mhz": to_mhz, "lock_call_s": call_s, "before_s": before, "after": after}


def busy_switch_timing(forwards, call_start_s, call_end_s, to_mhz):
    """What one clock change did to forwards that were queued through it.

    forwards: (start, duration) in seconds on the host's clock, in launch
    order, back to back on the GPU; the lock call ran from call_start_s to
    call_end_s. Forwards that ended before the call are the old speed's;
    the rest go to switch_timing with start times relative to the call's
    start (the one running when the call began has a negative start). Adds
    whether the GPU computed through the whole call (`busy`: some forward
    began before the call and the queue reached past its end without a gap)
    and the call's duration. None when switch_timing has too few forwards."""
    before = [d for t, d in forwards if t + d <= call_start_s]
    after = [(t - call_start_s, d, None) for t, d in forwards if t + d > call_start_s]
    out = switch_timing(before, after, to_mhz)
    if out is None:
        return None
    out["call_s"] = call_end_s - call_start_s
    covering = [(t, d) for t, d in forwards if t < call_end_s and t + d > call_start_s]
    out["busy"] = bool(covering) and covering[0][0] <= call_start_s and \
        all(b[0] - (a[0] + a[1]) < 1e-3 for a, b in zip(covering, covering[1:])) and \
        covering[-1][0] + covering[-1][1] >= call_end_s
    return out


def measure_switch_busy(torch, layer, gpu, from_mhz, to_mhz, queued_s=0.16, after_s=0.5):
    """Forwards queued back to back at `from_mhz` without waiting (`queued_s`
    of them), the clock locked to `to_mhz` once about half have run (so the
    GPU computes through the whole call, as it does when a rank switches
    clocks in training, and the old speed is seen before it), then `after_s`
    more queued. Every forward's start
    is put on the host's clock through an event recorded on the idle GPU just
    before. Returns the inputs of busy_switch_timing."""
    gpu.lock(from_mhz)
    a = event(torch)  # one waited-for forward at the old clock sizes the queue
    y = layer.forward()
    b = event(torch)
    torch.cuda.synchronize()
    del y
    old_s = max(a.elapsed_time(b) / 1e3, 1e-4)
    origin = event(torch)
    origin_host_s = time.perf_counter()
    records = []

    def queue(count):
        for _ in range(count):
            a = event(torch)
            y = layer.forward()
            b = event(torch)
            del y
            records.append((a, b))

    queue(max(6, math.ceil(queued_s / old_s)))
    time.sleep(max(queued_s / 2 - (time.perf_counter() - origin_host_s), 0.0))
    t0 = time.perf_counter()
    gpu.lock(to_mhz)
    t1 = time.perf_counter()
    queue(max(6, math.ceil(after_s / old_s)))
    torch.cuda.synchronize()
    forwards = [(origin_host_s + origin.elapsed_time(a) / 1e3, a.elapsed_time(b) / 1e3) for a, b in records]
    return {"from_mhz": from_mhz, "to_mhz": to_mhz, "lock_call_s": t1 - t0, "call_start_s": t0,
            "call_end_s": t1, "forwards": forwards}


def describe_busy_switch(m):
    t = m["timing"]
    head = "%d -> %d MHz, forwards queued through the call: lock call %.1f ms" % (
        m["from_mhz"], m["to_mhz"], 1e3 * m["lock_call_s"])
    if t is None:
        return head + "; too few forwards to tell"
    line = head + "; forwards %.2f -> %.2f ms" % (1e3 * t["old_s"], 1e3 * t["new_s"])
    if not t["busy"]:
        line += "; the GPU was NOT busy through the whole call (the queue ran dry)"
    if t["effective_s"] is None:
        return line + "; the two clocks run the layer at the same speed"
    return line + "; new speed %.1f ms after the call began (%d forward%s in between)" % (
        1e3 * t["effective_s"], t["between"], "" if t["between"] == 1 else "s")


def clock_switches(torch, layer, gpu, rows, log, repeats=2):
    """Step 3: switches down and up between the highest clock the layer
    really ran at (not capped) and the lowest profiled; prints each."""
    uncapped = [r["clock_mhz"] for r in rows if not r["achieved_mhz"] or round(r["achieved_mhz"]) == r["clock_mhz"]]
    if len(uncapped) < 2:
        log("  not run: fewer than two profiled clocks ran at their locked clock")
        return []
    high, low = max(uncapped), min(uncapped)
    results = []
    for _ in range(repeats):
        for a, b in ((high, low), (low, high)):
            m = measure_switch(torch, layer, gpu, a, b)
            m["timing"] = switch_timing(m["before_s"], m["after"], b)
            results.append(m)
            log("  " + describe_switch(m))
    for _ in range(repeats):
        for a, b in ((high, low), (low, high)):
            m = measure_switch_busy(torch, layer, gpu, a, b)
            m["timing"] = busy_switch_timing(m["forwards"], m["call_start_s"], m["call_end_s"], b)
            m["queued"] = True
            results.append(m)
            log("  " + describe_busy_switch(m))
    return results


def describe_switch(m):
    t = m["timing"]
    head = "%d -> %d MHz: lock call %.1f ms" % (m["from_mhz"], m["to_mhz"], 1e3 * m["lock_call_s"])
    if t is None:
        return head + "; too few forwards to tell"

    def ms(v):
        return "never" if v is None else "%.1f ms" % (1e3 * v)
    line = head + "; NVML shows %d MHz after %s; forwards %.2f -> %.2f ms" % (
        m["to_mhz"], ms(t["nvml_s"]), 1e3 * t["old_s"], 1e3 * t["new_s"])
    if t["effective_s"] is None:
        return line + "; the two clocks run the layer at the same speed"
    line += "; new speed after %s (%d forward%s in between); late %.1f ms" % (
        ms(t["effective_s"]), t["between"], "" if t["between"] == 1 else "s", 1e3 * t["late_s"])
    if "late_full_s" in t:
        line += " vs models: old clock for L = %s: %.1f ms; first computation only: %.1f ms" % (
            ms(t["nvml_s"]), 1e3 * t["late_full_s"], 1e3 * t["late_first_s"])
    return line


def _die_with_parent():
    """In the child before exec: SIGTERM when the parent dies (Linux prctl PR_SET_PDEATHSIG)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG


def start_server(argv):
    """Starts `perseus serve` so that it ends with this process, even when this
    process is killed or crashes: an orphaned server would keep the terminal
    or a CI runner's output open (on the H200 a crash left one running)."""
    preexec = _die_with_parent if sys.platform.startswith("linux") else None
    return subprocess.Popen(argv, preexec_fn=preexec)


def online_comparison(args, layer, torch, rows):
    """Profiles the same layer online through the perseus runtime and
    compares with the offline profile. Returns the lines to print.

    ONLINE PROFILING STEP: runs `perseus serve` (PERSEUS_CLI or --perseus),
    registers a one-stage job, runs the layer with perseus.RankClient hooks
    (synchronising after every computation, so hook times are GPU times) until
    the server has a profile, and compares it with the offline one."""
    if args.skip_online:
        return ["online profiling comparison: not run (--skip-online)"]
    cli = args.perseus or os.environ.get("PERSEUS_CLI", "")
    if not cli or not os.path.exists(cli):
        return ["online profiling comparison: not run (no perseus binary: pass --perseus PATH or set PERSEUS_CLI)"]
    if subprocess.run([cli, "serve", "--help"], capture_output=True).returncode != 0:
        return ["online profiling comparison: not run (%s has no `serve` command)" % cli]
    import perseus  # noqa: PLC0415
    import perseus.torch  # noqa: PLC0415 - the integration users run: CUDA events, no synchronisation

    offline_clocks = [r["clock_mhz"] for r in rows]
    # Windows of about a second: many iterations per counter step would cost minutes per clock.
    iteration_s = args.microbatches * 3 * args.forward_ms / 1e3
    window_iterations = max(2, math.ceil(args.online_window_s / iteration_s))
    spec = {"id": "gpu-check", "microbatches": args.microbatches,
            "profiling": {"min_clock_mhz": min(offline_clocks), "max_clocks": args.online_clocks,
                          "window_iterations": window_iterations, "warmup_iterations": 2,
                          "time_budget_s": args.online_timeout_s}}
    with _online_dir(args.online_dir) as tmp:
        port_file = os.path.join(tmp, "port")
        server = start_server([cli, "serve", "--db", os.path.join(tmp, "p.db"), "--port", "0",
                               "--port-file", port_file, "--log-file", os.path.join(tmp, "log")])
        opt = None
        started = time.time()
        try:
            url = _wait_for_server(port_file, server)
            job = spec["id"]
            perseus.register_job(url, spec)
            gpu = "daemon:" + args.daemon if args.daemon else "nvml"
            opt = perseus.RankClient(url, job, rank=0, gpu_index=args.gpu, gpu=gpu, framework_durations=True)
            hooks = perseus.torch.PipelineHooks(opt, device=layer.device)
            deadline = time.time() + args.online_timeout_s
            phase, progress = "registering", ""
            next_check = 0.0
            order = one_f_one_b(0, 1, args.microbatches)
            iterations = 0
            while time.time() < deadline:
                with hooks.step():
                    outputs = {}
                    for ins, mb in order:
                        if ins == "forward":
                            with hooks.forward():
                                outputs[mb] = layer.forward()
                        else:
                            with hooks.backward():
                                layer.backward(outputs.pop(mb))
                iterations += 1
                if time.time() >= next_check:
                    status = perseus.job_status(url, job)
                    phase, progress = status["phase"], _profiling_progress(status)
                    next_check = time.time() + 1.0
                    if phase not in ("registering", "profiling"):
                        break
            hooks.flush()
            if phase in ("registering", "profiling"):
                return ["online profiling comparison: incomplete (still %s%s after %.0f s; --online-timeout-s)"
                        % (phase, progress, args.online_timeout_s)]
            status = perseus.job_status(url, job)
            try:
                with urllib.request.urlopen("%s/jobs/%s/profile" % (url, job), timeout=10) as reply:
                    profile_text = reply.read().decode()
            except urllib.error.HTTPError as e:
                if status.get("error"):  # failed before it had a profile (no clock its ranks share, say)
                    return ["online profiling comparison: failed (the job failed: %s)" % status["error"]]
                raise
            online = parse_profile_rows(profile_text)
            warnings = opt.take_warnings() if hasattr(opt, "take_warnings") else []
        except Exception as e:  # noqa: BLE001 - report, do not hide the offline results
            return ["online profiling comparison: failed (%s: %s)" % (type(e).__name__, e)]
        finally:
            if opt is not None:
                opt.close()
            server.terminate()
            server.wait(timeout=10)
    header = ["online profiling (perseus serve, a one-stage job, perseus.torch hooks with CUDA events and no "
              "synchronisation per computation; %d-iteration windows): phase %s after %.0f s and %d iterations"
              % (window_iterations, status.get("phase"), time.time() - started, iterations)]
    if status.get("error"):
        header.append("  job error: %s" % status["error"])
    header += ["  job warning: %s" % json.dumps(w) for w in status.get("warnings", [])]
    if args.online_dir:
        with open(os.path.join(args.online_dir, "profile.csv"), "w") as f:
            f.write(profile_text)
        header.append("  the server's log, database and the online profile (profile.csv) are in %s" % args.online_dir)
    diffs = compare_profiles(rows, online)
    lines = header + ["online profiling comparison (online vs offline, same layer; offline interpolated in the "
                      "clock where it did not profile the online clock):",
                      "  clock MHz  instruction  time diff  energy diff  offline"]
    for clock, ins, dt, de, exact in diffs:
        lines.append("  %9d  %-11s  %+8.1f%%  %+10.1f%%  %s" % (clock, ins, 100 * dt, 100 * de,
                                                               "measured" if exact else "interpolated"))
    if diffs:
        lines.append("  median |diff|: time %.1f%%, energy %.1f%% over %d rows" % (
            100 * statistics.median(abs(d[2]) for d in diffs), 100 * statistics.median(abs(d[3]) for d in diffs),
            len(diffs)))
    else:
        lines.append("  no clock in common (online clocks: %s)" % sorted({k[2] for k in online}))
    lines += ["  runtime warning: %s" % w for w in warnings]
    return lines


@contextlib.contextmanager
def _online_dir(kept):
    """The online step's folder (server database, log, port file): `kept`
    (created if missing, left in place) or a temporary one removed after."""
    if kept:
        os.makedirs(kept, exist_ok=True)
        yield kept
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield tmp


def _profiling_progress(status):
    """" (window 12 of 80)" from a GET /jobs/{id} reply, when it says."""
    prof = status.get("profiling")
    if isinstance(prof, dict) and "window" in prof and "windows" in prof:
        return " (window %d of %d)" % (prof["window"] + 1, prof["windows"])
    return ""


def _wait_for_server(port_file, proc, timeout_s=15.0):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("perseus serve exited with %d" % proc.returncode)
        try:
            with open(port_file) as f:
                port = int(f.read().strip())
            url = "http://127.0.0.1:%d" % port
            urllib.request.urlopen(url + "/healthz", timeout=1).read()
            return url
        except (OSError, ValueError):
            time.sleep(0.05)
    raise RuntimeError("perseus serve did not start within %.0f s" % timeout_s)


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(prog="python3 -m perseus.gpu_check", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu", type=integer(0), default=0, help="GPU index (NVML numbering, as nvidia-smi)")
    p.add_argument("--daemon", default="", help="lock clocks through the perseusd on this socket (no root needed)")
    p.add_argument("--nvml-library", default="", help="default: $PERSEUS_NVML_LIBRARY, else libnvidia-ml.so.1")
    p.add_argument("--clocks", type=integer(2), default=6, help="clocks to profile, from the highest down to half of it")
    p.add_argument("--window-s", type=seconds(), default=5.0, help="seconds per profiling window (>= 5 for 1%%)")
    p.add_argument("--settle-s", type=seconds(inclusive=True), default=1.0, help="warm-up after each clock change")
    p.add_argument("--warmup-min-s", type=seconds(inclusive=True), default=10.0)
    p.add_argument("--warmup-max-s", type=seconds(), default=120.0)
    p.add_argument("--forward-ms", type=seconds(), default=8.0, help="size the layer so a forward takes this long")
    p.add_argument("--d-model", type=integer(1), default=4096)
    p.add_argument("--nhead", type=integer(1), default=32)
    p.add_argument("--ffn", type=integer(1), default=16384)
    p.add_argument("--seq", type=integer(1), default=1024)
    p.add_argument("--max-batch", type=integer(1), default=64)
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    p.add_argument("--stage-layers", type=integer_list(1), default="2,2,2,3",
                   help="layers per emulated pipeline stage")
    p.add_argument("--microbatches", type=integer(1), default=8)
    p.add_argument("--compare-window-s", type=seconds(), default=20.0, help="seconds per all-max / plan window")
    p.add_argument("--blocking-s", type=seconds(), default=5.0, help="seconds to measure the idle power")
    p.add_argument("--perseus", default="", help="perseus binary for the online step (default: $PERSEUS_CLI)")
    p.add_argument("--online-timeout-s", type=seconds(), default=300.0,
                   help="time limit of the online step (also the server's profiling time budget)")
    p.add_argument("--online-clocks", type=integer(2), default=12, help="clocks the server profiles online")
    p.add_argument("--online-window-s", type=seconds(), default=1.0, help="about this long per online window")
    p.add_argument("--skip-online", action="store_true")
    p.add_argument("--online-dir", default="",
                   help="keep the online step's server log and database, and its profile as profile.csv, here "
                        "(default: a temporary folder, removed)")
    p.add_argument("--offline-from", default="",
                   help="skip steps 1 and 2: take the offline profile from the --json report of an earlier run on "
                        "this GPU, then time clock switches and profile online")
    p.add_argument("--quick", action="store_true", help="short windows: a smoke test, not figures to quote")
    p.add_argument("--json", default="", help="also write every figure to this file")
    args = p.parse_args(argv)
    if args.warmup_max_s < args.warmup_min_s:
        p.error("--warmup-max-s %g is below --warmup-min-s %g" % (args.warmup_max_s, args.warmup_min_s))
    if args.online_dir and os.path.isdir(args.online_dir) and os.listdir(args.online_dir):
        # An earlier run's database would hand back its job, already profiled.
        p.error("--online-dir %s is not empty: give an empty or new folder" % args.online_dir)
    if args.quick:
        args.clocks, args.window_s, args.settle_s = min(args.clocks, 3), 2.0, 0.5
        args.warmup_min_s, args.warmup_max_s, args.compare_window_s, args.blocking_s = 4.0, 20.0, 5.0, 2.0
        args.online_timeout_s, args.online_clocks = min(args.online_timeout_s, 120.0), min(args.online_clocks, 4)
    return args


def load_offline_report(path, gpu, args):
    """The offline rows, blocking power and layer ({} when the report predates
    it) of an earlier `--json` report, which must come from this GPU (same
    UUID). Errors name the file and the field."""
    try:
        with open(path) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("gpu_check: error: --offline-from %s: %s" % (path, e))
    uuid = report.get("gpu", {}).get("uuid") if isinstance(report, dict) else None
    if uuid != gpu.uuid:
        raise SystemExit("gpu_check: error: --offline-from %s: field gpu.uuid is %s, not this GPU's %s" % (
            path, uuid, gpu.uuid))
    # The layer's options must be this run's: the rows are per computation of that layer.
    for name in ("d_model", "nhead", "ffn", "seq", "dtype", "forward_ms", "max_batch"):
        theirs = report.get("args", {}).get(name) if isinstance(report.get("args"), dict) else None
        if theirs is not None and theirs != getattr(args, name):
            raise SystemExit("gpu_check: error: --offline-from %s: field args.%s is %s, not this run's %s (give "
                             "the options of that run)" % (path, name, theirs, getattr(args, name)))
    rows = report.get("profile")
    need = ("clock_mhz", "achieved_mhz", "forward_s", "backward_s", "forward_j", "backward_j")
    if not isinstance(rows, list) or len(rows) < 2 or \
            not all(isinstance(r, dict) and all(k in r for k in need) for r in rows):
        raise SystemExit("gpu_check: error: --offline-from %s: field profile: expected two or more offline rows "
                         "with %s" % (path, ", ".join(need)))
    blocking_w = report.get("blocking_power_w")
    if not isinstance(blocking_w, (int, float)):
        raise SystemExit("gpu_check: error: --offline-from %s: field blocking_power_w: expected a number" % path)
    layer = report.get("layer", {})
    return rows, float(blocking_w), layer if isinstance(layer, dict) else {}


def _cuda_device(torch, gpu):
    """The CUDA device of NVML GPU `gpu` (matched by UUID; CUDA numbers GPUs differently)."""
    want = gpu.uuid.lower().removeprefix("gpu-")
    for i in range(torch.cuda.device_count()):
        uuid = getattr(torch.cuda.get_device_properties(i), "uuid", None)
        if uuid is not None and str(uuid).lower().removeprefix("gpu-") == want:
            return torch.device("cuda", i), ""
    return torch.device("cuda", gpu.index), "cannot match CUDA devices to NVML by UUID; using cuda:%d" % gpu.index


def main(argv=None, torch_module=None):
    """Returns the exit code. torch_module: a stand-in for torch (tests)."""
    args = parse_args(argv)
    library = args.nvml_library or os.environ.get("PERSEUS_NVML_LIBRARY") or "libnvidia-ml.so.1"
    try:
        reason = nvml_skip_reason(library)
    except NvmlPathError as e:
        print("gpu_check: error: %s" % e, file=sys.stderr)
        return 1
    if reason:
        print("skipped: no NVIDIA GPU (%s)" % reason)
        return 0
    torch = torch_module
    if torch is None:
        try:
            import torch  # noqa: PLC0415
        except ImportError as e:
            print("gpu_check: error: PyTorch is not installed for %s (%s); install PyTorch with CUDA" % (
                sys.executable, e), file=sys.stderr)
            return 1
    if not torch.cuda.is_available():
        why = "torch.cuda.is_available() is False"
        if torch.version.cuda is None:
            why += "; PyTorch %s was built without CUDA" % torch.__version__
        print("skipped: no NVIDIA GPU (%s)" % why)
        return 0

    def log(line):
        print(line, flush=True)

    def on_sigterm(signum, frame):
        raise KeyboardInterrupt()

    previous_sigterm = signal.signal(signal.SIGTERM, on_sigterm)  # unwinds like Ctrl-C: the clock gets unlocked
    nvml = Nvml(library)
    gpu = Gpu(nvml, args.gpu, args.daemon)
    try:
        offline = load_offline_report(args.offline_from, gpu, args) if args.offline_from else None  # no GPU work yet
    except SystemExit:
        gpu.close()
        signal.signal(signal.SIGTERM, previous_sigterm)
        raise
    report = {"gpu": {"index": gpu.index, "name": gpu.name, "uuid": gpu.uuid}, "args": vars(args)}
    try:
        try:
            gpu.lock(gpu.clocks[0])
        except NvmlError as e:
            hint = "; run as root, or pass --daemon SOCKET of a running perseusd" \
                if e.code == NVML_ERROR_NO_PERMISSION else ""
            print("gpu_check: error: cannot lock the SM clock: %s%s" % (e, hint), file=sys.stderr)
            return 1
        device, note = _cuda_device(torch, gpu)
        torch.cuda.set_device(device)
        if note:
            log("note: " + note)
        dtype = getattr(torch, args.dtype)
        layer = Layer(torch, device, args.d_model, args.nhead, args.ffn, args.seq, 4, dtype)
        meter = Meter(gpu)
        stage_layers = args.stage_layers
        inflight = max(min(len(stage_layers) - s, args.microbatches) * k for s, k in enumerate(stage_layers))
        forward_s = size_layer(torch, layer, args.forward_ms / 1e3, args.max_batch, inflight,
                               fixed_batch=offline[2].get("batch") if offline else None)
        log("GPU %d: %s (%s), %d SM clocks %d-%d MHz" % (gpu.index, gpu.name, gpu.uuid, len(gpu.clocks),
                                                         gpu.clocks[-1], gpu.clocks[0]))
        log("layer: %s; forward %.1f ms at %d MHz" % (layer.describe(), forward_s * 1e3, gpu.clocks[0]))
        report["layer"] = {"describe": layer.describe(), "batch": layer.batch, "forward_s": forward_s}

        if offline is not None:
            rows, blocking_w, offline_layer = offline
            if not offline_layer:
                log("note: %s does not say which batch its layer ran (an older report); this run sized its own"
                    % args.offline_from)
            log("\n1-2. skipped: the offline profile (%d clocks) comes from %s" % (len(rows), args.offline_from))
            report.update({"profile": rows, "blocking_power_w": blocking_w, "offline_from": args.offline_from})
        else:
            log("\n1. offline profile")
            elapsed, settled_w, spread = warm_up(torch, layer, meter, gpu, args)
            log("  warm-up: %.0f s at %d MHz, %s at %.1f W (%s)" % (
                elapsed, gpu.clocks[0], "power settled" if spread <= 0.01 else "power NOT settled", settled_w,
                "last three windows within %.1f%%" % (100 * spread) if spread != float("inf")
                else "fewer than 3 windows"))
            clocks = choose_clocks(gpu.clocks, args.clocks)
            log("  clocks %s; order %s, then reversed; %g s windows, %g s settling after each change" % (
                clocks, interleave(clocks), args.window_s, args.settle_s))
            rows = offline_profile(torch, layer, meter, gpu, args, clocks, log)
            blocking_w = blocking_power(meter, gpu, torch, args.blocking_s)
            log("  %-9s %-9s %-14s %-14s %-14s %-14s %-8s %-8s" % ("clock MHz", "achieved", "forward ms", "backward ms",
                                                                   "forward J", "backward J", "fwd W", "f+b W"))
            for r in rows:
                log("  %-9d %-9s %-14s %-14s %-14s %-14s %-8.1f %-8.1f" % (
                    r["clock_mhz"], "%d" % round(r["achieved_mhz"]) if r["achieved_mhz"] else "?",
                    "%.3f±%.3f" % (1e3 * r["forward_s"], 1e3 * r["forward_s_pm"]),
                    "%.3f±%.3f" % (1e3 * r["backward_s"], 1e3 * r["backward_s_pm"]),
                    "%.4f±%.4f" % (r["forward_j"], r["forward_j_pm"]),
                    "%.4f±%.4f" % (r["backward_j"], r["backward_j_pm"]),
                    r["forward_w"], r["both_w"]))
            log("  (± is half the difference between the two passes; energies per layer computation)")
            log("  blocking power (idle at %d MHz, %.1f s): %.1f W" % (gpu.clocks[0], args.blocking_s, blocking_w))
            for r in rows:
                if r["achieved_mhz"] and round(r["achieved_mhz"]) != r["clock_mhz"]:
                    log("  warning: locked %d MHz but the GPU ran at %d MHz (capped: NVIDIA open-gpu-kernel-modules "
                        "#1314, or a power/thermal limit)" % (r["clock_mhz"], round(r["achieved_mhz"])))
            if any(r["backward_j"] <= 0 for r in rows):
                log("  warning: a backward energy came out <= 0: the windows are too short or the power unstable")
                for r in rows:
                    r["backward_j"] = max(r["backward_j"], 1e-6)
            report.update({"profile": rows, "blocking_power_w": blocking_w, "warmup_s": elapsed})

            log("\n2. no-slowdown plan vs all-max")
            stage_layers, nplans, result = compare_plans(torch, layer, meter, gpu, args, rows, blocking_w, log)
            gpu.unlock()
            log("  %d-stage 1F1B pipeline of %s layers, %d microbatches, emulated on this GPU (every computation runs "
                "at its plan's clock, stage after stage; pipeline time replayed from the measured durations; a waiting "
                "stage draws the blocking power); frontier of %d plan%s; 4 windows of %g s (ABBA)" % (
                    len(stage_layers), ",".join(map(str, stage_layers)), args.microbatches, nplans, "" if nplans == 1 else "s",
                    args.compare_window_s))
            log("  %-12s %-20s %-20s %-10s %-10s" % ("", "predicted s / J", "measured s / J", "switches", "bubbles ms"))
            for name in ("all-max", "no-slowdown"):
                r = result[name]
                log("  %-12s %-20s %-20s %-10.1f %-10.2f" % (
                    name, "%.4f / %.1f" % (r["predicted_time_s"], r["predicted_energy_j"]),
                    "%.4f / %.1f" % (r["time_s"], r["energy_j"]), r["switches"], 1e3 * r["bubbles_s"]))
            a, b = result["all-max"], result["no-slowdown"]
            log("  savings: predicted %.2f%%, measured %.2f%%; slowdown: predicted %.2f%%, measured %.2f%%" % (
                100 * (1 - b["predicted_energy_j"] / a["predicted_energy_j"]),
                100 * (1 - b["energy_j"] / a["energy_j"]),
                100 * (b["predicted_time_s"] / a["predicted_time_s"] - 1), 100 * (b["time_s"] / a["time_s"] - 1)))
            log("  (measured energy leaves out the emulation's bubbles at the blocking power; with them: savings "
                "%.2f%%)" % (100 * (1 - b["energy_with_bubbles_j"] / a["energy_with_bubbles_j"])))
            report["plans"] = result

        log("\n3. clock switches as the computations see them (forwards back to back, each waited for; "
            "'late' is the time lost or gained against an instant switch; then forwards queued through the call)")
        report["switches"] = clock_switches(torch, layer, gpu, rows, log)

        log("\n4. online profiling")
        gpu.close()  # the runtime locks clocks itself (and perseusd allows one client per GPU)
        lines = online_comparison(args, layer, torch, rows)
        for line in lines:
            log(line)
        report["online"] = lines
    except KeyboardInterrupt:
        print("gpu_check: interrupted; clock unlocked", file=sys.stderr)
        return 130
    finally:
        gpu.close()
        signal.signal(signal.SIGTERM, previous_sigterm)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
