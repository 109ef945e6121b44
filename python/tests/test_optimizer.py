"""The offline optimizer from Python: profiles, problems, frontiers, errors."""
import pytest

import perseus

CSV = """stage,instruction,frequency,time,energy
0,forward,1410,0.010,3.0
0,forward,1200,0.011,2.6
0,forward,1000,0.013,2.5
0,backward,1410,0.020,6.0
0,backward,1200,0.022,5.2
0,backward,1000,0.026,5.0
1,forward,1410,0.014,4.2
1,forward,1200,0.0155,3.6
1,forward,1000,0.018,3.4
1,backward,1410,0.028,8.4
1,backward,1200,0.031,7.3
1,backward,1000,0.036,7.0
"""


def test_profile_round_trip():
    profile = perseus.parse_profile_csv(CSV, "profile.csv")
    assert profile.num_stages == 2
    assert [p.freq_mhz for p in profile.points(0, "forward")] == [1410, 1200, 1000]
    again = perseus.parse_profile_csv(profile.to_csv())
    assert again.to_csv() == profile.to_csv()


def test_frontier_and_plans():
    profile = perseus.parse_profile_csv(CSV)
    problem = perseus.build_problem(profile, schedule="1f1b", microbatches=4, blocking_power_w=60)
    assert problem.num_stages == 2
    assert problem.num_nodes == 16
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-3)
    plans = frontier.plans
    assert len(plans) >= 2
    assert all(a.time_s <= b.time_s for a, b in zip(plans, plans[1:]))
    assert all(a.energy_j >= b.energy_j for a, b in zip(plans, plans[1:]))
    assert plans[0].energy_j <= frontier.all_max.energy_j
    fastest = frontier.no_slowdown_plan()
    assert fastest is not None and fastest.time_s <= frontier.all_max.time_s * (1 + 1e-9)
    assert frontier.plan_for_time(0.0) is None
    assert frontier.plan_for_time(1e9).time_s == frontier.min_energy_plan().time_s
    time_s, energy_j = perseus.evaluate_plan(problem, fastest.choice)
    assert time_s == pytest.approx(fastest.time_s)
    assert energy_j == pytest.approx(fastest.energy_j)
    stages = perseus.stage_plans(problem, fastest)
    assert len(stages) == 2
    assert stages[0][0][0] == "forward"
    assert {clock for _, _, clock in stages[0]} <= {1410, 1200, 1000}


def test_frontier_stats_say_how_it_was_solved():
    profile = perseus.parse_profile_csv(CSV)
    problem = perseus.build_problem(profile, schedule="1f1b", microbatches=4, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-4, threads=1)
    stats = frontier.stats
    assert isinstance(stats, perseus.FrontierStats)
    assert stats.lower_bound_checked and stats.lower_bound_max_error < 1e-6
    assert stats.sweep_complete
    assert stats.candidate_plans >= len(frontier.plans) >= 2
    assert stats.sweep_steps > 0 and stats.plan_threads == 1 and stats.plans_during_sweep == 0
    assert 0 <= stats.plans_s <= stats.solve_s
    assert repr(stats).startswith("FrontierStats(sweep_steps=%d, candidate_plans=%d" % (
        stats.sweep_steps, stats.candidate_plans))
    unchecked = perseus.solve_frontier(problem, unit_time_s=1e-4, lower_bound_samples=0)
    assert not unchecked.stats.lower_bound_checked


def test_errors_become_exceptions_with_the_message():
    with pytest.raises(ValueError, match=r"profile.csv:2: column 'time'"):
        perseus.parse_profile_csv("stage,instruction,frequency,time,energy\n0,forward,1410,abc,1\n", "profile.csv")
    with pytest.raises(ValueError, match="schedule"):
        perseus.build_problem(perseus.parse_profile_csv(CSV), schedule="zigzag", microbatches=4)
    with pytest.raises(OSError):
        perseus.load_profile("/nonexistent/profile.csv")
    with pytest.raises(ValueError, match="instruction"):
        perseus.parse_profile_csv(CSV).points(0, "sideways")
    with pytest.raises(IndexError, match=r"stage: expected 0 to 1 \(the profile has 2 stages\), got 2"):
        perseus.parse_profile_csv(CSV).points(2, "forward")
    # More stages asked for than the file has: said so, not "stage 2: no 'forward' rows".
    with pytest.raises(ValueError, match=r"p.csv: its highest stage is 1, but the pipeline has 4 stages \(0..3\)"):
        perseus.parse_profile_csv(CSV, "p.csv", 4)


def test_reprs_keep_small_values():
    # std::to_string's six decimals printed a 12 us computation as time_s=0.000012.
    small = CSV.replace("0.010,3.0", "0.0000123456,0.003").replace("0.011,2.6", "0.0000135,0.0026").replace(
        "0.013,2.5", "0.000016,0.0025")
    point = perseus.parse_profile_csv(small).points(0, "forward")[0]
    assert repr(point) == "FreqPoint(freq_mhz=1410, time_s=1.23456e-05, energy_j=0.003)"


