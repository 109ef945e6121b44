"""A real PyTorch pipeline job with perseus (examples/torch_pipeline.py), and perseus.torch.

The lifecycle test runs a small transformer split into 2 pipeline stages x 2 data-parallel
pipelines (4 processes, torch.distributed over gloo on loopback, 1F1B with 4 microbatches) on
realistic simulated A100s, against a `perseus serve` it starts, and walks the whole lifecycle:
registration, online profiling, optimisation, the plan applied, a straggler detected and
answered, recovery. Each step has its own deadline; a failure names the step and shows the job's
state, every rank's stats and the ranks' stderr.

Needs torch (Debian: python3-torch). Without it the tests skip, except under CI, where they fail.
"""
import json
import os
import socket
import subprocess
import sys
import time
import types
import urllib.request
import warnings

import pytest

try:
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        raise ImportError("CI: torch must be importable by %s for the PyTorch job test (Debian: python3-torch): %s"
                          % (sys.executable, e)) from e
    pytest.skip("torch is not importable by %s (Debian: apt-get install python3-torch): %s" % (sys.executable, e),
                allow_module_level=True)

import perseus
import perseus.torch

SOURCE_DIR = os.environ.get("PERSEUS_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLE = os.path.join(SOURCE_DIR, "examples", "torch_pipeline.py")

# The realism of the simulated GPUs (docs/gpu_control.md): the defaults of real A100s
# (PERSEUS_TORCH_TEST_REALISM=ideal or "default,noise=2" to diagnose).
GPU = "simulated:A100:" + os.environ.get("PERSEUS_TORCH_TEST_REALISM", "default")
# Short profiling for a test (every 5th clock from 1410 down to 800 MHz, windows of 1 warm-up
# and 3 measured iterations, one round of repeats), and a straggler threshold above the jitter
# of 4 processes sleeping in real time on a loaded 2-core machine.
JOB_CONFIG = {
    "dp": 2, "pp": 2, "tp": 1, "schedule": "1f1b", "microbatches": 4,
    "profiling": {"warmup_iterations": 1, "window_iterations": 3, "clock_stride": 5, "min_clock_mhz": 800,
                  "max_repeat_rounds": 1},
    "straggler": {"threshold": 1.2, "window": 5},
}
# Seconds each lifecycle step may take (the whole test: well under 3 minutes when it passes).
DEADLINES_S = {"registration": 60, "online profiling": 120, "optimisation": 30, "plan applied": 20,
               "straggler detected": 40, "straggler answered": 20, "recovery": 40,
               "carbon pause": 60, "ranks paused": 60, "resumed": 30}


class PipelineJob:
    """The 4 rank processes of examples/torch_pipeline.py, their control file and status files."""

    def __init__(self, server, job, tmp_path):
        self.server, self.job, self.dir = server, job, str(tmp_path)
        self.control = os.path.join(self.dir, "control.json")
        self.procs, self.logs = [], []
        self.set_control(straggle=False)

    def set_control(self, stop=False, straggle=False):
        tmp = self.control + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"stop": stop, "straggle": straggle}, f)
        os.replace(tmp, self.control)

    def ranks(self):
        """rank -> the status each rank process last wrote."""
        out = {}
        for r in range(4):
            try:
                with open(os.path.join(self.dir, "rank%d.json" % r)) as f:
                    out[r] = json.load(f)
            except (OSError, ValueError):
                pass
        return out

    def status(self):
        return perseus.job_status(self.server, self.job)

    def describe(self):
        """The state shown when a step fails."""
        lines = []
        try:
            s = self.status()
            lines.append("job: phase=%s ranks_registered=%s error=%r stragglers=%s pipelines=%s profiling=%s" % (
                s.get("phase"), s.get("ranks_registered"), s.get("error"), s.get("stragglers"),
                s.get("pipelines"), s.get("profiling")))
            if s.get("warnings"):
                lines.append("job warnings: %s" % s["warnings"])
            if s.get("carbon"):
                lines.append("carbon: %s" % {k: s["carbon"].get(k) for k in ("paused", "explanation", "plan_index")})
        except Exception as e:  # noqa: BLE001 - diagnostics only
            lines.append("job status: %s" % e)
        for r, st in sorted(self.ranks().items()):
            lines.append("rank %d: iteration %s stats %s" % (r, st.get("iteration"), st.get("stats")))
        for r, (p, log) in enumerate(zip(self.procs, self.logs)):
            log.flush()
            with open(log.name) as f:
                tail = f.read()[-1500:]
            lines.append("rank %d process: %s; stderr tail:\n%s" % (
                r, "running" if p.poll() is None else "exited %s" % p.returncode, tail))
        return "\n".join(lines)

    def wait(self, step, done):
        """Polls done() until it holds; fails naming the step otherwise."""
        deadline = time.time() + DEADLINES_S[step]
        while time.time() < deadline:
            dead = [r for r, p in enumerate(self.procs) if p.poll() is not None]
            if dead:
                pytest.fail("lifecycle step '%s': rank process(es) %s exited early\n%s" % (step, dead, self.describe()))
            try:
                if done():
                    return
                if self.status()["phase"] == "failed":
                    pytest.fail("lifecycle step '%s': the job failed\n%s" % (step, self.describe()))
            except (OSError, ConnectionError, KeyError):
                pass
            time.sleep(0.2)
        pytest.fail("lifecycle step '%s' did not complete within %d s\n%s" % (step, DEADLINES_S[step], self.describe()))

    def stop(self, timeout_s=30):
        self.set_control(stop=True)
        deadline = time.time() + timeout_s
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pass

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for log in self.logs:
            log.close()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(job):
    port = _free_port()
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    for r in range(4):
        log = open(os.path.join(job.dir, "rank%d.log" % r), "w")
        job.logs.append(log)
        job.procs.append(subprocess.Popen(
            [sys.executable, EXAMPLE, "--rank", str(r), "--server", job.server, "--job", job.job,
             "--dp", "2", "--pp", "2", "--microbatches", "4", "--iterations", "0", "--gpu", GPU,
             "--master-port", str(port), "--control", job.control, "--status-dir", job.dir,
             "--straggler", "1", "--straggler-slowdown", "1.6"],
            stdout=log, stderr=subprocess.STDOUT, env=env))


