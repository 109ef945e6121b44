#!/usr/bin/env python3
"""How much a minimum-cut "wave" move would lower the optimizer's plans.

An evaluation tool, not part of perseus's run time (docs/design.md, "Pair moves":
"What HiGHS's cheaper plan does"). The exact solver's cheaper plans differ from
ours by waves: many computations one clock step slower, each paid for by
neighbours one step faster, no single pair of them saving anything. For a plan
and its iteration time, label each computation's start and finish event 0 or 1
(shifted later by a quantum delta or not): a computation whose finish alone
shifts is slowed to its cheapest option at most slow_factor x delta slower, one
whose start alone shifts is sped up to its cheapest option at least delta faster;
a dependency with less than delta of slack may not shift its start less than its
predecessor's finish, and a finish within delta of the deadline may not shift.
The energy change is a sum of terms over each computation's two labels,
submodular once a speed-up's cost is clamped to at least the matching
slow-down's saving, so one s-t minimum cut per delta gives the best wave. Each
wave is re-checked exactly (longest path within the deadline, energy lower) and
the best one over all deltas kept, until none helps.

Prints, per chosen frontier plan and as a mean and worst, the gap to the plan's
certified lower bound before and after, in % of all-max energy.

Usage (from the source tree, after the build):
  PYTHONPATH=build/ci/python python3 bench/wave_move.py \\
      ../shared/data/sosp24/stage_profile/gpt3-175b+a100_sxm_bf16.csv --stages 8 \\
      --microbatches 12 --blocking-power 83.64 --every 10
"""
import argparse
import sys

import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import maximum_flow

import perseus
from bench_problem import add_problem_args, option_cost_j, plans_near, problem_from_args

INF = 1 << 30  # an arc the cut may not cross (SciPy's maximum flow takes 32-bit integers)


class Plan:
    """One plan's options as (time, cost) pairs (bench_problem.option_cost_j)."""

    def __init__(self, problem, choice):
        self.nodes = problem.computations
        blocking_w = problem.blocking_power_w
        self.options = [[(o.time_s, option_cost_j(o, blocking_w)) for o in n.options] for n in self.nodes]
        self.choice = list(choice)

    def duration(self, i):
        return self.options[i][self.choice[i]][0]

    def cost(self, choice=None):
        choice = self.choice if choice is None else choice
        return sum(self.options[i][k][1] for i, k in enumerate(choice))

    def earliest_starts(self, choice=None):
        """Earliest starts and the longest path (node ids are a topological order)."""
        choice = self.choice if choice is None else choice
        start = [0.0] * len(self.nodes)
        for u, node in enumerate(self.nodes):
            finish = start[u] + self.options[u][choice[u]][0]
            for v in node.succs:
                start[v] = max(start[v], finish)
        return start, max(start[u] + self.options[u][choice[u]][0] for u in range(len(self.nodes)))


def cheapest(options, lo_s, hi_s):
    """Index of the cheapest option with lo_s < time <= hi_s, or None."""
    best = None
    for k, (t, c) in enumerate(options):
        if lo_s < t <= hi_s and (best is None or c < options[best][1]):
            best = k
    return best


