"""One priority level placed exactly on nodes, with the levels above held where a plan put them.

A bucket model counts room per bucket of nodes, so the JobGroups it chooses may not fit on
the nodes themselves once several roles and resources share them; greedy then drops one and
the stage loses value the bucket model showed was there. The level's JobGroups alone, on the
room the levels above leave, make a node-level model small enough to solve outright: at 512
nodes, a few thousand (role, node) pairs where the whole problem has tens of thousands.
"""

from __future__ import annotations

from .cpsat import solve_cpsat
from .greedy import complete
from .objective import Assignment, Term
from .problem import Problem, beside, candidate_count
from .stages import Tuning

# Above this many (role, node) candidates the level is not repacked: the model would not be
# searched in the seconds a stage has (the node-level model's presolve alone grows with it).
REPACK_PAIRS = 20_000


def repack_level(
    problem: Problem,
    terms: list[Term],
    plan: Assignment,
    wanted: frozenset[int],
    priority: int,
    *,
    time_limit: float,
    seed: int = 0,
    tuning: Tuning,
) -> tuple[Assignment | None, float]:
    """``plan`` with priority level ``priority`` placed again by the node-level model: the
    JobGroups ``wanted`` or ``plan`` has at that level, on the room the levels above leave
    where ``plan`` put them; the levels below are then completed greedily. Returns the plan
    (None when the level is too large to try or the solver found nothing) and the seconds
    spent, as the deterministic budget counts them."""
    above = frozenset(j for j in plan.placed if problem.job_groups[j].priority > priority)
    level = frozenset(
        j for j in wanted | plan.placed if problem.job_groups[j].priority == priority and problem.job_groups[j].feasible
    )
    mine = [t for t in terms if t.primary and t.job_groups and all(
        problem.job_groups[j].priority == priority for j in t.job_groups
    )]
    held = {(r, n): c for (r, n), c in sorted(plan.counts.items()) if problem.gangs[problem.roles[r].gang].job_group in above}
    if not mine:  # nothing at this level can be placed: no model to build
        return complete(problem, Assignment(held, above)), 0.0
    sub = beside(problem, held, level)
    if candidate_count(sub) > REPACK_PAIRS:
        return None, 0.0
    start = Assignment(
        {(r, n): c for (r, n), c in plan.counts.items() if problem.gangs[problem.roles[r].gang].job_group in level},
        plan.placed & level,
    )
    result = solve_cpsat(sub, mine, start, time_limit=time_limit, workers=1, seed=seed, tuning=tuning)
    if result.assignment is None:
        return None, result.deterministic_time
    counts = dict(held)
    counts.update(result.assignment.counts)
    return complete(problem, Assignment(counts, above | (result.assignment.placed & level))), result.deterministic_time
