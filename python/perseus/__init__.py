"""perseus: energy-optimal pipeline-parallel training.

Rank client (wrap your training loop; perseus.torch.PipelineHooks does it for PyTorch):
    client = perseus.RankClient(server_url, job, rank, dp_rank, pp_rank, tp_rank, gpu_index, gpu="nvml")
    client.on_step_begin(); client.on_instruction_begin("forward"); ...; client.on_step_end()
(perseus.Optimizer is the deprecated old name of RankClient.)

Offline optimizer:
    profile = perseus.load_profile("profile.csv")
    problem = perseus.build_problem(profile, schedule="1f1b", microbatches=8, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem)
    plan = frontier.no_slowdown_plan()
    perseus.stage_plans(problem, plan)  # per stage: [(instruction, microbatch, sm_clock_mhz[, chunk]), ...]

Errors raise ValueError (bad input), LookupError (not found), OSError (I/O),
ConnectionError (server unreachable or conflicting request) or RuntimeError.
Problems the rank client finds while training (unknown job or rank, a schedule
other than the declared one, clock errors, an implausible profile) never stop
training: they are raised as PerseusWarning (the `warnings` module) and logged
to the "perseus" logger at WARNING level.
See docs/integration.md and docs/http_api.md.
"""
import atexit as _atexit
import logging as _logging
import os as _os
import sys as _sys
import warnings as _warnings
import weakref as _weakref

from . import _perseus
from ._perseus import (  # noqa: F401
    __version__,
    Computation,
    Frontier,
    FrontierPlan,
    FrontierStats,
    FreqPoint,
    Problem,
    Profile,
    build_problem,
    carbon_status,
    clear_power_cap,
    clear_server_power_cap,
    clear_straggler,
    clock_changes_per_gpu,
    declare_straggler,
    evaluate_plan,
    finish_job,
    job_status,
    load_profile,
    parse_profile_csv,
    register_job,
    server_power_cap,
    set_power_cap,
    set_server_power_cap,
    solve_frontier,
    stage_plans,
)

logger = _logging.getLogger("perseus")
# A library logs; the application decides where it goes (the warnings module
# still shows each warning once on stderr by default).
logger.addHandler(_logging.NullHandler())


# The exit status a job stopped by a release pause should end with (EX_TEMPFAIL:
# "try again later"), so that its launch script tells it from a failure.
EXIT_PAUSED = 75


class JobPaused(Exception):
    """The carbon policy paused the job with GPUs released (the job's carbon.pause is
    "release"): checkpoint, exit with perseus.EXIT_PAUSED, and start the job again once
    `python3 -m perseus.launch wait-resume` returns (docs/carbon.md, "Pausing in the
    server"). perseus.torch.PipelineHooks raises it at the start of a step."""


class PerseusWarning(UserWarning):
    """A problem the rank client or the server found: perseus keeps training, but
    its measurements or plans may be wrong (unknown job or rank, a loop that runs
    another order than the declared schedule, clock-set errors, an achieved clock
    other than the one locked, an implausible profile). Make them errors with
    `warnings.simplefilter("error", perseus.PerseusWarning)`."""


def _warning_sink(text):
    """Called by the native client with each new warning (from on_step_end, stats, close)."""
    logger.warning("%s", text)
    _warnings.warn(text, PerseusWarning, stacklevel=_caller_stacklevel())


def _caller_stacklevel():
    """The stacklevel of the first frame outside this package (the training loop's line that
    ran the hook, also through perseus.torch), as seen from _warning_sink."""
    frame, level = _sys._getframe(2), 2  # the sink's caller (the native hook is invisible)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2


_PACKAGE_DIR = _os.path.dirname(_os.path.abspath(__file__)) + _os.sep
_perseus._warning_sink = _warning_sink
_live = _weakref.WeakSet()


class RankClient(_perseus.RankClient):
    __doc__ = _perseus.RankClient.__doc__

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _live.add(self)


class Optimizer(RankClient):
    """Deprecated: the old name of perseus.RankClient (it read like torch.optim.Optimizer)."""

    def __init__(self, *args, **kwargs):
        _warnings.warn("perseus.Optimizer is deprecated: use perseus.RankClient (same arguments)",
                       DeprecationWarning, stacklevel=2)
        super().__init__(*args, **kwargs)


@_atexit.register
def _close_all():
    """Unlocks the clocks of every open RankClient at interpreter exit."""
    for client in list(_live):
        try:
            client.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
