"""perseus.torch: the perseus hooks for a PyTorch training loop.

    import torch, perseus, perseus.torch

    client = perseus.RankClient(server_url, job, rank, dp_rank, pp_rank, tp_rank, gpu_index,
                                gpu="nvml", framework_durations=torch.cuda.is_available())
    hooks = perseus.torch.PipelineHooks(client)
    for batch in data:
        with hooks.step():                      # on_step_begin ... on_step_end
            ...                                 # the pipeline schedule; around every computation:
            with hooks.forward():
                y = stage(x)
            with hooks.backward():
                torch.autograd.backward(y, dy)
        all_reduce_gradients(); optimizer.step()   # after the step: not part of its compute time

or wrap a framework's functions: `forward_step = hooks.wrap(forward_step, "forward")`
(docs/integration.md names them for Megatron-LM, DeepSpeed and torchtitan).

Timing. With CUDA, each computation is bracketed by two torch.cuda.Event(enable_timing=True)
recorded on the current stream; the events are read later, only once `end.query()` says the GPU
passed them (never blocking), and their durations go to client.record_durations(iteration, ...).
Create the client with framework_durations=True then, or it times kernel launches instead. Once
per profiling-window boundary (client.sync_wanted_at_next_step()), step() calls
torch.cuda.synchronize() before on_step_begin so the window's span covers the GPU's work: the
CPU waits until the GPU drained its queue, losing the CPU's lead over the GPU once (at most an
iteration's launch-ahead, typically milliseconds) a few dozen times while the server profiles,
never while plans run. Without CUDA the work is synchronous and the hooks' own timestamps are
the durations.

Simulated GPUs (gpu="simulated:A100[:realism]") only: `SimulatedWork` makes a CPU job's
computations last as long as the GPU model says at the clock in effect. The helper starts the
modelled work on the simulated GPU at the computation's start (client.simulate), runs the real
torch code, then sleeps out the rest of the modelled time. Pick time_at_max_s above the real CPU
time of the computation, or the real time wins and the clock stops mattering.

Pausing (a job whose carbon config may pause it; docs/carbon.md, "Pausing in the server"). At the
start of a step: with carbon.pause "hold", step() waits while the job is paused, holding the GPU's
lowest clock (client.wait_while_paused()); with "release" it raises perseus.JobPaused, and the loop
should checkpoint and exit with perseus.EXIT_PAUSED:

    try:
        with hooks.step(): ...
    except perseus.JobPaused:
        save_checkpoint(); sys.exit(perseus.EXIT_PAUSED)

Thread safety: one PipelineHooks per rank, used from the training thread only (like the hooks).
"""
import collections
import dataclasses
import functools
import time
import warnings

import torch

from . import JobPaused, PerseusWarning, _perseus

__all__ = ["PipelineHooks", "SimulatedWork"]

# Iterations whose CUDA events are still unread beyond this are dropped (the
# client ignores durations that never come; it does not wait forever).
_MAX_PENDING_ITERATIONS = 64


@dataclasses.dataclass
class SimulatedWork:
    """One computation on a simulated GPU (gpu="simulated:..." only).

    time_at_max_s: its duration at the GPU's highest clock; busy_power_w: power drawn at that
    clock; compute_fraction: the part of the time that scales with the SM clock (None: the
    model's transformer default for forward or backward)."""

    time_at_max_s: float
    busy_power_w: float = 300.0
    compute_fraction: float = None

    def __post_init__(self):
        # The checks simulate() makes, at construction: a NaN would otherwise
        # surface at the first computation of the training loop.
        _perseus._validate_simulated_work(self.time_at_max_s, self.busy_power_w,
                                          -1.0 if self.compute_fraction is None else self.compute_fraction)


class _Computation:
    """The context manager around one forward or backward (reused: no allocation per call)."""

    __slots__ = ("hooks", "name", "work")

    def __init__(self, hooks, name):
        self.hooks, self.name, self.work = hooks, name, None

    def __enter__(self):
        self.hooks._begin(self.name, self.work)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.hooks._end(self.name)
        return False


class _Step:
    __slots__ = ("hooks",)

    def __init__(self, hooks):
        self.hooks = hooks

    def __enter__(self):
        self.hooks._step_begin()
        return self.hooks

    def __exit__(self, exc_type, exc, tb):
        self.hooks._step_end(ok=exc_type is None)
        return False


