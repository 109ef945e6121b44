"""perseus.RankClient against a real server, with simulated GPUs."""
import contextlib
import http.server
import os
import subprocess
import sys
import threading
import time

import pytest

import perseus


def _register(server, job, dp=1, pp=2, microbatches=4):
    reply = perseus.register_job(server, {
        "id": job, "dp": dp, "pp": pp, "tp": 1, "microbatches": microbatches,
        "profiling": {"iterations_per_clock": 1, "clock_stride": 10}})
    assert reply["created"] is True


def _step(opt, stage, order):
    """One training iteration of a simulated stage: each computation waits for its clock to apply,
    and its modelled work is queued on the simulated GPU (as a CUDA launch is)."""
    opt.on_step_begin()
    for ins in order:
        while not opt.clock_settled():
            time.sleep(0.0001)
        opt.on_instruction_begin(ins)
        opt.simulate(ins, 0.002 * (2 if ins == "backward" else 1) * (1 + 0.2 * stage))
        opt.on_instruction_end(ins)
    opt.on_step_end()


ORDERS = [["forward", "forward", "backward", "forward", "backward", "forward", "backward", "backward"],
          ["forward", "backward"] * 4]


def test_two_ranks_profile_and_run(server):
    _register(server, "py")
    opts = [perseus.RankClient(server, "py", rank=s, dp_rank=0, pp_rank=s, tp_rank=0, gpu_index=s,
                              gpu="simulated:A100", poll_interval_ms=20, restore_on_signal=False)
            for s in range(2)]
    try:
        deadline = time.time() + 120
        while perseus.job_status(server, "py")["phase"] != "running" and time.time() < deadline:
            for s, opt in enumerate(opts):
                _step(opt, s, ORDERS[s])
        assert perseus.job_status(server, "py")["phase"] == "running"
        deadline = time.time() + 30
        while opts[0].stats()["plan_kind"] != "frontier" and time.time() < deadline:
            for s, opt in enumerate(opts):
                _step(opt, s, ORDERS[s])
        stats = opts[0].stats()
        assert stats["registered"] and stats["connected"]
        assert stats["plan_kind"] == "frontier"
        assert stats["schedule_mismatches"] == 0
        assert stats["measurements_sent"] > 0
        assert "A100" in opts[0].gpu_name
        # The operator's requests go through the protocol module too.
        reply = perseus.declare_straggler(server, "py", pipeline=0, slowdown=1.2)
        assert reply["stragglers"] == [{"pipeline": 0, "slowdown": 1.2, "source": "api"}]
        with pytest.raises(ValueError, match=r"field 'pipeline': expected an integer in \[0, 0\], got 5"):
            perseus.declare_straggler(server, "py", pipeline=5, slowdown=1.2)
        with pytest.raises(ValueError, match=r"field 'slowdown': expected a number in \[1, 100\], got 0.5"):
            perseus.declare_straggler(server, "py", pipeline=0, slowdown=0.5)  # refused before sending
        assert perseus.clear_straggler(server, "py", 0)["stragglers"] == []
        capped = perseus.set_power_cap(server, "py", average_w=1.0)["power_cap"]  # below everything: the least power
        assert capped["source"] == "api" and capped["feasible"] is False
        assert perseus.job_status(server, "py")["power_cap"]["average_w"] == 1.0
        with pytest.raises(ValueError, match=r"field 'peak_w': expected a number in \[10, 1000000000\], got 5"):
            perseus.set_power_cap(server, "py", average_w=10, peak_w=5)
        assert perseus.clear_power_cap(server, "py")["power_cap"] is None
        # The server's own cap, shared by its running jobs (here one): the job runs under its share.
        shared = perseus.set_server_power_cap(server, average_w=1.0, window_s=30)["power_cap"]
        assert shared["cap"] == {"average_w": 1.0, "window_s": 30.0}
        assert [j["id"] for j in shared["jobs"]] == ["py"] and shared["feasible"] is False
        assert perseus.job_status(server, "py")["power_cap"]["source"] == "server"
        assert perseus.server_power_cap(server)["power_cap"]["jobs"][0]["id"] == "py"
        with pytest.raises(ValueError, match=r"field 'average_w': expected a number in \[1, 1000000000\], got 0"):
            perseus.set_server_power_cap(server, average_w=0)
        assert perseus.clear_server_power_cap(server)["power_cap"]["cap"] is None
        assert perseus.job_status(server, "py")["power_cap"] is None
        with pytest.raises(LookupError, match="pipeline 0 is not a straggler"):
            perseus.clear_straggler(server, "py", 0)
    finally:
        for opt in opts:
            opt.close()


