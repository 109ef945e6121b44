"""perseus.RankClient against a real server, with simulated GPUs."""
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
    with pytest.raises(ValueError, match="rank client: server: unsupported URL scheme 'ftp'"):
        perseus.RankClient("ftp://x", "j", rank=0, gpu="simulated:A100")
    with pytest.raises(ConnectionError, match=r"GET http://127.0.0.1:9/jobs/j: cannot connect \(is the server running"):
        perseus.job_status("http://127.0.0.1:9", "j")


def test_register_job_errors(server):
    with pytest.raises(ValueError, match="field 'microbatches': missing"):
        perseus.register_job(server, {"id": "bad", "dp": 1, "pp": 2})
    with pytest.raises(LookupError, match="job 'nope' is not registered"):
        perseus.job_status(server, "nope")
