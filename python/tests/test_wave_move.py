"""The minimum-cut wave move (bench/wave_move.py), an evaluation tool for the plans.

Every wave it keeps must fit the plan's time and lower the energy, and its own
accounting must agree with perseus.evaluate_plan, which shares no code with it;
from the all-max plan, where non-critical computations can slow down for free,
it must find a cheaper plan. SciPy is installed by scripts/install_deps.sh
(python3-scipy); outside CI a missing SciPy skips."""
import os

import pytest

import perseus
import test_milp_gap  # its non-convex two-stage CSV (python/tests is on sys.path under pytest)

if not os.environ.get("CI"):
    pytest.importorskip("scipy.sparse.csgraph", reason="python3-scipy is not installed (scripts/install_deps.sh)")

DELTAS_S = [1e-4 * 1.5**k for k in range(16)]  # 0.1 to 44 ms


def _wave_move():
    return test_milp_gap.load_bench("wave_move")


def _problem():
    return perseus.build_problem(perseus.parse_profile_csv(test_milp_gap.CSV), microbatches=4, blocking_power_w=60)


def _cost_j(problem, choice):
    """sum(energy - blocking power x time) over the computations, from perseus's own evaluation."""
    time_s, energy_j = perseus.evaluate_plan(problem, choice)
    return energy_j - problem.blocking_power_w * problem.num_stages * time_s, time_s


def test_kept_waves_fit_the_plans_time_and_lower_the_energy_exactly_as_evaluated():
    wave_move = _wave_move()
    problem = _problem()
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-4)
    for plan in frontier.plans:
        choice, change_j = wave_move.improve(problem, plan.choice, plan.time_s, DELTAS_S)
        before_j, _ = _cost_j(problem, plan.choice)
        after_j, time_s = _cost_j(problem, choice)
        assert time_s <= plan.time_s * (1 + 1e-9), plan
        assert change_j <= 1e-12, plan
        assert after_j - before_j == pytest.approx(change_j, abs=1e-9), plan


def test_a_cut_with_slow_downs_within_the_quantum_always_fits():
    # The construction's guarantee: shifting every sink-side event by delta is a
    # schedule within the deadline when no slowed computation takes more than delta.
    wave_move = _wave_move()
    problem = _problem()
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-4)
    waves = 0
    for plan in [frontier.all_max] + list(frontier.plans):
        state = wave_move.Plan(problem, plan.choice)
        for delta_s in DELTAS_S:
            new = wave_move.wave(state, plan.time_s, delta_s, slow_factor=1.0)
            if new is not None:
                waves += 1
                assert state.earliest_starts(new)[1] <= plan.time_s * (1 + 1e-9), (plan, delta_s)
    assert waves > 0


def test_from_the_all_max_plan_a_wave_saves_energy():
    wave_move = _wave_move()
    problem = _problem()
    all_max = perseus.solve_frontier(problem).all_max
    choice, change_j = wave_move.improve(problem, all_max.choice, all_max.time_s, DELTAS_S)
    assert change_j < -0.1
    after_j, time_s = _cost_j(problem, choice)
    assert time_s <= all_max.time_s * (1 + 1e-9)
    assert after_j == pytest.approx(_cost_j(problem, all_max.choice)[0] + change_j, abs=1e-9)


def test_the_command_prints_each_plans_gap_before_and_after(tmp_path, capsys):
    profile = tmp_path / "p.csv"
    profile.write_text(test_milp_gap.CSV)
    assert _wave_move().main([str(profile), "--microbatches", "3", "--blocking-power", "60", "--every", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("12 computations; gap to the lower bound")
    summary = lines[-1].split()
    assert summary[1] == "plans:" and int(summary[0]) == len(lines) - 3