def test_hook_errors_and_unreachable_server():
    opt = perseus.RankClient("http://127.0.0.1:9", "nojob", rank=0, gpu="simulated:A100",
                            poll_interval_ms=20, restore_on_signal=False)
    with opt:
        opt.on_step_begin()
        with pytest.raises(ValueError, match="instruction: expected 'forward', 'backward', 'backward_input' or 'backward_weight', got 'fwd'"):
            opt.on_instruction_begin("fwd")
        opt.on_instruction_begin("forward")
        opt.on_instruction_end("forward")
        opt.on_instruction_begin("backward_input")  # zero-bubble schedules' names are hooks too
        opt.on_instruction_end("backward_input")
        opt.on_step_end()  # training goes on without a server
        time.sleep(0.1)
        assert opt.stats()["connected"] is False
        assert opt.stats()["registered"] is False
    with pytest.raises(RuntimeError, match="closed|not"):
        opt.stats()


def test_bad_gpu_spec():
    with pytest.raises(ValueError, match="gpu: expected 'simulated:<name>', 'nvml' or 'daemon:<socket>'"):
        perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="cuda")
    with pytest.raises(LookupError):
        perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="simulated:Z80")


def test_server_addresses_are_checked_and_transport_errors_explained(tmp_path):
    # cpp-httplib threw its own words for another scheme, and named a refused connection "Connection".
    with pytest.raises(ValueError, match="server_url: unsupported URL scheme 'ftp'"):
        perseus.register_job("ftp://x", {"id": "j", "microbatches": 4})
    with pytest.raises(ValueError, match="ca_cert .*missing.pem: no such file"):
        perseus.job_status("https://127.0.0.1:9", "j", ca_cert=str(tmp_path / "missing.pem"))
    with pytest.raises(ValueError, match="server_url: unsupported URL scheme 'ftp'"):
        perseus.RankClient("ftp://x", "j", rank=0, gpu="simulated:A100")
    with pytest.raises(ConnectionError, match=r"GET http://127.0.0.1:9/jobs/j: cannot connect \(is the server running"):
        perseus.job_status("http://127.0.0.1:9", "j")


def test_register_job_errors(server):
    with pytest.raises(ValueError, match="field 'microbatches': missing"):
        perseus.register_job(server, {"id": "bad", "dp": 1, "pp": 2})
    with pytest.raises(LookupError, match="job 'nope' is not registered"):
        perseus.job_status(server, "nope")


def test_addresses_and_tokens_that_cannot_reach_the_server_are_named(monkeypatch):
    # cpp-httplib takes no path: "http://h:7787/" failed later as "cannot connect", and a rank
    # client with it never registered, silently.
    with pytest.raises(ValueError, match="server_url: 'http://127.0.0.1:9/' ends in '/'"):
        perseus.job_status("http://127.0.0.1:9/", "j")
    with pytest.raises(ValueError, match="has a path, query or fragment"):
        perseus.RankClient("http://127.0.0.1:9/api", "j", rank=0, gpu="simulated:A100")
    with pytest.raises(ValueError, match=r"bad port in 'http://127.0.0.1:99999' \(expected 1 to 65535\)"):
        perseus.finish_job("http://127.0.0.1:99999", "j")
    # A token with a line break was sent as raw header text (an injected header).
    with pytest.raises(ValueError, match=r"token: a line break at character 4 of 4 \(a file's trailing newline"):
        perseus.job_status("http://127.0.0.1:9", "j", token="abc\n")
    with pytest.raises(ValueError, match="token: a line break at character 2"):
        perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="simulated:A100", token="a\r\nX-Evil: 1")
    monkeypatch.setenv("PERSEUS_TOKEN", "t\x01")
    with pytest.raises(ValueError, match=r"\$PERSEUS_TOKEN: a control character at character 2"):
        perseus.job_status("http://127.0.0.1:9", "j")