def _kinds(job, ranks=range(4)):
    rs = job.ranks()
    return {rs[r]["stats"]["plan_kind"] if r in rs else None for r in ranks}


def _plan_indices(job, ranks):
    rs = job.ranks()
    return [rs[r]["stats"]["plan_index"] if r in rs else None for r in ranks]


def test_pipeline_job_lifecycle(server, tmp_path):
    assert os.path.exists(EXAMPLE), EXAMPLE
    reply = perseus.register_job(server, dict(JOB_CONFIG, id="torch-job"))
    assert reply["created"] is True
    job = PipelineJob(server, "torch-job", tmp_path)
    started = time.time()
    timeline = []
    try:
        _start(job)

        def passed(step):
            timeline.append("%s: %.1f s" % (step, time.time() - started))

        job.wait("registration", lambda: job.status()["ranks_registered"] == 4)
        passed("registration")
        job.wait("online profiling", lambda: job.status()["phase"] in ("optimizing", "running"))
        passed("online profiling")
        job.wait("optimisation", lambda: job.status()["phase"] == "running" and "frontier" in job.status())
        passed("optimisation")
        frontier = job.status()["frontier"]
        # The clock matters on the realistic simulated GPU: more than one plan.
        assert frontier["plans"] > 1, "a one-plan frontier: the profile does not depend on the clock\n" + job.describe()
        job.wait("plan applied", lambda: _kinds(job) == {"frontier"})
        passed("plan applied")
        assert _plan_indices(job, range(4)) == [0, 0, 0, 0], job.describe()
        assert not job.status()["stragglers"], "a straggler before any pipeline slowed down\n" + job.describe()

        job.set_control(straggle=True)  # pipeline 1 runs 1.6x slower
        job.wait("straggler detected", lambda: any(
            s["pipeline"] == 1 and s["source"] == "detected" for s in job.status()["stragglers"]))
        passed("straggler detected")
        # Pipeline 0 (ranks 0 and 1) slows down to the straggler: a slower, cheaper plan.
        job.wait("straggler answered", lambda: all(i is not None and i > 0 for i in _plan_indices(job, [0, 1])))
        passed("straggler answered")

        job.set_control(straggle=False)
        job.wait("recovery", lambda: not job.status()["stragglers"] and _plan_indices(job, [0, 1]) == [0, 0])
        passed("recovery")
        job.stop()
        assert [p.returncode for p in job.procs] == [0, 0, 0, 0], job.describe()
    finally:
        job.kill()
        print("lifecycle (%.1f s): %s" % (time.time() - started, "; ".join(timeline)))

    ranks = job.ranks()
    assert all(ranks[r]["done"] for r in range(4)), job.describe()
    for r in range(4):
        stats = ranks[r]["stats"]
        assert stats["registered"] and stats["connected"], stats
        assert stats["schedule_mismatches"] == 0, stats
    # Real training: the loss falls on both pipelines' last stages...
    for r in (1, 3):
        losses = ranks[r]["losses"]
        assert len(losses) >= 20, len(losses)
        first, last = sum(losses[:5]) / 5, sum(losses[-5:]) / 5
        assert last < 0.7 * first, "rank %d: loss %.3f -> %.3f" % (r, first, last)
    # ... and the data-parallel replicas of each stage hold the same weights (all-reduced gradients).
    for a, b in ((0, 2), (1, 3)):
        assert ranks[a]["iteration"] == ranks[b]["iteration"]
        assert ranks[a]["param_sum"] == pytest.approx(ranks[b]["param_sum"], rel=1e-6, abs=1e-6)


