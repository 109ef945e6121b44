"""The optimizer against an exact solver (bench/milp_gap.py, HiGHS through SciPy).

On small problems HiGHS proves the discrete optimum at each frontier plan's time:
the certified lower bound must lie below it and the plan above it. This checks the
bound with a solver that shares nothing with perseus, and Problem.computations
(the DAG as Python sees it) along the way. SciPy is installed by
scripts/install_deps.sh (python3-scipy); outside CI a missing SciPy skips."""
import importlib.util
import os
import sys

import pytest

import perseus
import test_optimizer  # its CSV (python/tests is on sys.path under pytest)

if not os.environ.get("CI"):
    pytest.importorskip("scipy.optimize", reason="python3-scipy is not installed (scripts/install_deps.sh)")

SOURCE = os.environ.get("PERSEUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

# test_optimizer's two stages, with stage 0's 1200 MHz backward above the
# line between its neighbours' costs at 60 W blocking power (4.48 J against
# 4.35 J: non-convex, as measured curves are).
CSV = test_optimizer.CSV.replace("0,backward,1200,0.022,5.2", "0,backward,1200,0.022,5.8")
assert CSV != test_optimizer.CSV


def load_bench(name):
    """bench/NAME.py as a module (its own imports from bench/ resolve too)."""
    bench = os.path.join(SOURCE, "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    spec = importlib.util.spec_from_file_location(name, os.path.join(bench, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _milp_gap():
    return load_bench("milp_gap")


def test_problem_computations_describe_the_dag():
    problem = perseus.build_problem(perseus.parse_profile_csv(CSV), microbatches=3, blocking_power_w=60)
    nodes = problem.computations
    assert len(nodes) == problem.num_nodes == 12
    assert all(j > i for i, n in enumerate(nodes) for j in n.succs)  # a topological order
    assert {n.instruction for n in nodes} == {"forward", "backward"}
    assert sorted((n.stage, n.position) for n in nodes) == [(s, p) for s in range(2) for p in range(6)]
    first = nodes[0]
    assert (first.stage, first.instruction, first.microbatch, first.chunk) == (0, "forward", 0, 0)
    assert [o.freq_mhz for o in first.options] == [1410, 1200, 1000]
    assert first.options[1].time_s == pytest.approx(0.011)


def test_certified_bounds_and_plans_bracket_the_exact_optimum():
    milp_gap = _milp_gap()
    problem = perseus.build_problem(perseus.parse_profile_csv(CSV), microbatches=3, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-4)
    plans = frontier.plans[:: max(1, len(frontier.plans) // 12)]
    exact_at_some_plan = 0
    for plan in plans:
        best_j, bound_j, optimal, choice = milp_gap.solve_at(problem, plan.time_s, 30)
        assert optimal, plan
        # HiGHS's plan, replayed by perseus: within the time, and the energy it reported.
        time_s, energy_j = perseus.evaluate_plan(problem, choice)
        fixed_w = problem.blocking_power_w * problem.num_stages
        assert time_s <= plan.time_s * (1 + 1e-9)
        assert energy_j - fixed_w * time_s == pytest.approx(best_j - fixed_w * plan.time_s, abs=1e-6)
        assert plan.lower_bound_j <= best_j * (1 + 1e-7), (plan, best_j)
        assert best_j <= plan.energy_j * (1 + 1e-7), (plan, best_j)
        assert bound_j <= best_j * (1 + 1e-6)
        exact_at_some_plan += plan.energy_j <= best_j * (1 + 1e-7)
    assert exact_at_some_plan >= len(plans) // 2, f"{exact_at_some_plan} of {len(plans)} plans exact"


def test_the_command_lists_the_computations_highs_changes(tmp_path, capsys):
    profile = tmp_path / "p.csv"
    profile.write_text(CSV)
    args = [str(profile), "--microbatches", "3", "--blocking-power", "60", "--relative-times", "1.0,1.05",
            "--time-limit", "30", "--differences"]
    assert _milp_gap().main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    summaries = [line for line in lines if line.endswith("computations differ")]
    assert len(summaries) == 2, lines
    assert all(int(line.split()[0]) <= 12 and " of 12 " in line for line in summaries)