def test_a_spec_json_cannot_carry_is_a_field_error():
    base = {"id": "j", "dp": 1, "pp": 2, "microbatches": 4}
    with pytest.raises(ValueError, match=r"job spec: field 'carbon\.slowdown_budget': expected a finite number, "
                                         r"got nan"):
        perseus.register_job("http://127.0.0.1:9", dict(base, carbon={"source": "fixed", "slowdown_budget": float("nan")}))
    with pytest.raises(ValueError, match=r"field 'profiling\.clocks_mhz\[1\]': expected a finite number, got inf"):
        perseus.register_job("http://127.0.0.1:9", dict(base, profiling={"clocks_mhz": [1410, float("inf")]}))
    with pytest.raises(ValueError, match=r"field 'extra': keys must be strings, got 1"):
        perseus.register_job("http://127.0.0.1:9", dict(base, extra={1: 2}))
    with pytest.raises(ValueError, match=r"field 'dp': cannot be sent as JSON \(a set\)"):
        perseus.register_job("http://127.0.0.1:9", dict(base, dp={1}))
    with pytest.raises(ValueError, match=r"field 'dp': integer out of range"):
        perseus.register_job("http://127.0.0.1:9", dict(base, dp=2 ** 70))
    looped = dict(base)
    looped["carbon"] = looped  # json.dumps said "Circular reference"; a depth-first walk must not crash
    with pytest.raises(ValueError, match="nested more than 64 levels deep"):
        perseus.register_job("http://127.0.0.1:9", looped)


def test_numpy_and_torch_numbers_keep_their_type():
    # Their __index__ would truncate a float array to an int: 0.05 went out as 0.
    np = pytest.importorskip("numpy")

    def sent(spec):
        try:
            perseus.register_job("http://127.0.0.1:9", spec)
        except ConnectionError:
            return True  # the spec passed every check and was sent
        return False
    base = {"id": "j", "dp": np.int64(1), "pp": 2, "microbatches": 4}

    def carbon(budget):
        return dict(base, carbon={"source": "fixed", "value_g_per_kwh": np.float64(400), "slowdown_budget": budget})
    assert sent(carbon(np.array(0.05)))
    out_of_range = r"field 'carbon\.slowdown_budget': expected a number in \[0, 10\], got 12\.5"
    with pytest.raises(ValueError, match=out_of_range):
        sent(carbon(np.array(12.5)))
    with pytest.raises(ValueError, match=r"field 'dp': cannot be sent as JSON \(a ndarray that is not one number\)"):
        sent(dict(base, dp=np.array([1.0, 2.0])))
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match=out_of_range):
        sent(carbon(torch.tensor(12.5)))


@contextlib.contextmanager
def _json_server(body, status=200):
    """A Python-thread HTTP server that answers every GET with `status` and `body`; yields its URL."""
    class Replies(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Replies)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield "http://127.0.0.1:%d" % httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_reply_that_is_not_an_object_is_a_clear_error():
    # The server is a Python thread: it answers only because the call waits on the
    # network without holding the GIL (before, every Python thread stopped for its 5 s timeout).
    with _json_server(b"[1, 2]") as url:
        with pytest.raises(RuntimeError, match=r"GET /jobs/j: reply: expected a JSON object, got \[1,2\]"):
            perseus.job_status(url, "j")


def test_rank_client_inputs_are_checked_when_given():
    with pytest.raises(ValueError, match="poll_interval_ms: expected 1 to 3600000 ms, got 0"):
        perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="simulated:A100", poll_interval_ms=0)
    with perseus.RankClient("http://127.0.0.1:9", "j", rank=0, gpu="simulated:A100", framework_durations=True,
                            restore_on_signal=False) as client:
        with pytest.raises(ValueError, match=r"seconds\[1\]: expected a finite duration >= 0 s, got nan"):
            client.record_durations(0, [0.01, float("nan")])
        with pytest.raises(ValueError, match="iteration: expected >= 0, got -1"):
            client.record_durations(-1, [0.01])
        client.record_durations(0, [0.01])
        client.record_durations(1, [])  # a step that ran none of this rank's computations (PipelineHooks sends it)
        for bad, match in (({"time_at_max_s": float("nan")}, "simulate: time_at_max_s: expected a positive number"),
                           ({"busy_power_w": float("inf")}, "simulate: busy_power_w: expected a positive number"),
                           ({"compute_fraction": 1.5}, "simulate: compute_fraction: expected 0..1, got 1.5")):
            kwargs = dict({"time_at_max_s": 0.01}, **bad)
            with pytest.raises(ValueError, match=match):
                client.simulate("forward", **kwargs)
        assert client.simulate("forward", 0.01) > 0


