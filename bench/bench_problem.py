"""What the Python evaluation tools (bench/milp_gap.py, bench/wave_move.py) share:
the problem's command-line flags, building it, an option's cost, and picking frontier plans."""
import perseus


def add_problem_args(parser, relative_times_default, relative_times_help):
    """The profile and pipeline flags, and --relative-times."""
    parser.add_argument("profile", help="Zeus-format profile CSV")
    parser.add_argument("--stages", type=int, default=0)
    parser.add_argument("--microbatches", type=int, required=True)
    parser.add_argument("--schedule", default="1f1b")
    parser.add_argument("--chunks", type=int, default=1)
    parser.add_argument("--blocking-power", type=float, default=0.0, help="W per GPU while blocked")
    parser.add_argument("--relative-times", default=relative_times_default, help=relative_times_help)


def problem_from_args(args):
    profile = perseus.load_profile(args.profile, args.stages)
    return perseus.build_problem(profile, schedule=args.schedule, stages=args.stages,
                                 microbatches=args.microbatches, chunks=args.chunks,
                                 blocking_power_w=args.blocking_power)


def option_cost_j(option, blocking_w):
    """An option's cost in the solver's terms (perseus's energy model, docs/design.md):
    its energy less blocking power x its time, which a GPU would draw waiting instead;
    a plan's energy at iteration time T is the sum of these plus blocking power x stages x T."""
    return option.energy_j - blocking_w * option.time_s


def plan_near(frontier, relative_time):
    """The frontier plan whose time is closest to relative_time x the all-max time."""
    target = frontier.all_max.time_s * relative_time
    return min(frontier.plans, key=lambda p: abs(p.time_s - target))


def plans_near(frontier, relative_times):
    """plan_near for each of a comma-separated list of relative times."""
    return [plan_near(frontier, float(x)) for x in relative_times.split(",")]