def wave(plan, deadline_s, delta_s, slow_factor):
    """The best wave for one quantum: a new choice (not yet checked), or None."""
    n = len(plan.nodes)
    start, _ = plan.earliest_starts()
    source, sink = 2 * n, 2 * n + 1  # node 2i: start of i, 2i+1: its finish; sink side = shifted
    arcs = {}

    def arc(a, b, capacity):
        if capacity > 0:
            arcs[(a, b)] = min(INF, arcs.get((a, b), 0) + capacity)

    slower, faster, finite = [None] * n, [None] * n, []
    for i, node in enumerate(plan.nodes):
        d, c = plan.duration(i), plan.options[i][plan.choice[i]][1]
        slower[i] = cheapest(plan.options[i], d, d + slow_factor * delta_s)
        saving = max(0.0, c - plan.options[i][slower[i]][1]) if slower[i] is not None else 0.0
        faster[i] = cheapest(plan.options[i], -1.0, d - delta_s)
        if faster[i] is None:
            cost = saving
            arc(2 * i + 1, 2 * i, INF)  # the start may not shift without the finish
        else:
            cost = max(plan.options[i][faster[i]][1] - c, saving)
        finite.append((source, 2 * i, cost))  # start shifted: pays the speed-up ...
        finite.append((2 * i + 1, sink, cost))  # ... unless the finish shifts too
        finite.append((2 * i, 2 * i + 1, cost - saving))  # finish alone shifted: saves
        finish = start[i] + d
        for v in node.succs:
            if start[v] - finish < delta_s:
                arc(2 * v, 2 * i + 1, INF)
        if finish + delta_s > deadline_s * (1 + 1e-12):
            arc(source, 2 * i + 1, INF)
    scale = 1e9 / max(sum(cap for _, _, cap in finite), 1e-12)  # no flow can pass 2^31
    for a, b, cap in finite:
        arc(a, b, int(round(cap * scale)))
    rows, cols = zip(*arcs)
    graph = scipy.sparse.csr_matrix((np.array(list(arcs.values()), dtype=np.int32), (rows, cols)),
                                    shape=(2 * n + 2, 2 * n + 2))
    flow = maximum_flow(graph, source, sink).flow
    residual = (graph - flow).tocsr()
    source_side = np.zeros(2 * n + 2, dtype=bool)
    source_side[source] = True
    stack = [source]
    while stack:
        u = stack.pop()
        for k in range(residual.indptr[u], residual.indptr[u + 1]):
            v = residual.indices[k]
            if residual.data[k] > 0 and not source_side[v]:
                source_side[v] = True
                stack.append(v)
    choice = list(plan.choice)
    moved = 0
    for i in range(n):
        start_shifted, finish_shifted = not source_side[2 * i], not source_side[2 * i + 1]
        if finish_shifted and not start_shifted and slower[i] is not None:
            choice[i], moved = slower[i], moved + 1
        elif start_shifted and not finish_shifted:
            choice[i], moved = faster[i], moved + 1
    return choice if moved else None


def improve(problem, choice, deadline_s, deltas_s, slow_factor=1.1, max_rounds=50):
    """Applies the best checked wave until none lowers the cost: (new choice, cost change in J)."""
    plan = Plan(problem, choice)
    before_j = plan.cost()
    for _ in range(max_rounds):
        best = None
        for delta_s in deltas_s:
            new = wave(plan, deadline_s, delta_s, slow_factor)
            if new is None or plan.earliest_starts(new)[1] > deadline_s * (1 + 1e-9):
                continue
            cost_j = plan.cost(new)
            if cost_j < plan.cost() - 1e-9 and (best is None or cost_j < best[0]):
                best = (cost_j, new)
        if best is None:
            break
        plan.choice = best[1]
    return plan.choice, plan.cost() - before_j


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_problem_args(parser, "", "instead of --every, comma-separated iteration times relative to all-max; "
                     "the nearest plan of each")
    parser.add_argument("--every", type=int, default=10, help="every Nth frontier plan, fastest first")
    parser.add_argument("--slow-factor", type=float, default=1.1,
                        help="a slowed computation may take up to this times the quantum")
    args = parser.parse_args(argv)
    problem = problem_from_args(args)
    frontier = perseus.solve_frontier(problem)
    all_max_j = frontier.all_max.energy_j
    deltas_s = list(np.geomspace(1e-4, 0.03, 40))  # quanta from 0.1 to 30 ms
    print(f"{problem.num_nodes} computations; gap to the lower bound, % of all-max energy ({all_max_j:.1f} J)")
    print(f"{'rel_time':>9} {'before':>9} {'after':>9} {'saved_j':>9}")
    plans = plans_near(frontier, args.relative_times) if args.relative_times else frontier.plans[::max(1, args.every)]
    before, after = [], []
    for plan in plans:
        _, change_j = improve(problem, plan.choice, plan.time_s, deltas_s, args.slow_factor)
        before.append(100 * (plan.energy_j - plan.lower_bound_j) / all_max_j)
        after.append(100 * (plan.energy_j + change_j - plan.lower_bound_j) / all_max_j)
        print(f"{plan.time_s / frontier.all_max.time_s:9.4f} {before[-1]:8.4f}% {after[-1]:8.4f}% {-change_j:9.3f}")
        sys.stdout.flush()
    print(f"{len(before)} plans: mean {np.mean(before):.4f}% -> {np.mean(after):.4f}%, "
          f"worst {max(before):.4f}% -> {max(after):.4f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
