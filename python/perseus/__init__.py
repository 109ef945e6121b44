"""perseus: energy-optimal pipeline-parallel training.

Rank client (wrap your training loop):
    opt = perseus.Optimizer(server_url, job, rank, dp_rank, pp_rank, tp_rank, gpu_index, gpu="nvml")
    opt.on_step_begin(); opt.on_instruction_begin("forward"); ...; opt.on_step_end()

Offline optimizer:
    profile = perseus.load_profile("profile.csv")
    problem = perseus.build_problem(profile, schedule="1f1b", microbatches=8, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem)
    plan = frontier.no_slowdown_plan()
    perseus.stage_plans(problem, plan)  # per stage: [(instruction, microbatch, sm_clock_mhz), ...]

Errors raise ValueError (bad input), LookupError (not found), OSError (I/O),
ConnectionError (server unreachable or conflicting request) or RuntimeError.
See docs/integration.md and docs/http_api.md.
"""
import atexit as _atexit
import weakref as _weakref

from ._perseus import (  # noqa: F401
    Frontier,
    FrontierPlan,
    FreqPoint,
    Optimizer,
    Problem,
    Profile,
    build_problem,
    evaluate_plan,
    job_status,
    load_profile,
    parse_profile_csv,
    register_job,
    solve_frontier,
    stage_plans,
)

_live = _weakref.WeakSet()
_native_init = Optimizer.__init__


def _init(self, *args, **kwargs):
    _native_init(self, *args, **kwargs)
    _live.add(self)


Optimizer.__init__ = _init


@_atexit.register
def _close_all():
    """Unlocks the clocks of every open Optimizer at interpreter exit."""
    for opt in list(_live):
        try:
            opt.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