def test_simulated_work_is_checked_when_made():
    torch_module = pytest.importorskip("perseus.torch")
    with pytest.raises(ValueError, match="SimulatedWork: busy_power_w: expected a positive number, got nan"):
        torch_module.SimulatedWork(0.01, busy_power_w=float("nan"))
    with pytest.raises(ValueError, match="SimulatedWork: compute_fraction: expected 0..1, got -0.5"):
        torch_module.SimulatedWork(0.01, compute_fraction=-0.5)
    assert torch_module.SimulatedWork(0.01).compute_fraction is None


def test_a_warning_is_shown_once(server):
    # The native client printed each warning to stderr, and Python's warnings module showed it again.
    script = (
        "import time, perseus\n"
        "c = perseus.RankClient(%r, 'never-registered', rank=0, gpu='simulated:A100', poll_interval_ms=20,\n"
        "                       restore_on_signal=False)\n"
        "deadline = time.time() + 20\n"
        "while c.warning_count == 0 and time.time() < deadline:\n"
        "    c.on_step_begin(); c.on_step_end(); time.sleep(0.02)\n"
        "c.close()\n" % server)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("could not register") == 1, r.stderr


def test_a_client_dropped_without_close_still_shows_its_warnings(server):
    # Warnings reach Python at on_step_end, stats() and close(); one raised after the last of
    # those, in a client garbage-collected without close(), is printed by the destructor.
    script = (
        "import gc, time, perseus\n"
        "c = perseus.RankClient(%r, 'never-registered', rank=0, gpu='simulated:A100', poll_interval_ms=20,\n"
        "                       restore_on_signal=False)\n"
        "deadline = time.time() + 20\n"
        "while c.warning_count == 0 and time.time() < deadline:\n"
        "    time.sleep(0.02)\n"
        "del c\n"
        "gc.collect()\n"
        "print('dropped', flush=True)\n" % server)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "dropped\n", r.stderr
    assert r.stderr.count("perseus: warning: rank 0 could not register") == 1, r.stderr


def test_perseus_status_refuses_a_reply_of_another_shape():
    # A job id that is a number made `perseus status` abort on nlohmann's type_error (exit 134).
    cli = os.environ.get("PERSEUS_CLI")
    if not cli:
        pytest.skip("PERSEUS_CLI is not set (ctest sets it)")
    body = b'{"jobs": [{"id": 5, "phase": "running", "ranks_registered": 2, "world_size": 2}]}'
    with _json_server(body) as url:
        r = subprocess.run([cli, "status", "--server", url], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith("perseus: error: the server's reply to GET /jobs lacks a field this perseus reads"), \
        r.stderr


def test_a_server_error_message_cannot_drive_the_terminal():
    # A server's error message went to the terminal as it was: an escape sequence in it ran there.
    # A message of another type than string made the client throw nlohmann's type_error.
    cli = os.environ.get("PERSEUS_CLI")
    if not cli:
        pytest.skip("PERSEUS_CLI is not set (ctest sets it)")
    body = b'{"error": {"message": "no \\u001b[2Jsuch job\\r\\n"}}'
    with _json_server(body, status=404) as url:
        r = subprocess.run([cli, "status", "--server", url], capture_output=True, text=True, timeout=30)
        with pytest.raises(LookupError, match=r"no \\x1b\[2Jsuch job\\x0d\\n"):
            perseus.job_status(url, "j")
    assert r.returncode == 1, r.stderr
    assert "\x1b" not in r.stderr and "\r" not in r.stderr, repr(r.stderr)
    assert r.stderr == "perseus: error: GET /jobs: HTTP 404: no \\x1b[2Jsuch job\\x0d\\n\n", repr(r.stderr)
    with _json_server(b'{"error": {"message": 7}}', status=500) as url:
        r = subprocess.run([cli, "status", "--server", url], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith('perseus: error: GET /jobs: HTTP 500: {"error": {"message": 7}}'), r.stderr


def test_perseus_status_checks_the_job_id():
    # `--job ""` listed every job instead (an empty id was taken as no --job).
    cli = os.environ.get("PERSEUS_CLI")
    if not cli:
        pytest.skip("PERSEUS_CLI is not set (ctest sets it)")
    for job in ("", "a/b", "x\x1b[2J"):
        r = subprocess.run([cli, "status", "--server", "http://127.0.0.1:9", "--job", job],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 2, (job, r.stderr)
        assert r.stderr.startswith("perseus: error: --job: expected "), r.stderr
        assert "\x1b" not in r.stderr, repr(r.stderr)