class PipelineHooks:
    """Calls a perseus.RankClient's hooks around a PyTorch pipeline's computations and measures
    them (CUDA events with a GPU, the hooks' timestamps without).

    client: a perseus.RankClient. device: the torch device the stage computes on (None: CUDA
    when torch.cuda.is_available()). simulated_work: {"forward": SimulatedWork, "backward":
    SimulatedWork} for simulated GPUs (see the module doc), so that the training loop stays the
    same code as on a real GPU; forward(simulate=...) overrides it per computation.
    simulated_slowdown (attribute, default 1): multiplies the simulated work, to emulate a
    straggling GPU."""

    def __init__(self, client, device=None, simulated_work=None):
        self.client = client
        self.use_cuda = torch.cuda.is_available() if device is None else torch.device(device).type == "cuda"
        self.simulated_work = dict(simulated_work or {})
        self.simulated_slowdown = 1.0
        unknown = set(self.simulated_work) - {"forward", "backward"}
        if unknown:
            raise ValueError("simulated_work: expected keys 'forward' and 'backward', got %r" % sorted(unknown))
        if self.simulated_work and not getattr(client, "simulated", False):
            raise ValueError("simulated_work needs a simulated GPU (gpu='simulated:<name>[:realism]')")
        # CPU timestamps are only needed when the client waits for framework durations.
        self._cpu_timing = not self.use_cuda and client.framework_durations
        if self.use_cuda and not client.framework_durations:
            warnings.warn("perseus.torch: the client was created without framework_durations=True: on a GPU "
                          "its timestamps measure kernel launches, not the work", PerseusWarning, stacklevel=2)
        self._iteration = int(client.stats()["iterations"])
        self._forward = _Computation(self, "forward")
        self._backward = _Computation(self, "backward")
        self._step = _Step(self)
        self._timings = []  # this iteration: (start, end) events (CUDA) or durations in seconds (CPU)
        self._pending = collections.deque()  # (iteration, [(start, end) events]) not read yet
        self._start_s = 0.0
        self._modelled_s = 0.0
        self._in_step = False  # between begin_step and end_step
        self._counted = False  # the running computation called the client's hooks

    # -- the API -----------------------------------------------------------------------------
    def step(self):
        """Context manager around one training iteration's pipeline schedule (not the gradient
        all-reduce and optimizer step after it)."""
        return self._step

    def begin_step(self):
        """step()'s entry, for frameworks whose iteration starts and ends in different places.
        A step still open (no end_step) ends here first."""
        if self._in_step:
            self._step_end(ok=True)
        self._step_begin()

    def end_step(self):
        """step()'s exit (see begin_step); does nothing outside a step."""
        self._step_end(ok=True)

    def forward(self, simulate=None):
        """Context manager around one forward computation (one microbatch, one chunk)."""
        return self._computation(self._forward, simulate)

    def backward(self, simulate=None):
        """Context manager around one backward computation."""
        return self._computation(self._backward, simulate)

    def wrap(self, fn, kind):
        """fn wrapped in step() ("step"), forward() ("forward") or backward() ("backward")."""
        if kind == "step":
            context = self.step
        elif kind in ("forward", "backward"):
            context = getattr(self, kind)
        else:
            raise ValueError("wrap: kind: expected 'step', 'forward' or 'backward', got %r" % (kind,))

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with context():
                return fn(*args, **kwargs)

        return wrapped

    def flush(self):
        """Reads every outstanding CUDA event (synchronising the device if some are unfinished)."""
        if self._pending:
            torch.cuda.synchronize()
            self._poll()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.flush()
        return False

    # -- internals ---------------------------------------------------------------------------
    def _computation(self, computation, simulate):
        work = simulate if simulate is not None else self.simulated_work.get(computation.name)
        if work is not None and not isinstance(work, SimulatedWork):
            raise TypeError("simulate: expected a perseus.torch.SimulatedWork, got %r" % (work,))
        computation.work = work
        return computation

    def _step_begin(self):
        pause = self.client.pause_requested()
        if pause == "release":
            raise JobPaused("perseus: the carbon policy paused the job with its GPUs released: checkpoint, exit "
                            "with perseus.EXIT_PAUSED and start again when `python3 -m perseus.launch "
                            "wait-resume` returns")
        if pause == "hold":
            if self.use_cuda:
                torch.cuda.synchronize()  # the last step's queued work finishes at its own clocks first
            self.client.wait_while_paused()  # holding the GPU's lowest clock until the server resumes the job
        self._timings = []
        self._in_step = True
        if self.use_cuda:
            self._poll()
            if self.client.sync_wanted_at_next_step():
                torch.cuda.synchronize()  # once per profiling-window boundary (module doc)
        self.client.on_step_begin()

    def _step_end(self, ok):
        if not self._in_step:
            return
        self._in_step = False
        if not ok:  # an exception left the schedule half done: report nothing for it
            self._timings = []
            return
        self.client.on_step_end()
        if self.use_cuda:
            self._pending.append((self._iteration, self._timings))
            if len(self._pending) > _MAX_PENDING_ITERATIONS:
                self._pending.popleft()
            self._poll()
        elif self._cpu_timing:
            self.client.record_durations(self._iteration, self._timings)
        self._iteration += 1

    def _begin(self, name, work):
        self._counted = self._in_step  # computations outside a step (evaluation) pass through
        if not self._counted:
            return
        self.client.on_instruction_begin(name)
        if self.use_cuda:
            start = torch.cuda.Event(enable_timing=True)
            start.record()
            self._timings.append((start, None))
        self._start_s = time.perf_counter() if (work is not None or self._cpu_timing) else 0.0
        if work is not None:
            fraction = -1.0 if work.compute_fraction is None else work.compute_fraction
            self._modelled_s = self.client.simulate(name, work.time_at_max_s * self.simulated_slowdown,
                                                    work.busy_power_w, fraction)
        else:
            self._modelled_s = 0.0

    def _end(self, name):
        if not self._counted:
            return
        self._counted = False
        if self._modelled_s > 0:
            remaining_s = self._start_s + self._modelled_s - time.perf_counter()
            if remaining_s > 0:
                time.sleep(remaining_s)
        if self.use_cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._timings[-1] = (self._timings[-1][0], end)
        elif self._cpu_timing:
            self._timings.append(time.perf_counter() - self._start_s)
        self.client.on_instruction_end(name)

    def _poll(self):
        """Hands the durations of every finished iteration to the client; never blocks."""
        while self._pending:
            iteration, events = self._pending[0]
            if events and not events[-1][1].query():
                return
            self._pending.popleft()
            # elapsed_time is in milliseconds.
            self.client.record_durations(iteration, [start.elapsed_time(end) / 1e3 for start, end in events])
