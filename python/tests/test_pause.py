"""Pausing from Python (docs/carbon.md, "Pausing in the server"): the rank client's
pause_requested() and wait_while_paused(), perseus.torch.PipelineHooks (waits on a
"hold" pause, raises perseus.JobPaused on a "release" one), and
`python3 -m perseus.launch wait-resume`.

A stub HTTP server in this process plays the perseus server's rank and carbon
endpoints, so a test can pause and resume the job at will (the real server's
pause decisions are tested in C++: RankClientPauseTest, SameDecisionsTest).
"""
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

import perseus

STEPS = [{"instruction": "forward", "microbatch": 0, "chunk": 0, "sm_clock_mhz": 1410},
         {"instruction": "backward", "microbatch": 0, "chunk": 0, "sm_clock_mhz": 1410}]


class StubServer:
    """The rank endpoints of one job: registration, and a plan that is a frontier plan or a pause."""

    def __init__(self):
        self.version = 1
        self.pause = None  # None, "hold" or "release"
        self.phase = "running"
        self.lock = threading.Lock()
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _reply(self, body, status=200):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._reply({"registered": True})

            def do_GET(self):
                with stub.lock:
                    pause, version = stub.pause, stub.version
                if self.path.endswith("/carbon"):
                    self._reply({"phase": stub.phase, "paused": pause is not None, "pause": pause or "never",
                                 "explanation": "stub"})
                elif "/plan" in self.path:
                    if self.path.endswith("?version=%d" % version):
                        self._reply({"changed": False, "version": version})
                        return
                    plan = {"changed": True, "version": version, "job": "j", "rank": 0, "phase": "running",
                            "kind": "frontier", "plan_index": 0, "predicted_time_s": 1.0, "instructions": STEPS}
                    if pause:
                        plan["kind"] = "pause"
                        plan["pause"] = {"hold_clock_mhz": 210, "release": pause == "release", "max_s": 3600,
                                         "reason": "stub"}
                    self._reply(plan)
                else:
                    self._reply({"error": "not found"}, 404)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def set(self, pause):
        with self.lock:
            self.pause = pause
            self.version += 1

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def stub():
    s = StubServer()
    yield s
    s.close()


def wait_for(predicate, timeout_s=10):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def new_client(stub):
    return perseus.RankClient(stub.url, "j", 0, gpu="simulated:A100:ideal", poll_interval_ms=10,
                              restore_on_signal=False)


def test_a_hold_pause_waits_at_the_lowest_clock_until_resumed(stub):
    with new_client(stub) as client:
        assert wait_for(lambda: client.stats()["plan_kind"] == "frontier")
        assert client.pause_requested() is None
        assert client.wait_while_paused() == 0
        stub.set("hold")
        assert wait_for(lambda: client.pause_requested() == "hold")
        assert client.stats()["paused"]
        waited = []
        waiter = threading.Thread(target=lambda: waited.append(client.wait_while_paused()))
        waiter.start()
        assert wait_for(lambda: client.stats()["requested_clock_mhz"] == 210)
        time.sleep(0.2)
        assert waiter.is_alive()  # still paused: the GIL is free meanwhile (this thread runs)
        stub.set(None)
        waiter.join(10)
        assert not waiter.is_alive()
        assert waited[0] >= 0.2
        stats = client.stats()
        assert stats["pauses"] == 1 and stats["paused_s"] >= 0.2 and not stats["paused"]
        # The caller's own limit ends a wait too.
        stub.set("hold")
        assert wait_for(lambda: client.pause_requested() == "hold")
        start = time.monotonic()
        assert 0.1 <= client.wait_while_paused(0.1) < 5
        assert time.monotonic() - start < 5
    # close() from another thread ends a wait.
    client = new_client(stub)
    assert wait_for(lambda: client.pause_requested() == "hold")
    waited = []
    waiter = threading.Thread(target=lambda: waited.append(client.wait_while_paused()))
    waiter.start()
    assert wait_for(lambda: client.stats()["requested_clock_mhz"] == 210)  # waiting
    time.sleep(0.2)
    client.close()
    waiter.join(10)
    assert not waiter.is_alive() and waited[0] >= 0.1
    with pytest.raises(RuntimeError, match="closed"):
        client.wait_while_paused()


def test_pipeline_hooks_wait_on_hold_and_raise_on_release(stub):
    torch = pytest.importorskip("torch")  # noqa: F841 (perseus.torch needs it)
    import perseus.torch

    with new_client(stub) as client:
        hooks = perseus.torch.PipelineHooks(client, device="cpu")
        assert wait_for(lambda: client.stats()["plan_kind"] == "frontier")
        with hooks.step():
            with hooks.forward():
                pass
            with hooks.backward():
                pass
        stub.set("hold")
        assert wait_for(lambda: client.pause_requested() == "hold")
        threading.Timer(0.3, stub.set, args=(None,)).start()
        start = time.monotonic()
        with hooks.step():  # waits until the stub resumes the job
            pass
        assert time.monotonic() - start >= 0.25
        assert client.stats()["pauses"] == 1
        stub.set("release")
        assert wait_for(lambda: client.pause_requested() == "release")
        ran = []
        with pytest.raises(perseus.JobPaused, match="EXIT_PAUSED"):
            with hooks.step():
                ran.append(1)
        assert ran == []  # the step's body did not run
        assert perseus.EXIT_PAUSED == 75


def launch(*args, timeout=30):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "perseus.launch", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_wait_resume_returns_when_the_job_runs_and_times_out_while_paused(stub):
    stub.set("release")
    timed_out = launch("wait-resume", "--server", stub.url, "--job", "j", "--poll-s", "0.05", "--timeout-s", "0.3")
    assert timed_out.returncode == 3, timed_out.stderr
    assert "is still paused after 0.3 s: stub" in timed_out.stderr
    threading.Timer(0.5, stub.set, args=(None,)).start()
    start = time.monotonic()
    resumed = launch("wait-resume", "--server", stub.url, "--job", "j", "--poll-s", "0.05")
    assert resumed.returncode == 0, resumed.stderr
    assert time.monotonic() - start >= 0.4
    assert json.loads(resumed.stdout)["paused"] is False
    stub.phase = "done"
    done = launch("wait-resume", "--server", stub.url, "--job", "j", "--poll-s", "0.05")
    assert done.returncode == 1 and "job 'j' is done: it will not be resumed" in done.stderr
    stub.phase = "running"
    bad = launch("wait-resume", "--server", stub.url, "--job", "j", "--poll-s", "0")
    assert bad.returncode == 2 and "argument --poll-s: expected a finite number > 0, got '0'" in bad.stderr
    unknown = launch("wait-resume", "--server", stub.url, "--job", "nope/x")
    assert unknown.returncode == 1 and "job: expected" in unknown.stderr
    # A server that is away is asked again until the timeout.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    away = launch("wait-resume", "--server", "http://127.0.0.1:%d" % port, "--job", "j", "--poll-s", "0.1",
                  "--timeout-s", "0.5")
    assert away.returncode == 1, away.stderr
    assert "(retrying)" in away.stderr and "perseus.launch wait-resume: error:" in away.stderr
