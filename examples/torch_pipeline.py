#!/usr/bin/env python3
"""A real PyTorch pipeline-parallel training job with perseus, runnable on CPUs.

A small transformer (token embedding, one torch.nn.TransformerEncoderLayer per pipeline stage,
an LM head) is split into --pp stages, one process per stage, with --dp data-parallel pipelines
(world size dp * pp), over torch.distributed (gloo on loopback). Every iteration runs the 1F1B
schedule over --microbatches microbatches (activations and gradients sent between stages with
isend/recv), then all-reduces each stage's gradients over its data-parallel group and takes an
Adam step: real training of a tiny task (predict (token + 1) mod vocab).

Every forward and backward runs inside perseus.torch's hooks. Without a GPU the ranks use
simulated A100s (gpu="simulated:A100:default", the realistic model): each computation runs its
real torch code and then lasts as long as the GPU model says at the clock perseus chose
(perseus.torch.SimulatedWork), so the plans change the job's speed and energy for real.

    perseus serve --db /tmp/perseus-demo.db --port 7787 &
    PYTHONPATH=build/ci/python python3 examples/torch_pipeline.py --server http://127.0.0.1:7787 --iterations 400
    perseus status --server http://127.0.0.1:7787 --job <the job printed>

Without --rank the script registers the job and starts every rank as a local process; with
--rank it is one rank (the tests start the ranks themselves and steer them with --control:
a JSON file {"stop": bool, "straggle": bool} that rank 0 reads every iteration and broadcasts).
On a GPU machine, pass --gpu nvml (root) or --gpu daemon:/run/perseusd.sock: the same loop then
measures the computations with CUDA events.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

import perseus
import perseus.torch

VOCAB, D_MODEL, SEQ = 32, 32, 16


def one_f_one_b(stage, stages, microbatches):
    """The 1F1B order of one stage as (instruction, microbatch), as Megatron-LM and DeepSpeed run it."""
    warmup = min(stages - stage - 1, microbatches)
    order = [("forward", m) for m in range(warmup)]
    for i in range(microbatches - warmup):
        order += [("forward", warmup + i), ("backward", i)]
    return order + [("backward", m) for m in range(microbatches - warmup, microbatches)]


class Stage(torch.nn.Module):
    """One pipeline stage: [embedding] + a transformer layer + [LM head]."""

    def __init__(self, first, last):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, D_MODEL) if first else None
        self.layer = torch.nn.TransformerEncoderLayer(D_MODEL, nhead=2, dim_feedforward=64, dropout=0.0,
                                                      batch_first=True)
        self.head = torch.nn.Linear(D_MODEL, VOCAB) if last else None

    def forward(self, x):
        if self.embed is not None:
            x = self.embed(x)
        x = self.layer(x)
        return self.head(x) if self.head is not None else x


def microbatch(args, dp_rank, iteration, index):
    """Deterministic data: every stage of a pipeline draws the same tokens for a microbatch."""
    g = torch.Generator().manual_seed(((dp_rank * 1_000_003 + iteration) * 64 + index) & 0x7FFFFFFF)
    tokens = torch.randint(0, VOCAB, (args.microbatch_size, SEQ), generator=g)
    return tokens, (tokens + 1) % VOCAB


class Control:
    """Rank 0 reads the control file (if any) and broadcasts [stop, straggle] to every rank."""

    def __init__(self, path, rank):
        self.path, self.rank, self.mtime, self.value = path, rank, None, {"stop": False, "straggle": False}

    def poll(self):
        if self.rank == 0 and self.path:
            try:
                mtime = os.stat(self.path).st_mtime_ns
                if mtime != self.mtime:
                    with open(self.path) as f:
                        self.value = json.load(f)
                    self.mtime = mtime
            except (OSError, ValueError):
                pass
        flags = torch.tensor([int(bool(self.value.get("stop"))), int(bool(self.value.get("straggle")))])
        dist.broadcast(flags, src=0)
        return bool(flags[0]), bool(flags[1])


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


def all_reduce_gradients(model, group, dp):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, group=group)
    flat /= dp
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def run_schedule(args, hooks, model, stage, dp_rank, iteration, rank):
    """One iteration's 1F1B schedule; returns the stage's loss (last stage) or None."""
    first, last = stage == 0, stage == args.pp - 1
    inputs, outputs, sends, loss_sum = {}, {}, [], 0.0
    shape = (args.microbatch_size, SEQ, D_MODEL)
    for instruction, m in one_f_one_b(stage, args.pp, args.microbatches):
        tokens, targets = microbatch(args, dp_rank, iteration, m)
        if instruction == "forward":
            if first:
                x = tokens
            else:
                x = torch.empty(shape)
                dist.recv(x, src=rank - 1, tag=0)
                x.requires_grad_()
            with hooks.forward():
                y = model(x)
                if last:
                    y = F.cross_entropy(y.reshape(-1, VOCAB), targets.reshape(-1)) / args.microbatches
            if last:
                loss_sum += y.item()
            else:
                sends.append(dist.isend(y.detach(), dst=rank + 1, tag=0))
            inputs[m], outputs[m] = x, y
        else:
            grad = None
            if not last:
                grad = torch.empty(shape)
                dist.recv(grad, src=rank + 1, tag=1)
            x, y = inputs.pop(m), outputs.pop(m)
            with hooks.backward():
                torch.autograd.backward(y, grad)
            if not first:
                sends.append(dist.isend(x.grad, dst=rank - 1, tag=1))
    for s in sends:
        s.wait()
    return loss_sum if last else None


def run_rank(args):
    rank, world = args.rank, args.dp * args.pp
    dp_rank, stage = divmod(rank, args.pp)
    torch.set_num_threads(1)
    torch.manual_seed(1234 + stage)  # the same initial weights in every pipeline
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % args.master_port, rank=rank,
                            world_size=world)
    # Every rank creates every group, in the same order.
    dp_groups = [dist.new_group([d * args.pp + s for d in range(args.dp)]) for s in range(args.pp)]
    model = Stage(stage == 0, stage == args.pp - 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    client = perseus.RankClient(args.server, args.job, rank=rank, dp_rank=dp_rank, pp_rank=stage, tp_rank=0,
                                gpu_index=rank, gpu=args.gpu, token=args.token, poll_interval_ms=50,
                                framework_durations=torch.cuda.is_available())
    simulated = None
    if args.gpu.startswith("simulated:"):
        # The last stage also runs the LM head and the loss: a little more work.
        scale = 1.3 if stage == args.pp - 1 else 1.0
        simulated = {"forward": perseus.torch.SimulatedWork(args.forward_ms / 1e3 * scale),
                     "backward": perseus.torch.SimulatedWork(2 * args.forward_ms / 1e3 * scale)}
    hooks = perseus.torch.PipelineHooks(client, simulated_work=simulated)
    control = Control(args.control, rank)
    losses, last_write, iteration = [], 0.0, 0

    def report(done):
        write_json(os.path.join(args.status_dir, "rank%d.json" % rank), {
            "rank": rank, "dp_rank": dp_rank, "pp_rank": stage, "iteration": iteration, "done": done,
            "losses": losses, "stats": client.stats(),
            "param_sum": float(sum(p.detach().double().sum() for p in model.parameters()))})

    try:
        while args.iterations <= 0 or iteration < args.iterations:
            stop, straggle = control.poll()
            if stop:
                break
            # A straggling pipeline: its (simulated) GPUs are slower, as if throttled.
            hooks.simulated_slowdown = args.straggler_slowdown if straggle and dp_rank == args.straggler else 1.0
            with hooks.step():
                loss = run_schedule(args, hooks, model, stage, dp_rank, iteration, rank)
            all_reduce_gradients(model, dp_groups[stage], args.dp)  # after on_step_end
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if loss is not None:
                losses.append(loss)
            iteration += 1
            # Also just before a carbon pause makes the next step wait (carbon.pause "hold").
            if args.status_dir and (time.time() - last_write > 0.25 or client.pause_requested()):
                report(False)
                last_write = time.time()
        hooks.flush()
        stats = client.stats()
    finally:
        if args.status_dir:
            report(True)
        client.close()
        dist.destroy_process_group()
    if losses:
        print("rank %d: %d iterations, loss %.3f -> %.3f, plan %s #%d" % (
            rank, iteration, losses[0], losses[-1], stats["plan_kind"], stats["plan_index"]))
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    """Registers the job and runs every rank as a local process."""
    print("job:", args.job)
    print(perseus.register_job(args.server, {
        "id": args.job, "dp": args.dp, "pp": args.pp, "tp": 1, "schedule": "1f1b",
        "microbatches": args.microbatches}, token=args.token))
    base = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
    base += ["--job", args.job, "--master-port", str(free_port())]
    procs = [subprocess.Popen(base + ["--rank", str(r)]) for r in range(args.dp * args.pp)]
    return max(p.wait() for p in procs)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default="http://127.0.0.1:7787")
    p.add_argument("--token", default=os.environ.get("PERSEUS_TOKEN", ""),
                   help="server token (default: $PERSEUS_TOKEN; prefer the variable, a flag shows in the process list)")
    p.add_argument("--job", default="torch-%d" % int(time.time()))
    p.add_argument("--dp", type=int, default=2)
    p.add_argument("--pp", type=int, default=2)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--microbatch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--iterations", type=int, default=300, help="0: until the control file says stop")
    p.add_argument("--gpu", default="simulated:A100:default")
    p.add_argument("--forward-ms", type=float, default=8.0, help="simulated GPUs: a forward's time at the max clock")
    p.add_argument("--straggler", type=int, default=1, help="the pipeline (dp rank) that straggles when told to")
    p.add_argument("--straggler-slowdown", type=float, default=1.6)
    p.add_argument("--rank", type=int, default=None, help="run this one rank (default: launch all)")
    p.add_argument("--master-port", type=int, default=0)
    p.add_argument("--control", default="")
    p.add_argument("--status-dir", default="")
    return p.parse_args(argv)


def main():
    args = parse_args()
    if args.rank is None:
        return launch(args)
    return run_rank(args)


if __name__ == "__main__":
    raise SystemExit(main())
