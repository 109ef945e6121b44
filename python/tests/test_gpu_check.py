"""perseus.gpu_check without a GPU: the skip path, its pure helpers, and the
whole script run against the fake libnvidia-ml with torch on the CPU standing
in for CUDA (so the code that only a real GPU exercises still runs in CI).
Everything that loads the fake library runs in a child process, so no other
test finds a "libnvidia-ml.so.1" already loaded."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import types

import pytest

import perseus
from perseus import gpu_check

FAKE_NVML = os.path.normpath(os.path.join(os.path.dirname(perseus.__file__), "..", "..", "src", "runtime", "gpu",
                                          "fake_nvml", "libnvidia-ml.so.1"))


def _run(argv, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML_")}
    full_env.update(env or {})
    return subprocess.run([sys.executable] + argv, capture_output=True, text=True, env=full_env, timeout=300)


def _run_module(*args, env=None):
    return _run(["-m", "perseus.gpu_check", *args], env)


# Runs gpu_check.main in a child process with torch on the CPU standing in for CUDA.
_CPU_RUNNER = """
import sys
sys.path.insert(0, %r)
import test_gpu_check
from perseus import gpu_check
sys.exit(gpu_check.main(sys.argv[1:], torch_module=test_gpu_check._cpu_torch()))
""" % os.path.dirname(os.path.abspath(__file__))


def _run_on_cpu(*args, env=None):
    pytest.importorskip("torch")
    return _run(["-c", _CPU_RUNNER, *args], env)


def test_skips_without_nvml():
    r = _run_module("--nvml-library", "libnvidia-ml-absent.so.1")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "skipped: no NVIDIA GPU (no NVIDIA driver: libnvidia-ml-absent.so.1 not found)\n"


def test_skips_without_nvml_from_the_environment():
    r = _run_module(env={"PERSEUS_NVML_LIBRARY": "libnvidia-ml-absent.so.1"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("skipped: no NVIDIA GPU (no NVIDIA driver: libnvidia-ml-absent.so.1")


def test_a_mistyped_library_path_is_an_error_not_a_skip(tmp_path):
    """A path that is missing or not a library is the user's mistake: exit 1, as perseus doctor says."""
    for env in ({}, {"PERSEUS_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"}):
        args = () if env else ("--nvml-library", "/nonexistent/libnvidia-ml.so.1")
        r = _run_module(*args, env=env)
        assert (r.returncode, r.stdout) == (1, ""), r.stdout + r.stderr
        assert r.stderr == ("gpu_check: error: /nonexistent/libnvidia-ml.so.1 does not exist: --nvml-library or "
                            "PERSEUS_NVML_LIBRARY names a missing file (unset, the driver's libnvidia-ml.so.1 is "
                            "looked for)\n"), r.stderr
    not_a_library = tmp_path / "libnvidia-ml.so.1"
    not_a_library.write_text("not ELF\n")
    r = _run_module("--nvml-library", str(not_a_library))
    assert (r.returncode, r.stdout) == (1, ""), r.stdout + r.stderr
    assert r.stderr.startswith("gpu_check: error: %s is not a library this machine can load (" % not_a_library), \
        r.stderr
    libm = "/lib/x86_64-linux-gnu/libm.so.6"  # a library, but not NVML
    if os.path.exists(libm):
        r = _run_module("--nvml-library", libm)
        assert (r.returncode, r.stdout) == (1, ""), r.stdout + r.stderr
        assert r.stderr.startswith("gpu_check: error: %s is not a usable NVML library: " % libm), r.stderr


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake libnvidia-ml is not built")
def test_gpu_seen_by_nvml_but_not_by_torch():
    """NVML sees a (fake) GPU; CPU-only PyTorch cannot use it: skip. No PyTorch at all: an error."""
    r = _run_module("--nvml-library", FAKE_NVML)
    try:
        import torch  # noqa: F401
    except ImportError:
        assert r.returncode == 1
        assert r.stdout == ""
        assert "gpu_check: error: PyTorch is not installed" in r.stderr
        return
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("skipped: no NVIDIA GPU (torch.cuda.is_available() is False")
    assert r.stdout.count("\n") == 1


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake libnvidia-ml is not built")
def test_no_gpus_and_driver_not_loaded():
    r = _run_module("--nvml-library", FAKE_NVML, env={"FAKE_NVML_GPUS": "0"})
    assert (r.returncode, r.stdout) == (0, "skipped: no NVIDIA GPU (NVML sees no GPU)\n"), r.stderr
    r = _run_module("--nvml-library", FAKE_NVML, env={"FAKE_NVML_INIT_ERROR": "9"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == "skipped: no NVIDIA GPU (no NVIDIA driver: nvmlInit_v2: Driver Not Loaded (NVML error 9))\n"


def test_counter_power_uses_whole_update_periods():
    # 300 W published every 100 ms (first update at 0.05 s), read every ms from t = 0.
    samples = []
    for i in range(1000):
        t = i * 0.001
        published = 0.05 + ((t - 0.05) // 0.1) * 0.1
        samples.append((t, 1000 + round(300 * published, 3)))
    power_w, span_s, updates = gpu_check.counter_power(samples)
    assert updates == 10
    assert span_s == pytest.approx(0.9, abs=0.002)
    assert power_w == pytest.approx(300, rel=0.005)
    with pytest.raises(ValueError):
        gpu_check.counter_power([(0, 1)])
    assert gpu_check.counter_power([(0, 1), (1, 1)]) == (0.0, 1, 0)


def test_choose_clocks_and_interleave():
    supported = list(range(1410, 209, -15))
    clocks = gpu_check.choose_clocks(supported, 6)
    assert clocks == [1410, 1275, 1125, 990, 840, 705]
    assert gpu_check.choose_clocks(supported, 1) == [1410]
    assert gpu_check.interleave(clocks) == [1410, 705, 1275, 840, 1125, 990]
    assert gpu_check.interleave([3, 2, 1]) == [3, 1, 2]


def test_one_f_one_b():
    assert gpu_check.one_f_one_b(0, 2, 3) == [("forward", 0), ("forward", 1), ("backward", 0), ("forward", 2),
                                              ("backward", 1), ("backward", 2)]
    assert gpu_check.one_f_one_b(1, 2, 3) == [("forward", 0), ("backward", 0), ("forward", 1), ("backward", 1),
                                              ("forward", 2), ("backward", 2)]


def test_replay_pipeline_matches_the_1f1b_formula():
    stages, microbatches, f, b = 4, 8, 0.01, 0.02
    ops = [[(ins, mb, 1410) for ins, mb in gpu_check.one_f_one_b(s, stages, microbatches)] for s in range(stages)]
    time_s, busy = gpu_check.replay_pipeline(ops, lambda s, ins, mb: f if ins == "forward" else b)
    assert time_s == pytest.approx((microbatches + stages - 1) * (f + b))
    assert busy == [pytest.approx(microbatches * (f + b))] * stages
    with pytest.raises(ValueError, match="wait on each other"):
        gpu_check.replay_pipeline([[("backward", 0, 1)], [("backward", 0, 1)]], lambda *_: 1.0)


def test_replay_agrees_with_perseus_evaluate_plan():
    rows = [{"clock_mhz": 1410, "forward_s": 0.010, "backward_s": 0.021, "forward_j": 3.0, "backward_j": 6.5},
            {"clock_mhz": 1005, "forward_s": 0.013, "backward_s": 0.027, "forward_j": 2.2, "backward_j": 4.9}]
    layers = [2, 2, 3]
    problem = perseus.build_problem(perseus.parse_profile_csv(gpu_check.profile_csv(rows, layers)), schedule="1f1b",
                                    microbatches=4, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem)
    table = {(r["clock_mhz"], ins): r[ins + "_s"] for r in rows for ins in ("forward", "backward")}
    for plan in [frontier.all_max, frontier.no_slowdown_plan(), frontier.plans[-1]]:
        ops = perseus.stage_plans(problem, plan)
        time_s, busy = gpu_check.replay_pipeline(ops, lambda s, ins, mb, o=ops: layers[s] * table[
            (next(op[2] for op in o[s] if op[0] == ins and op[1] == mb), ins)])
        assert time_s == pytest.approx(perseus.evaluate_plan(problem, plan.choice)[0], rel=1e-9)


def test_profile_csv_round_trip_and_compare():
    rows = [{"clock_mhz": 1410, "forward_s": 0.01, "backward_s": 0.02, "forward_j": 3.0, "backward_j": 6.0}]
    parsed = gpu_check.parse_profile_rows(gpu_check.profile_csv(rows, [1, 2]))
    assert parsed[(1, "backward", 1410)] == (pytest.approx(0.04), pytest.approx(12.0))
    online = {(0, "forward", 1410): (0.011, 2.7), (0, "backward", 1200): (0.03, 5.0)}
    diffs = gpu_check.compare_profiles(rows, online)
    assert len(diffs) == 1  # 1200 MHz is outside the offline clocks' range
    clock, ins, dt, de, exact = diffs[0]
    assert (clock, ins, exact) == (1410, "forward", True)
    assert dt == pytest.approx(0.1)
    assert de == pytest.approx(-0.1)


def test_compare_profiles_interpolates_between_offline_clocks():
    rows = [{"clock_mhz": 1400, "forward_s": 0.010, "backward_s": 0.020, "forward_j": 3.0, "backward_j": 6.0},
            {"clock_mhz": 1000, "forward_s": 0.014, "backward_s": 0.028, "forward_j": 2.0, "backward_j": 4.0}]
    online = {(0, "forward", 1100): (0.013, 2.25), (0, "backward", 1000): (0.028, 4.4),
              (0, "forward", 900): (0.02, 2.0), (1, "forward", 1100): (0.5, 50.0)}
    diffs = gpu_check.compare_profiles(rows, online)
    assert [(d[0], d[1], d[4]) for d in diffs] == [(1100, "forward", False), (1000, "backward", True)]
    # 1100 MHz is a quarter of the way from 1000 to 1400: offline 0.013 s and 2.25 J there.
    assert diffs[0][2] == pytest.approx(0.0, abs=1e-12) and diffs[0][3] == pytest.approx(0.0, abs=1e-12)
    assert diffs[1][3] == pytest.approx(0.1)


class _CpuEvent:
    """torch.cuda.Event on the CPU: work runs synchronously, so the time of record() is when it happened."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def query(self):
        return True

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


def _cpu_torch():
    """torch, with a torch.cuda that runs everything on the CPU."""
    torch = pytest.importorskip("torch")
    cuda = types.SimpleNamespace(
        Event=_CpuEvent, is_available=lambda: True, synchronize=lambda: None, memory_allocated=lambda: 0,
        mem_get_info=lambda: (8 << 30, 16 << 30), device_count=lambda: 1,
        get_device_properties=lambda i: types.SimpleNamespace(), set_device=lambda d: None)

    class CpuTorch:
        def __init__(self):
            self.cuda = cuda
            self.version = types.SimpleNamespace(cuda="cpu stand-in")

        def __getattr__(self, name):
            return getattr(torch, name)

        def device(self, *args):
            return torch.device("cpu")

    return CpuTorch()


TINY = ["--d-model", "32", "--nhead", "4", "--ffn", "64", "--seq", "16", "--max-batch", "8", "--dtype", "float32",
        "--forward-ms", "1", "--clocks", "2", "--window-s", "0.4", "--settle-s", "0.05", "--warmup-min-s", "0",
        "--warmup-max-s", "0.4", "--compare-window-s", "0.4", "--blocking-s", "0.3", "--stage-layers", "1,2",
        "--microbatches", "2"]


@pytest.mark.skipif(not os.path.exists(FAKE_NVML) or not os.environ.get("PERSEUS_CLI"),
                    reason="the fake libnvidia-ml or the perseus binary (PERSEUS_CLI) is not built")
def test_whole_script_with_the_online_step_on_the_fake_gpu(tmp_path):
    # The offline steps first, then the online step alone with --offline-from their report.
    env = {"FAKE_NVML_ENERGY_PERIOD_MS": "20", "FAKE_NVML_STATE": str(tmp_path / "state"),
           "FAKE_NVML_LOCK_CALL_MS": "30", "FAKE_NVML_CLOCK_LATENCY_MS": "60"}
    offline = _run_on_cpu("--nvml-library", FAKE_NVML, *TINY, "--clocks", "3", "--skip-online",
                          "--json", str(tmp_path / "offline.json"), env=env)
    assert offline.returncode == 0, offline.stdout + offline.stderr
    kept = tmp_path / "online"
    r = _run_on_cpu("--nvml-library", FAKE_NVML, *TINY, "--online-window-s", "0.05",
                    "--online-timeout-s", "90", "--online-clocks", "4", "--offline-from",
                    str(tmp_path / "offline.json"), "--online-dir", str(kept), env=env)
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert "1-2. skipped: the offline profile (3 clocks) comes from %s" % (tmp_path / "offline.json") in out
    assert "1. offline profile" not in out and "2. no-slowdown plan" not in out
    assert "3. clock switches as the computations see them" in out
    assert "the server's log, database and the online profile (profile.csv) are in %s" % kept in out
    assert (kept / "profile.csv").read_text().startswith("stage,instruction,frequency,time,energy")
    assert '"optimization_done"' in (kept / "log").read_text()
    assert "online profiling (perseus serve, a one-stage job, perseus.torch hooks" in out
    # The rank client measured the fake GPU's 30 ms lock calls (the switch latency: the fake's clock then
    # shows 60 ms later, which is NVML's lag, not the switch's) and the server warned.
    assert re.search(r'"code": "slow_clock_switch".*a locked SM clock takes (3[0-9]|4[0-9])\.[0-9] ms '
                     r'to take effect \(the', out), out
    assert "phase running after" in out
    assert "online profiling comparison (online vs offline, same layer" in out
    # The server profiled 4 clocks from 1410 MHz down to the offline step's lowest, 705 MHz.
    assert re.search(r"^ +1410  forward .* measured$", out, re.M), out
    assert re.search(r"^ +705  backward .* measured$", out, re.M), out
    assert re.search(r"median \|diff\|: time [0-9.]+%, energy [0-9.]+% over 8 rows", out), out


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake libnvidia-ml is not built")
def test_whole_script_on_the_fake_gpu(tmp_path):
    report_path = tmp_path / "report.json"
    state = tmp_path / "fake_nvml_state"
    r = _run_on_cpu("--nvml-library", FAKE_NVML, "--skip-online", "--json", str(report_path), *TINY,
                    env={"FAKE_NVML_ENERGY_PERIOD_MS": "20", "FAKE_NVML_STATE": str(state)})
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert "GPU 0: NVIDIA A100-SXM4-40GB (GPU-00000000-fa4e-4000-8000-000000000000), 81 SM clocks 210-1410 MHz" in out
    assert "1. offline profile" in out
    assert "clocks [1410, 705]; order [1410, 705], then reversed" in out
    assert "2. no-slowdown plan vs all-max" in out
    assert "savings: predicted " in out
    assert "3. clock switches as the computations see them" in out
    assert re.search(r"^  1410 -> 705 MHz: lock call [0-9.]+ ms; NVML shows 705 MHz after [0-9.]+ ms", out, re.M), out
    assert re.search(r"^  705 -> 1410 MHz: lock call", out, re.M), out
    # On the CPU stand-in work runs as it is queued, so the queue is always dry at the call.
    assert re.search(r"^  1410 -> 705 MHz, forwards queued through the call: lock call [0-9.]+ ms; forwards "
                     r"[0-9.]+ -> [0-9.]+ ms; the GPU was NOT busy through the whole call", out, re.M), out
    assert "online profiling comparison: not run (--skip-online)" in out
    report = json.loads(report_path.read_text())
    rows = report["profile"]
    assert [r["clock_mhz"] for r in rows] == [1410, 705]
    # The fake GPU's power depends only on the locked clock: 400 W at 1410 MHz, 160 W at 705 MHz.
    assert rows[0]["forward_w"] == pytest.approx(400, rel=0.1)
    assert rows[1]["forward_w"] == pytest.approx(160, rel=0.1)
    assert report["blocking_power_w"] == pytest.approx(400, rel=0.1)
    assert len(report["switches"]) == 8 and report["switches"][0]["after"]
    assert [bool(m.get("queued")) for m in report["switches"]] == [False] * 4 + [True] * 4
    plans = report["plans"]
    assert plans["all-max"]["switches"] <= 1
    assert plans["no-slowdown"]["energy_j"] > 0
    # The clock was unlocked at the end.
    assert "gpu 0 locked_sm_clock_mhz 0 " in state.read_text()


@pytest.mark.skipif(not os.path.exists(FAKE_NVML), reason="the fake libnvidia-ml is not built")
def test_refused_clock_control_is_an_error():
    r = _run_on_cpu("--nvml-library", FAKE_NVML, "--skip-online", *TINY, env={"FAKE_NVML_DENY_SET": "1"})
    err = r.stderr
    assert r.returncode == 1, r.stdout + err
    assert "gpu_check: error: cannot lock the SM clock: nvmlDeviceSetGpuLockedClocks(1410): Insufficient " \
           "Permissions (NVML error 4); run as root, or pass --daemon SOCKET of a running perseusd" in err


def test_offline_from_refuses_another_gpu_and_a_broken_report(tmp_path):
    gpu = types.SimpleNamespace(uuid="GPU-1")
    row = {"clock_mhz": 1410, "achieved_mhz": 1410, "forward_s": 0.01, "backward_s": 0.02, "forward_j": 1.0,
           "backward_j": 2.0}
    args = gpu_check.parse_args([])
    good = {"gpu": {"uuid": "GPU-1"}, "profile": [row, dict(row, clock_mhz=705)], "blocking_power_w": 90,
            "args": {"d_model": 4096, "dtype": "bfloat16"}, "layer": {"batch": 11}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(good))
    rows, blocking_w, layer = gpu_check.load_offline_report(str(path), gpu, args)
    assert [r["clock_mhz"] for r in rows] == [1410, 705] and blocking_w == 90.0 and layer == {"batch": 11}
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "layer"}))  # a report from before layers
    assert gpu_check.load_offline_report(str(path), gpu, args)[2] == {}
    cases = [({**good, "gpu": {"uuid": "GPU-2"}}, "field gpu.uuid is GPU-2, not this GPU's GPU-1"),
             ({**good, "profile": [row]}, "field profile: expected two or more offline rows"),
             ({**good, "profile": [row, {"clock_mhz": 705}]}, "field profile: expected two or more offline rows"),
             ({**good, "blocking_power_w": "90"}, "field blocking_power_w: expected a number"),
             ({**good, "args": {"d_model": 2048}}, "field args.d_model is 2048, not this run's 4096")]
    for report, message in cases:
        path.write_text(json.dumps(report))
        with pytest.raises(SystemExit, match=re.escape("--offline-from %s: %s" % (path, message))):
            gpu_check.load_offline_report(str(path), gpu, args)
    path.write_text("{not json")
    with pytest.raises(SystemExit, match=re.escape("--offline-from %s: " % path)):
        gpu_check.load_offline_report(str(path), gpu, args)
    with pytest.raises(SystemExit, match="No such file"):
        gpu_check.load_offline_report(str(tmp_path / "missing.json"), gpu, args)


def test_a_used_online_dir_is_refused_before_any_gpu_work(tmp_path, capsys):
    (tmp_path / "p.db").write_text("")
    with pytest.raises(SystemExit):
        gpu_check.parse_args(["--online-dir", str(tmp_path)])
    assert "--online-dir %s is not empty: give an empty or new folder" % tmp_path in capsys.readouterr().err
    assert gpu_check.parse_args(["--online-dir", str(tmp_path / "new")]).online_dir == str(tmp_path / "new")


# Every option is checked when parsed, before the GPU's clock is locked: a NaN
# window or zero clocks used to fail (or hang) with the clock locked.
@pytest.mark.parametrize("argv, message", [
    (["--window-s", "nan"], "argument --window-s: expected a finite number > 0, got 'nan'"),
    (["--window-s", "0"], "argument --window-s: expected a finite number > 0, got '0'"),
    (["--settle-s", "-1"], "argument --settle-s: expected a finite number >= 0, got '-1'"),
    (["--online-timeout-s", "inf"], "argument --online-timeout-s: expected a finite number > 0, got 'inf'"),
    (["--clocks", "1"], "argument --clocks: expected an integer >= 2, got '1'"),
    (["--microbatches", "0"], "argument --microbatches: expected an integer >= 1, got '0'"),
    (["--gpu", "-1"], "argument --gpu: expected an integer >= 0, got '-1'"),
    (["--stage-layers", "2,0,2"], "argument --stage-layers: expected a comma-separated list of integers >= 1, "
                                  "got '2,0,2'"),
    (["--warmup-min-s", "30", "--warmup-max-s", "20"], "--warmup-max-s 20 is below --warmup-min-s 30"),
])
def test_bad_options_are_refused_before_any_gpu_work(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        gpu_check.parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_stage_layers_parse_into_a_list():
    assert gpu_check.parse_args([]).stage_layers == [2, 2, 2, 3]
    assert gpu_check.parse_args(["--stage-layers", "1,4"]).stage_layers == [1, 4]


def _switch(old_s, new_s, latency_s, nvml_s, count=60, gap_s=50e-6):
    """Forwards after a lock call on a GPU that runs at the old speed for latency_s."""
    after, t = [], 0.0
    for _ in range(count):
        x = min(max(latency_s - t, 0.0), old_s)  # seconds of this forward at the old speed
        d = x + (1 - x / old_s) * new_s
        after.append((t, d, 990 if t + d >= nvml_s else 1380))
        t += d + gap_s
    return after


def test_switch_timing_finds_a_late_switch_and_scores_both_models():
    after = _switch(0.010, 0.014, 0.105, 0.106)
    t = gpu_check.switch_timing([0.010] * 5, after, 990)
    assert t["old_s"] == pytest.approx(0.010) and t["new_s"] == pytest.approx(0.014)
    # Forward 10 starts at 100.5 ms and runs its first 4.5 ms at the old speed.
    assert t["effective_s"] == pytest.approx(0.105, abs=1e-9)
    assert t["between"] == 1
    assert t["nvml_s"] == pytest.approx(after[10][0] + after[10][1])  # read after the forward it fell in
    # 104.5 ms of forwards ran at the old speed (0.5 ms are gaps): 104.5 * (1 - 14/10) = -41.8 ms.
    assert t["late_s"] == pytest.approx(-0.0418, abs=1e-9)
    assert t["late_full_s"] == pytest.approx(t["nvml_s"] * -0.4)
    assert t["late_first_s"] == pytest.approx(0.010 * -0.4)


def test_switch_timing_up_and_instant_and_flat():
    up = gpu_check.switch_timing([0.014] * 5, _switch(0.014, 0.010, 0.030, 0.030), 1380)
    assert up["effective_s"] == pytest.approx(0.030, abs=1e-6)
    assert up["late_s"] == pytest.approx(0.030 * 4 / 14, abs=1e-4)
    instant = gpu_check.switch_timing([0.010] * 5, _switch(0.010, 0.014, 0.0, 0.0), 990)
    assert instant["effective_s"] == 0.0 and instant["late_s"] == pytest.approx(0.0, abs=1e-12)
    assert instant["between"] == 0
    flat = gpu_check.switch_timing([0.010] * 5, _switch(0.010, 0.0101, 0.05, 0.05), 990)
    assert flat["effective_s"] is None and "late_full_s" not in flat  # same speed: nothing to time
    never = gpu_check.switch_timing([0.010] * 5, [(0.011 * i, 0.010, 1380) for i in range(30)], 990)
    assert never["nvml_s"] is None and never["effective_s"] is None
    assert gpu_check.switch_timing([0.01], [(0.0, 0.01, 990)] * 10, 990) is None
    timing = gpu_check.switch_timing([0.010] * 5, _switch(0.010, 0.014, 0.105, 0.106), 990)
    line = gpu_check.describe_switch({"from_mhz": 1380, "to_mhz": 990, "lock_call_s": 0.0087, "timing": timing})
    assert line == ("1380 -> 990 MHz: lock call 8.7 ms; NVML shows 990 MHz after 112.7 ms; forwards 10.00 -> 14.00 ms; "
                    "new speed after 105.0 ms (1 forward in between); late -41.8 ms vs models: old clock for "
                    "L = 112.7 ms: -45.1 ms; first computation only: -4.0 ms")


def _queued(old_s, new_s, switch_at_s, count=60, start_s=-0.05):
    """Forwards back to back from start_s on a GPU that changes speed at switch_at_s."""
    forwards, t = [], start_s
    for _ in range(count):
        x = min(max(switch_at_s - t, 0.0), old_s)  # seconds of this forward at the old speed
        d = x + (1 - x / old_s) * new_s
        forwards.append((t, d))
        t += d
    return forwards


def test_busy_switch_timing_places_the_switch_within_the_call():
    # The call runs from 0 to 9 ms; the GPU changes speed when it returns, in the middle of a forward.
    forwards = _queued(0.010, 0.014, 0.009)
    t = gpu_check.busy_switch_timing(forwards, 0.0, 0.009, 990)
    assert t["busy"] and t["call_s"] == pytest.approx(0.009)
    assert t["old_s"] == pytest.approx(0.010) and t["new_s"] == pytest.approx(0.014)
    assert t["effective_s"] == pytest.approx(0.009, abs=1e-9)
    assert t["nvml_s"] is None and "late_full_s" not in t
    # At the call's start: the forward running then is the one in between.
    at_start = gpu_check.busy_switch_timing(_queued(0.010, 0.014, 0.0), 0.0, 0.009, 990)
    assert at_start["effective_s"] == pytest.approx(0.0, abs=1e-9)
    line = gpu_check.describe_busy_switch({"from_mhz": 1380, "to_mhz": 990, "lock_call_s": 0.009, "timing": t})
    assert line == ("1380 -> 990 MHz, forwards queued through the call: lock call 9.0 ms; forwards 10.00 -> 14.00 ms; "
                    "new speed 9.0 ms after the call began (0 forwards in between)")
    # A queue that ran dry before the call returned, and one that began after the call started.
    dry = [(-0.046 + 0.010 * i, 0.010) for i in range(5)] + [(0.012 + 0.014 * i, 0.014) for i in range(40)]
    assert not gpu_check.busy_switch_timing(dry, 0.0, 0.009, 990)["busy"]
    late_start = [(0.001 + 0.014 * i, 0.014) for i in range(40)]
    assert gpu_check.busy_switch_timing([(-0.05, 0.01)] * 3 + late_start, 0.0, 0.009, 990)["busy"] is False
    assert "NOT busy" in gpu_check.describe_busy_switch(
        {"from_mhz": 1380, "to_mhz": 990, "lock_call_s": 0.009,
         "timing": gpu_check.busy_switch_timing(dry, 0.0, 0.009, 990)})
    assert gpu_check.busy_switch_timing(forwards[:4], 0.0, 0.009, 990) is None


@pytest.mark.skipif(not os.environ.get("PERSEUS_CLI"), reason="the perseus binary (PERSEUS_CLI) is not built")
def test_the_online_server_ends_when_the_script_is_killed(tmp_path):
    pid_file = tmp_path / "pid"
    code = ("import os, signal, sys, time; from perseus import gpu_check\n"
            "s = gpu_check.start_server([sys.argv[1], 'serve', '--db', sys.argv[2], '--port', '0'])\n"
            "open(sys.argv[3], 'w').write(str(s.pid)); time.sleep(0.5)\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    r = subprocess.run([sys.executable, "-c", code, os.environ["PERSEUS_CLI"], str(tmp_path / "p.db"), str(pid_file)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == -signal.SIGKILL, r.stderr
    pid = int(pid_file.read_text())
    for _ in range(200):
        try:
            os.kill(pid, 0)
            with open("/proc/%d/stat" % pid) as f:
                if f.read().split(")")[-1].split()[0] == "Z":  # exited, not yet reaped (by init)
                    return
        except (ProcessLookupError, FileNotFoundError):
            return
        time.sleep(0.05)
    pytest.fail("perseus serve (pid %d) outlived the killed script" % pid)


def test_switch_timing_does_not_take_noise_for_a_partial_forward():
    before = [0.010, 0.0102, 0.0098, 0.0101, 0.0099]  # median absolute deviation 0.1 ms
    for prev, moved in ((0.01025, False), (0.0105, True)):  # 6% and 12.5% of the way to 14 ms
        after = [(0.0, 0.010, None), (0.010, prev, None)] + [(0.020 + 0.014 * i, 0.014, None) for i in range(30)]
        t = gpu_check.switch_timing(before, after, 990)
        if moved:  # 0.5 ms more than the old duration: 1.25 ms at the new speed, from 10 + 8.75 ms
            assert t["effective_s"] == pytest.approx(0.010 + (0.0105 - 0.014) * 0.010 / -0.004, abs=1e-9)
        else:
            assert t["effective_s"] == pytest.approx(0.020), prev


@pytest.mark.skipif(not os.path.exists(FAKE_NVML) or not os.environ.get("PERSEUS_CLI"),
                    reason="the fake libnvidia-ml or the perseus binary (PERSEUS_CLI) is not built")
def test_ctrl_c_during_doctor_keeps_its_report_and_stops_the_script(tmp_path):
    # Ctrl-C reaches the script and doctor (one process group). Doctor unlocks the clock, reports and ends by
    # the signal; the script must show that report and stop with the signal's status (the shell would
    # otherwise die with doctor, losing the captured report, or go on to "found problems").
    script = os.path.join(os.environ.get("PERSEUS_SOURCE_DIR", os.getcwd()), "scripts", "gpu_check.sh")
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_NVML_")}
    env.update(PERSEUS_NVML_LIBRARY=FAKE_NVML, FAKE_NVML_LOCK_CALL_MS="1500", FAKE_NVML_STATE=str(state))
    p = subprocess.Popen(["bash", script], env=env, start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while " sets 1 " not in (state.read_text() if state.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.01)  # the first lock is done: a switch's 1.5 s call runs next
    time.sleep(0.3)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 128 + signal.SIGINT, (p.returncode, out, err)
    assert "summary: " in out and "interrupted by SIGINT" in out, out
    assert "gpu_check: perseus doctor was interrupted" in err, err
    assert "found problems" not in err, err
    assert "locked_sm_clock_mhz 0 " in state.read_text(), state.read_text()


def test_the_script_reads_a_relative_library_path_from_the_callers_folder(tmp_path):
    # The script changes to the repository's folder; a relative path is the caller's. PERSEUS_CLI=/bin/false
    # stands in for doctor: past the path check, it "finds problems".
    script = os.path.join(os.environ.get("PERSEUS_SOURCE_DIR", os.getcwd()), "scripts", "gpu_check.sh")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_NVML_", "PERSEUS_NVML_"))}
    env["PERSEUS_CLI"] = "/bin/false"
    r = subprocess.run(["bash", script], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env=dict(env, PERSEUS_NVML_LIBRARY="missing/libnvidia-ml.so.1"))
    assert (r.returncode, r.stdout) == (1, ""), r.stdout + r.stderr
    assert r.stderr.startswith("gpu_check: error: %s/missing/libnvidia-ml.so.1 does not exist: " % tmp_path), r.stderr
    (tmp_path / "libnvidia-ml.so.1").write_text("there\n")
    r = subprocess.run(["bash", script, "--nvml-library", "./libnvidia-ml.so.1"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "does not exist" not in r.stderr and "perseus doctor found problems" in r.stderr, r.stderr
