#!/usr/bin/env python3
"""A training loop with perseus hooks, runnable without a GPU or torch.

Every rank of a small pipeline-parallel job runs as a thread with a realistic
simulated A100 (gpu="simulated:A100:default": the built-in GPU model with a
coarse energy counter, clock latency, jitter and drift): the computations "run"
by sleeping for their modelled time at the clock perseus chose. Start a server,
then this script:

    perseus serve --db /tmp/perseus-demo.db &
    PYTHONPATH=build/ci/python python3 examples/train_loop.py --server http://127.0.0.1:7787

It registers the job, lets the server profile every stage online, waits for
the optimised plan, and prints what each rank runs. With real GPUs, replace
gpu="simulated:A100:default" by gpu="nvml" (root) or gpu="daemon:/run/perseusd.sock",
and `client.simulate(...)` by your model's forward/backward; for PyTorch,
perseus.torch.PipelineHooks makes these calls (examples/torch_pipeline.py,
docs/integration.md). Problems (a wrong job id, a loop that runs another order
than the declared schedule, ...) are raised as perseus.PerseusWarning.
"""
import argparse
import os
import threading
import time

import perseus


def one_f_one_b(stage, stages, microbatches):
    """The 1F1B order of one stage (as Megatron-LM and DeepSpeed run it)."""
    warmup = min(stages - stage - 1, microbatches)
    order = ["forward"] * warmup
    for _ in range(microbatches - warmup):
        order += ["forward", "backward"]
    return order + ["backward"] * warmup


def run_rank(args, rank, dp_rank, pp_rank, stop, report):
    client = perseus.RankClient(args.server, args.job, rank=rank, dp_rank=dp_rank, pp_rank=pp_rank, tp_rank=0,
                                gpu_index=rank, gpu=args.gpu, token=args.token, poll_interval_ms=50)
    order = one_f_one_b(pp_rank, args.pp, args.microbatches)
    # The last stage carries the LM head: a little more work.
    forward_s = args.forward_ms / 1e3 * (1.3 if pp_rank == args.pp - 1 else 1.0)
    try:
        while not stop.is_set():
            client.on_step_begin()
            for instruction in order:
                client.on_instruction_begin(instruction)
                # Your model's forward or backward goes here; the simulated GPU
                # tells how long it takes at the clock in effect.
                seconds = client.simulate(instruction, forward_s * (2 if instruction == "backward" else 1))
                time.sleep(seconds)
                client.on_instruction_end(instruction)
            client.on_step_end()  # before gradient synchronisation
            report[rank] = client.stats()
    finally:
        client.close()  # unlocks the GPU clock (also done at exit and on SIGINT/SIGTERM)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default="http://127.0.0.1:7787")
    p.add_argument("--token", default=os.environ.get("PERSEUS_TOKEN", ""),
                   help="server token (default: $PERSEUS_TOKEN; prefer the variable, a flag shows in the process list)")
    p.add_argument("--job", default="demo-%d" % int(time.time()))
    p.add_argument("--dp", type=int, default=2)
    p.add_argument("--pp", type=int, default=2)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--forward-ms", type=float, default=4.0)
    p.add_argument("--gpu", default="simulated:A100:default")
    p.add_argument("--timeout", type=float, default=300.0)
    args = p.parse_args()

    print(perseus.register_job(args.server, {
        "id": args.job, "dp": args.dp, "pp": args.pp, "tp": 1, "microbatches": args.microbatches,
        # Short profiling: every 8th clock, windows of 1 warm-up and 3 measured iterations.
        "profiling": {"warmup_iterations": 1, "window_iterations": 3, "clock_stride": 8},
        # Threads sleeping in real time jitter by a few percent; the default 1.05 would see stragglers.
        "straggler": {"threshold": 1.2}}, token=args.token))
    stop, report = threading.Event(), {}
    threads = [threading.Thread(target=run_rank, args=(args, d * args.pp + s, d, s, stop, report))
               for d in range(args.dp) for s in range(args.pp)]
    for t in threads:
        t.start()
    deadline = time.time() + args.timeout
    phase = None
    try:
        while time.time() < deadline:
            status = perseus.job_status(args.server, args.job)
            if status["phase"] != phase:
                phase = status["phase"]
                print("phase:", phase)
            kinds = {r.get("plan_kind") for r in report.values()}
            if phase == "running" and kinds == {"frontier"}:
                break
            time.sleep(0.5)
        time.sleep(1.0)
    finally:
        stop.set()
        for t in threads:
            t.join()
    status = perseus.job_status(args.server, args.job)
    if "frontier" in status:
        f = status["frontier"]
        print("frontier: %d plans; all-max %.3f s %.1f J; running %.3f s %.1f J per pipeline iteration" % (
            f["plans"], f["all_max"]["time_s"], f["all_max"]["energy_j"], f["fastest"]["time_s"],
            f["fastest"]["energy_j"]))
    for rank in sorted(report):
        r = report[rank]
        print("rank %d: plan %s #%s (version %s), %d iterations, last error: %s" % (
            rank, r["plan_kind"], r["plan_index"], r["plan_version"], r["iterations"], r["last_error"] or "-"))
    return 0 if status["phase"] == "running" else 1


if __name__ == "__main__":
    raise SystemExit(main())