SPLIT_CSV = """stage,instruction,frequency,time,energy
0,forward,1410,0.010,3.0
0,forward,1000,0.013,2.5
0,backward_input,1410,0.010,3.0
0,backward_input,1000,0.013,2.5
0,backward_weight,1410,0.011,3.1
0,backward_weight,1000,0.014,2.6
1,forward,1410,0.014,4.2
1,forward,1000,0.018,3.4
1,backward_input,1410,0.014,4.2
1,backward_input,1000,0.018,3.4
1,backward_weight,1410,0.015,4.3
1,backward_weight,1000,0.019,3.5
"""


def test_zero_bubble_schedule_from_split_rows():
    profile = perseus.parse_profile_csv(SPLIT_CSV)
    # The whole backward is derived from its halves.
    assert [round(p.time_s, 6) for p in profile.points(0, "backward")] == [0.021, 0.027]
    assert [p.freq_mhz for p in profile.points(1, "backward_weight")] == [1410, 1000]
    problem = perseus.build_problem(profile, schedule="zb-h1", microbatches=4, blocking_power_w=60)
    assert problem.num_nodes == 2 * 4 * 3
    frontier = perseus.solve_frontier(problem, unit_time_s=1e-3)
    stages = perseus.stage_plans(problem, frontier.no_slowdown_plan())
    assert {ins for ins, _, _ in stages[0]} == {"forward", "backward_input", "backward_weight"}
    one_f_one_b = perseus.build_problem(profile, schedule="1f1b", microbatches=4, blocking_power_w=60)
    assert frontier.all_max.time_s < perseus.solve_frontier(one_f_one_b).all_max.time_s
    with pytest.raises(ValueError, match="backward_input"):
        perseus.build_problem(perseus.parse_profile_csv(CSV), schedule="zb-h1", microbatches=4)
    # ZB-V: two chunks per GPU in a V (a 2-stage profile is split into 2 x 2 chunks), every backward split.
    zb_v = perseus.build_problem(profile, schedule="zb-v", chunks=2, microbatches=4, blocking_power_w=60)
    assert zb_v.num_nodes == 2 * 2 * 4 * 3
    v_stages = perseus.stage_plans(zb_v, perseus.solve_frontier(zb_v).no_slowdown_plan())
    assert {entry[0] for entry in v_stages[0]} == {"forward", "backward_input", "backward_weight"}
    assert {entry[-1] for entry in v_stages[1]} == {0, 1}


def test_clock_change_limit():
    profile = perseus.parse_profile_csv(CSV)
    problem = perseus.build_problem(profile, schedule="1f1b", microbatches=6, blocking_power_w=60)
    free = perseus.solve_frontier(problem)
    limited = perseus.solve_frontier(problem, max_clock_changes_per_gpu=1)
    assert max(max(perseus.clock_changes_per_gpu(problem, p.choice)) for p in free.plans) > 1
    for plan in limited.plans:
        assert max(perseus.clock_changes_per_gpu(problem, plan.choice)) <= 1
        assert perseus.evaluate_plan(problem, plan.choice) == pytest.approx((plan.time_s, plan.energy_j))
    with pytest.raises(ValueError, match="max clock changes per GPU"):
        perseus.solve_frontier(problem, max_clock_changes_per_gpu=-2)
    one_thread = perseus.solve_frontier(problem, max_clock_changes_per_gpu=1, threads=1)
    assert [(p.choice, p.energy_j) for p in one_thread.plans] == [(p.choice, p.energy_j) for p in limited.plans]
    with pytest.raises(ValueError, match="threads: expected 0"):
        perseus.solve_frontier(problem, threads=-1)
    with pytest.raises(ValueError, match="wrong length"):
        perseus.clock_changes_per_gpu(problem, [0])
    with pytest.raises(ValueError, match=r"computation 0 \(forward of microbatch 0, stage 0\): option 99 out of range"):
        perseus.clock_changes_per_gpu(problem, [99] * problem.num_nodes)


def test_stage_plans_name_the_chunk_with_model_chunks():
    profile = perseus.parse_profile_csv(CSV)
    problem = perseus.build_problem(profile, schedule="interleaved-1f1b", microbatches=4, chunks=2, blocking_power_w=60)
    frontier = perseus.solve_frontier(problem)
    stages = perseus.stage_plans(problem, frontier.no_slowdown_plan())
    assert all(len(op) == 4 for stage in stages for op in stage)
    assert {op[3] for op in stages[0]} == {0, 1}
    assert sum(len(stage) for stage in stages) == problem.num_nodes
    one_chunk = perseus.build_problem(profile, schedule="1f1b", microbatches=4, blocking_power_w=60)
    assert all(len(op) == 3 for stage in perseus.stage_plans(one_chunk, perseus.solve_frontier(one_chunk).plans[0])
               for op in stage)