def _dirty_now_trace(path):
    """An hourly trace from four weeks ago to two days ahead: 1000 gCO2/kWh every day in the hour
    before this one, this one and the one half an hour from now, 50 otherwise. A job that must
    finish an hour of work within three, deciding in the next few minutes, then pauses: the dirty
    hour is read and forecast, half an hour to an hour and a half of it lies ahead, clean hours
    follow, and idling through the dirty part costs less carbon than running it."""
    now = time.time()
    dirty = {int(t) // 3600 % 24 for t in (now - 3600, now, now + 1800)}
    now_h = int(now) // 3600
    with open(path, "w") as f:
        f.write("timestamp,gco2_per_kwh\n")
        for h in range(now_h - 28 * 24, now_h + 48):
            f.write("%s,%d\n" % (time.strftime("%Y-%m-%dT%H:00:00Z", time.gmtime(h * 3600)),
                                 1000 if h % 24 in dirty else 50))


def _rank_plan(server, job, rank):
    with urllib.request.urlopen("%s/jobs/%s/ranks/%d/plan" % (server, job, rank), timeout=10) as r:
        return json.load(r)


def test_pipeline_job_pauses_holding_its_gpus(server, tmp_path):
    """The real server pauses the 4-process job for carbon (carbon.pause "hold"): every rank stops
    before the same iteration and waits in perseus.torch's hooks; ending the job ends the wait."""
    trace = os.path.join(str(tmp_path), "trace.csv")
    _dirty_now_trace(trace)
    carbon = {"source": "trace", "trace_path": trace, "slowdown_budget": 2, "job_hours": 1, "pause": "hold"}
    # A declared blocking power well below the simulated GPUs' working power: holding them idle
    # is then clearly cheaper than running through the dirty hour, wherever in it the job decides.
    perseus.register_job(server, dict(JOB_CONFIG, id="paused-job", carbon=carbon, blocking_power_w=20))
    job = PipelineJob(server, "paused-job", tmp_path)
    started = time.time()
    try:
        _start(job)
        job.wait("registration", lambda: job.status()["ranks_registered"] == 4)
        job.wait("online profiling", lambda: job.status()["phase"] in ("optimizing", "running"))
        job.wait("optimisation", lambda: job.status()["phase"] == "running")
        job.wait("carbon pause", lambda: perseus.carbon_status(server, "paused-job")["paused"])
        plans = [_rank_plan(server, "paused-job", r) for r in range(4)]
        assert {p["kind"] for p in plans} == {"pause"}, plans
        froms = {p["pause"]["from_iteration"] for p in plans}
        assert len(froms) == 1, plans
        # Every rank reaches the pause's iteration and waits there (the example writes its
        # status just before a step that will wait).
        job.wait("ranks paused", lambda: all(
            st["iteration"] in froms and st["stats"]["paused"] for st in job.ranks().values()) and len(job.ranks()) == 4)
        before = {r: st["iteration"] for r, st in job.ranks().items()}
        time.sleep(2)
        assert {r: st["iteration"] for r, st in job.ranks().items()} == before, job.describe()
        perseus.finish_job(server, "paused-job")  # a plan that is not a pause: the waits end
        job.wait("resumed", lambda: all(st["iteration"] > min(froms) for st in job.ranks().values()))
        job.stop()
        assert [p.returncode for p in job.procs] == [0, 0, 0, 0], job.describe()
    finally:
        job.kill()
        print("pause test: %.1f s" % (time.time() - started))
    for r, st in job.ranks().items():
        assert st["stats"]["pauses"] == 1, st["stats"]
        # At least most of the 2 s the test watched them wait (a rank writes its status just before it waits).
        assert st["stats"]["paused_s"] >= 1.5, st["stats"]


# -- loud failures ----------------------------------------------------------------------------

def _tiny_step(hooks, model, order):
    outputs = []
    with hooks.step():
        for instruction in order:
            if instruction == "forward":
                with hooks.forward():
                    outputs.append(model(torch.ones(4, 8)))
            else:
                with hooks.backward():
                    outputs.pop(0).sum().backward()


def _warn_within(client, hooks, order, match, timeout_s=15):
    model = torch.nn.Linear(8, 8)
    with pytest.warns(perseus.PerseusWarning, match=match) as record:
        deadline = time.time() + timeout_s
        while time.time() < deadline and not any(issubclass(w.category, perseus.PerseusWarning) for w in record):
            _tiny_step(hooks, model, order)
            time.sleep(0.01)
    return record


def test_unknown_job_warns(server):
    client = perseus.RankClient(server, "no-such-job", rank=0, gpu="simulated:A100", poll_interval_ms=20,
                                restore_on_signal=False)
    with client:
        hooks = perseus.torch.PipelineHooks(client, device="cpu")
        record = _warn_within(client, hooks, ["forward", "backward"], match="no-such-job")
        assert client.stats()["warnings"] >= 1
        # The warning points at the training loop's line, not into perseus.
        assert [w.filename for w in record if issubclass(w.category, perseus.PerseusWarning)][0] == __file__


def test_schedule_mismatch_warns(server):
    # Declared 1F1B (one stage: F B F B F B F B); the loop runs GPipe's order (F F F F B B B B).
    perseus.register_job(server, {"id": "mismatch", "dp": 1, "pp": 1, "tp": 1, "schedule": "1f1b",
                                  "microbatches": 4})
    client = perseus.RankClient(server, "mismatch", rank=0, gpu="simulated:A100", poll_interval_ms=20,
                                restore_on_signal=False)
    with client:
        hooks = perseus.torch.PipelineHooks(client, device="cpu")
        _warn_within(client, hooks, ["forward"] * 4 + ["backward"] * 4, match="(?i)schedule")
        assert client.stats()["schedule_mismatches"] > 0


# -- perseus.torch without a server: CUDA events (faked), CPU timing, simulated padding -------

class FakeClient:
    """Records the hook calls PipelineHooks makes."""

    def __init__(self, framework_durations=True, simulated=False, sync_at=()):
        self.framework_durations, self.simulated = framework_durations, simulated
        self.calls, self.recorded, self.sync_at, self.steps = [], [], set(sync_at), 0

    def stats(self):
        return {"iterations": 7}

    def on_step_begin(self):
        self.calls.append("step_begin")

    def on_step_end(self):
        self.calls.append("step_end")
        self.steps += 1

    def on_instruction_begin(self, name):
        self.calls.append(name + "_begin")

    def on_instruction_end(self, name):
        self.calls.append(name + "_end")

    def sync_wanted_at_next_step(self):
        return self.steps in self.sync_at

    def pause_requested(self):
        return None  # test_pause.py covers pausing

    def record_durations(self, iteration, seconds):
        self.recorded.append((iteration, list(seconds)))

    def simulate(self, name, time_at_max_s, busy_power_w, compute_fraction):
        self.calls.append("simulate %s %.3f" % (name, time_at_max_s))
        return time_at_max_s


class FakeCuda:
    """torch.cuda with events stamped by a fake GPU clock; the GPU 'finishes' when told to."""

    def __init__(self):
        self.now_ms, self.done_ms, self.syncs = 0.0, -1.0, 0
        cuda = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.t_ms = None

            def record(self):
                cuda.now_ms += 1.5
                self.t_ms = cuda.now_ms

            def query(self):
                return self.t_ms is not None and self.t_ms <= cuda.done_ms

            def elapsed_time(self, end):
                assert self.query() and end.query(), "read before the GPU finished"
                return end.t_ms - self.t_ms

        self.Event = Event

    def synchronize(self):
        self.syncs += 1
        self.done_ms = self.now_ms

    def is_available(self):
        return True


@pytest.fixture
def fake_cuda(monkeypatch):
    cuda = FakeCuda()
    monkeypatch.setattr(perseus.torch, "torch", types.SimpleNamespace(cuda=cuda, device=torch.device))
    return cuda


def test_cuda_events_are_read_later_without_blocking(fake_cuda):
    client = FakeClient(sync_at={2})
    hooks = perseus.torch.PipelineHooks(client, device="cuda")
    for _ in range(2):
        with hooks.step():
            with hooks.forward():
                pass
            with hooks.backward():
                pass
    assert client.recorded == [] and fake_cuda.syncs == 0  # the GPU has not finished: nothing read, no sync
    fake_cuda.done_ms = fake_cuda.now_ms  # the GPU catches up
    with hooks.step():  # step 2 starts a profiling window: one sync, and the finished iterations are read
        with hooks.forward():
            pass
    assert fake_cuda.syncs == 1
    # Iterations are numbered from the client's count (7); each computation's events are 1.5 ms apart.
    assert client.recorded == [(7, [0.0015, 0.0015]), (8, [0.0015, 0.0015])]
    with hooks:  # leaving flushes the last iteration (synchronising once more)
        pass
    assert client.recorded[-1] == (9, [0.0015]) and fake_cuda.syncs == 2
    assert client.calls[:6] == ["step_begin", "forward_begin", "forward_end", "backward_begin", "backward_end",
                                "step_end"]


def test_cuda_without_framework_durations_warns(fake_cuda):
    with pytest.warns(perseus.PerseusWarning, match="framework_durations=True"):
        perseus.torch.PipelineHooks(FakeClient(framework_durations=False), device="cuda")


def test_cpu_durations_and_simulated_padding():
    client = FakeClient(framework_durations=True, simulated=True)
    hooks = perseus.torch.PipelineHooks(client, device="cpu", simulated_work={
        "forward": perseus.torch.SimulatedWork(0.02), "backward": perseus.torch.SimulatedWork(0.04)})
    hooks.simulated_slowdown = 1.5
    start = time.perf_counter()
    with hooks.step():
        with hooks.forward():
            pass
        with hooks.backward(simulate=perseus.torch.SimulatedWork(0.01)):
            pass
    elapsed = time.perf_counter() - start
    assert "simulate forward 0.030" in client.calls and "simulate backward 0.015" in client.calls
    [(iteration, seconds)] = client.recorded
    assert iteration == 7
    assert seconds[0] == pytest.approx(0.03, abs=0.01) and seconds[1] == pytest.approx(0.015, abs=0.01)
    assert elapsed >= 0.045
    # An exception inside the step reports nothing for it.
    with pytest.raises(KeyError):
        with hooks.step():
            with hooks.forward():
                raise KeyError("x")
    assert len(client.recorded) == 1 and client.calls[-1] == "forward_end"


def test_hooks_errors_and_wrap():
    with pytest.raises(ValueError, match="needs a simulated GPU"):
        perseus.torch.PipelineHooks(FakeClient(), device="cpu", simulated_work={"forward": perseus.torch.SimulatedWork(1)})
    with pytest.raises(ValueError, match="expected keys 'forward' and 'backward'"):
        perseus.torch.PipelineHooks(FakeClient(simulated=True), device="cpu",
                                    simulated_work={"fwd": perseus.torch.SimulatedWork(1)})
    client = FakeClient(framework_durations=False)
    hooks = perseus.torch.PipelineHooks(client, device="cpu")
    fwd = hooks.wrap(lambda x: x + 1, "forward")
    step = hooks.wrap(lambda: fwd(1), "step")
    assert step() == 2
    assert client.calls == ["step_begin", "forward_begin", "forward_end", "step_end"]
    assert client.recorded == []  # hooks' own timestamps: nothing to record
    with pytest.raises(ValueError, match="kind: expected"):
        hooks.wrap(print, "fwd")
    # Computations outside a step (evaluation) pass through; an open step ends at the next begin.
    client.calls.clear()
    assert fwd(2) == 3 and client.calls == []
    hooks.begin_step()
    hooks.begin_step()
    hooks.end_step()
    hooks.end_step()
    assert client.calls == ["step_begin", "step_end", "step_begin", "step_end"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        perseus.torch.PipelineHooks(client, device="cpu")  # CPU: no warning
