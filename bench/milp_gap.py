#!/usr/bin/env python3
"""How far the optimizer's plans and bounds are from the exact discrete optimum.

An evaluation tool, not part of perseus's run time: for chosen frontier plans it
solves the whole discrete problem at the plan's iteration time as a mixed-integer
program with HiGHS (scipy.optimize.milp, Debian's python3-scipy) and prints, as
shares of all-max energy, the plan above its certified lower bound, the plan above
the best plan HiGHS found, and HiGHS's own bound against ours. docs/design.md,
"Pair moves", quotes its figures.

The program: a binary per (computation, clock) and a start time per computation;
one clock each; every dependency u -> v: start(v) >= start(u) + time(u); every
computation finishes by T; minimise sum(energy - blocking power x time) over the
chosen clocks, plus blocking power x stages x T (perseus's energy model).

Usage (from the source tree, after the build):
  PYTHONPATH=build/ci/python python3 bench/milp_gap.py \\
      ../shared/data/sosp24/stage_profile/bloom+a100_sxm_bf16.csv --stages 8 \\
      --microbatches 12 --blocking-power 83.64 --relative-times 1.0,1.0009 --time-limit 100
"""
import argparse
import collections
import sys

import numpy as np
import scipy.sparse
from scipy.optimize import Bounds, LinearConstraint, milp

import perseus
from bench_problem import add_problem_args, option_cost_j, plans_near, problem_from_args


# best_j: the best plan's energy at the deadline (None if HiGHS found none), bound_j:
# HiGHS's lower bound, optimal: whether it proved best_j optimal, choice: the
# best plan's option index per computation (None with best_j).
Solution = collections.namedtuple("Solution", "best_j bound_j optimal choice")


def solve_at(problem, deadline_s, time_limit_s):
    """The discrete optimum with iteration time <= deadline_s, energy at deadline_s (a Solution)."""
    nodes = problem.computations
    blocking_w = problem.blocking_power_w
    first = []  # first binary of each computation
    costs = []
    for node in nodes:
        first.append(len(costs))
        costs.extend(option_cost_j(o, blocking_w) for o in node.options)
    binaries = len(costs)
    variables = binaries + len(nodes)  # then one start time per computation
    rows, cols, vals, lower, upper = [], [], [], [], []

    def row(entries, lo, hi):
        for col, val in entries:
            rows.append(len(lower))
            cols.append(col)
            vals.append(val)
        lower.append(lo)
        upper.append(hi)

    def duration(i, sign):
        return [(first[i] + k, sign * o.time_s) for k, o in enumerate(nodes[i].options)]

    for i, node in enumerate(nodes):
        row([(first[i] + k, 1.0) for k in range(len(node.options))], 1, 1)
        for j in node.succs:
            row([(binaries + j, 1.0), (binaries + i, -1.0)] + duration(i, -1.0), 0, np.inf)
        if not node.succs:
            row([(binaries + i, 1.0)] + duration(i, 1.0), -np.inf, deadline_s)
    matrix = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(len(lower), variables))
    objective = np.concatenate([np.array(costs), np.zeros(len(nodes))])
    integrality = np.concatenate([np.ones(binaries), np.zeros(len(nodes))])
    bounds = Bounds(np.zeros(variables), np.concatenate([np.ones(binaries), np.full(len(nodes), np.inf)]))
    result = milp(objective, constraints=LinearConstraint(matrix, lower, upper), integrality=integrality,
                  bounds=bounds, options={"time_limit": time_limit_s, "mip_rel_gap": 1e-7})
    fixed_j = blocking_w * problem.num_stages * deadline_s
    if result.x is None:
        return Solution(None, result.mip_dual_bound + fixed_j, False, None)
    choice = [int(np.argmax(result.x[first[i]:first[i] + len(node.options)])) for i, node in enumerate(nodes)]
    return Solution(result.fun + fixed_j, result.mip_dual_bound + fixed_j, result.status == 0, choice)


def print_differences(problem, ours, theirs):
    """The computations whose clock HiGHS's plan changes, and what each change costs."""
    blocking_w = problem.blocking_power_w
    changed = 0
    for i, node in enumerate(problem.computations):
        if ours[i] == theirs[i]:
            continue
        changed += 1
        a, b = node.options[ours[i]], node.options[theirs[i]]
        cost_j = option_cost_j(b, blocking_w) - option_cost_j(a, blocking_w)
        print(f"    GPU {node.stage} {node.instruction} microbatch {node.microbatch} chunk {node.chunk}: "
              f"{a.freq_mhz} -> {b.freq_mhz} MHz, {1000 * (b.time_s - a.time_s):+.3f} ms, {cost_j:+.3f} J")
    print(f"    {changed} of {problem.num_nodes} computations differ")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_problem_args(parser, "1.0", "comma-separated iteration times relative to all-max; the nearest plan of each")
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds of HiGHS per plan")
    parser.add_argument("--differences", action="store_true",
                        help="list the computations whose clock HiGHS's best plan changes")
    args = parser.parse_args(argv)
    problem = problem_from_args(args)
    frontier = perseus.solve_frontier(problem)
    all_max_j = frontier.all_max.energy_j
    print(f"{problem.num_nodes} computations; % of all-max energy ({all_max_j:.1f} J)")
    print(f"{'rel_time':>9} {'plan-bound':>11} {'plan-exact':>11} {'highs_bound-ours':>17} {'optimal':>8}")
    for plan in plans_near(frontier, args.relative_times):
        exact = solve_at(problem, plan.time_s, args.time_limit)
        plan_exact = float("nan") if exact.best_j is None else 100 * (plan.energy_j - exact.best_j) / all_max_j
        print(f"{plan.time_s / frontier.all_max.time_s:9.4f} {100 * (plan.energy_j - plan.lower_bound_j) / all_max_j:10.3f}%"
              f" {plan_exact:10.3f}% {100 * (exact.bound_j - plan.lower_bound_j) / all_max_j:16.3f}%"
              f" {str(exact.optimal):>8}")
        if args.differences and exact.choice is not None:
            print_differences(problem, plan.choice, exact.choice)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
