"""Planning end to end in the core: Snapshot in, Plan out.

Greedy runs first; CP-SAT starts from its plan and is kept only when it scores at least
as well, so a plan is never worse than greedy. Pod names are handed out last, in a fixed
order, so equal counts always give byte-identical bindings.

OR-Tools (``cpsat``, ``aggregate``) is imported where CP-SAT is run, not here: a greedy plan
and the commands that only check one start 0.24 s sooner without it (``stages``).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from .errors import SolverError, UsageError
from .explain import reasons, too_few
from .greedy import SECONDS_PER_CANDIDATE_PASS, Placer, complete, greedy, lexicographic_greedy
from .model import Snapshot
from .objective import Assignment, DomainWeights, Term, UsedDomains, objective_terms, score, term_value, used_domains
from .plan import GroupOutcome, ObjectiveValue, Placement, Plan, SolverReport, claims_of
from .problem import Problem, alone, build_problem, candidate_count, restrict, unheld_affinity, unheld_anti_affinity, unheld_spread
from .quantity import counted
from .semantics import Grouping, counted_rule
from .stages import Reporter, StageResult, Tuning, stage_objective, stage_terms, stage_upper, term_bounds
from .verify import Violation, claim_violations, verify

if TYPE_CHECKING:
    from .aggregate import AggregateResult

# Above this many (role, node) candidates, objective 1 is solved on pod counts per
# (role, bucket of nodes) instead of per (role, node).
BUCKET_FROM = 8_000
# Building the problem, greedy, putting a plan on nodes and explaining it, per candidate pair,
# measured on the 2-core development machine at 8,192 and 20,480 nodes (benchmarks/README.md).
SECONDS_PER_CANDIDATE = 1.5e-6
# The part of SECONDS_PER_CANDIDATE that comes after the solver (23 s at 20,480 nodes).
SECONDS_AFTER_SOLVE_PER_CANDIDATE = 0.9e-6
# Building the node-level model that polishes the later terms, per (role, node) pair it keeps
# (8 s for 102,000 pairs at 20,480 nodes); it runs only with at least as long again to search.
SECONDS_PER_POLISHED_PAIR = 8e-5
# --policy ordered: building and starting one JobGroup's own model, charged per step beside
# the solver's own time (3 s of 5 s at 1,000 groups on 512 nodes, where only the solver's
# time was charged and a 1 s limit took 4 s), and per variable of it: on 1,024 nodes, 166
# steps of 3,500 variables on average took 21 s for a 10 s limit (24 us a variable uncharged).
# 3 ms a step then; 5 ms since session 52, fitted with the per-node charge below.
SECONDS_PER_ORDERED_STEP = 5e-3
SECONDS_PER_ORDERED_VARIABLE = 30e-6
# ... and per node of the cluster, which each step's problem is made on (session 52, fitted to
# 400 steps on 2,048 nodes and 1,500 on 8,192, whose wall time was 2.3x and 1.8x their charge
# with 3 ms a step and nothing per node).
SECONDS_PER_ORDERED_NODE = 5e-6
# The share of the time limit the later terms get at scale, after objective 1.
POLISH_SHARE = 0.25
# Up to this many, the solver's start is the best of several greedy orders (a pass each).
LEXICOGRAPHIC_GREEDY_LIMIT = 1_000_000
# Up to this many, a plan the bucket model searched only near greedy's is still bounded by the
# cluster-wide knapsack: at 8,192 nodes (4 M pairs) it put the second level within 39% where
# every JobGroup placed says 62%, in 0.3 s; at 20,480 nodes (25 M) it stopped at its limit with
# no more than that, for 0.8 s and 264 MiB of peak memory.
KNAPSACK_PROOF_LIMIT = 10_000_000

NOTHING_BETTER = "CP-SAT found nothing better than greedy in the time limit; the greedy plan is used (a longer --time-limit may find one)"

SOLVERS = ("cp-sat", "greedy")
MODELS = ("auto", "nodes", "buckets")
POLICIES = ("optimal", "ordered")
MAX_WORKERS = 256  # threads on one machine; CP-SAT refuses the model far above it
MAX_TIME_LIMIT = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class Options:
    solver: str = "cp-sat"
    policy: str = "optimal"
    time_limit: float = 10.0
    workers: int = 1
    seed: int = 0
    levels: tuple[str, ...] | None = None  # --levels; None: from a Topology object or inferred
    gpu_resource: str = "nvidia.com/gpu"
    model: str = "auto"  # objective 1 per (role, node), per (role, bucket), or by size
    tuning: Tuning = Tuning()  # CP-SAT's log and parameters, for experiments

    def check(self) -> None:
        if isinstance(self.levels, str):  # iterated, it would be one level per character
            raise UsageError(f"levels must be a tuple of label keys, got the string {self.levels!r}")
        if self.solver not in SOLVERS:
            raise UsageError(f"--solver must be one of {', '.join(SOLVERS)}, got {self.solver!r}")
        if self.policy not in POLICIES:
            raise UsageError(f"--policy must be one of {', '.join(POLICIES)}, got {self.policy!r}")
        if self.model not in MODELS:
            raise UsageError(f"--model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if not self.time_limit > 0:
            raise UsageError(f"--time-limit must be a positive number of seconds, got {self.time_limit}")
        if not self.gpu_resource.strip():  # generate refuses it too
            raise UsageError("--gpu-resource must not be empty")
        if not 1 <= self.workers <= MAX_WORKERS:
            raise UsageError(f"--workers must be from 1 to {MAX_WORKERS}, got {self.workers}")
        if not -(2**31) <= self.seed < 2**31:  # CP-SAT's random_seed is a 32-bit integer
            raise UsageError(f"--seed must be a 32-bit integer (from -2147483648 to 2147483647), got {self.seed}")
        if not self.time_limit <= MAX_TIME_LIMIT:
            raise UsageError(f"--time-limit must be at most {MAX_TIME_LIMIT} seconds (a week), got {self.time_limit}")


def plan(snapshot: Snapshot, options: Options = Options(), reporter: Reporter | None = None) -> Plan:
    options.check()
    start = time.perf_counter()
    problem = build_problem(snapshot, levels=options.levels, gpu_resource=options.gpu_resource)
    terms = objective_terms(problem)
    baseline = greedy(problem, as_scheduler=options.solver == "greedy")
    chosen, solver_name, status, gap = baseline, "greedy", "GREEDY", None
    scheduler = baseline  # the scheduler-like greedy's plan, where one is made beside the baseline
    gap_stage: StageResult | None = None  # the stage the gap is at, with its bound
    deterministic_time, note = 0.0, ""
    proven: set[str] = set()  # terms whose value CP-SAT proved optimal
    requested = options.time_limit
    pairs = candidate_count(problem)
    if options.workers > 1:
        # A wall-clock limit covers the whole plan: what building the problem and greedy took
        # comes off the solver's share, and so does an estimate of what follows the solver
        # (putting its plan on nodes, explaining what is left out).
        after_solve = pairs * SECONDS_AFTER_SOLVE_PER_CANDIDATE
        options = replace(options, time_limit=options.time_limit - (time.perf_counter() - start) - after_solve)
    else:
        # The deterministic limit is charged what the work around the solver costs, estimated
        # from the input alone (so the output stays reproducible): it grows with the
        # (pod group, candidate node) pairs: 16 s at 8,192 nodes, 100 s at 20,480.
        options = replace(options, time_limit=options.time_limit - pairs * SECONDS_PER_CANDIDATE)
    ordered = options.policy == "ordered"
    if options.solver == "cp-sat" and options.time_limit <= 0:
        used_up = requested - options.time_limit
        shown = f"{math.ceil(used_up)}" if used_up >= 1 else f"{used_up:.2g}"
        solver_name, note = "cp-sat", (
            "building the problem and the greedy plan used up the time limit; the greedy plan is used "
            f"(the solver gets what a --time-limit leaves beyond {shown} s here)"
        )
        if ordered:  # the scheduler-like greedy in queue order: the default's greedy is not ordered
            chosen = scheduler = _ordered(problem, terms, replace(options, solver="greedy"), None)[0]
    elif ordered:
        chosen, solver_name, status, deterministic_time = _ordered(problem, terms, options, reporter)
        if options.solver == "cp-sat":
            # Each step placed by the model can take the room a later group needed where the
            # scheduler's own order (NodeGroups in sort-rule order) leaves it: never worse than that.
            scheduler = _ordered(problem, terms, replace(options, solver="greedy"), None)[0]
            if _queue_first(terms, problem, scheduler) > _queue_first(terms, problem, chosen):
                first = [jg.key for j, jg in enumerate(problem.job_groups) if (j in scheduler.placed) != (j in chosen.placed)]
                chosen, status = scheduler, "GREEDY"
                note = "the scheduler-like greedy, in the same queue order, " + (
                    f"places JobGroup {first[0]}, which the model step by step could not place at its turn"
                    if first
                    else "places the same JobGroups, with more of the objective"
                ) + "; its plan is used"
    elif options.solver == "cp-sat" and (
        options.model == "buckets" or (options.model == "auto" and pairs > BUCKET_FROM)
    ):
        solver_name = "cp-sat"
        chosen, status, gap, gap_stage, proven, deterministic_time, note = _at_scale(
            problem, terms, baseline, options, reporter
        )
    elif options.solver == "cp-sat":
        from .cpsat import solve_cpsat

        solver_name = "cp-sat"
        result = solve_cpsat(
            problem,
            terms,
            baseline,
            time_limit=options.time_limit,
            workers=options.workers,
            seed=options.seed,
            reporter=reporter,
            tuning=options.tuning,
        )
        deterministic_time = result.deterministic_time
        status = result.status
        gap, gap_stage = result.gap, result.gap_stage
        proven = {name for stage in result.stages if stage.status == "OPTIMAL" for name in stage.terms}
        found = result.assignment
        if found is not None and result.status != "OPTIMAL":
            found = complete(problem, found)  # later stages may not have run: fill in greedily
        if found is not None and score(terms, problem, found) >= score(terms, problem, baseline):
            chosen = found  # greedy's own plan when CP-SAT proved it optimal: the status says so
        else:
            note = NOTHING_BETTER
            status = "GREEDY"
    # --solver greedy places as the scheduler does (greedy's as_scheduler); CP-SAT starts from
    # the packing greedy, which serves its search better, and answers no worse than either:
    # a proven optimum needs no such check.
    if options.solver == "cp-sat" and options.policy == "optimal" and status != "OPTIMAL":
        scheduler = greedy(problem, as_scheduler=True)
    if not ordered and scheduler is not baseline and score(terms, problem, scheduler) > score(terms, problem, chosen):
        if status != "GREEDY":
            note = NOTHING_BETTER
        chosen, status, gap, gap_stage, proven = scheduler, "GREEDY", None, None, set()
    warnings = problem.warnings
    placements = name_pods(problem, chosen)
    violations = _violations(snapshot, problem, placements)
    if broken := _broken_rule(problem, violations):
        fallback = name_pods(problem, baseline) if chosen is not baseline else None
        if fallback is None or _broken_rule(problem, violations := _violations(snapshot, problem, fallback)):
            raise SolverError(f"the plan breaks a rule ({broken}); this is a bug in gangplan")
        warnings += (f"the {solver_name} plan breaks a rule ({broken}); this is a bug in gangplan: the greedy plan is used",)
        chosen, placements, status, gap, gap_stage, proven = baseline, fallback, "GREEDY", None, None, set()
    warnings += _known_gaps(problem, violations)
    used = used_domains(problem, chosen.counts)
    values = {t.name: term_value(t, problem, chosen, used) for t in terms}
    bounds = {t.name: values[t.name] for t in terms if t.name in proven}
    if gap and gap_stage is not None and gap_stage.bound is not None:
        gap, gap_stage, reached = _final_gap(terms, values, gap_stage.terms, gap_stage.bound)
        bounds |= {t.name: values[t.name] for t in reached}
        if gap_stage is not None and gap_stage.bound is not None:
            by_name = {t.name: t for t in terms}
            bounds |= term_bounds([by_name[name] for name in gap_stage.terms], gap_stage.bound, values)
            if all(bounds.get(t.name) == values[t.name] for t in terms if t.primary):
                gap = 0.0  # the stage went on past objective 1 (into extra pods), and only that part is short
    objective = tuple(_reported(t, values[t.name], bounds.get(t.name), used) for t in terms)
    before, after = resource_totals(problem, chosen)
    report = SolverReport(
        solver=solver_name,
        policy=options.policy,
        status=status,
        chosen="greedy" if chosen is baseline or chosen is scheduler else solver_name,
        objective=objective,
        gap=gap,
        workers=options.workers,
        seed=options.seed,
        time_limit=requested,
        deterministic_time=round(deterministic_time, 3),
        wall_time=round(time.perf_counter() - start, 3),
        note=note,
        exact_weights=all(t.exact for t in terms),
        parameters=options.tuning.parameters if options.solver == "cp-sat" else (),
    )
    groups = outcomes(problem, chosen, ordered)
    if broken := _broken_claim(snapshot, placements, groups):
        warnings += (f"the plan's record of a group disagrees with the verifier ({broken}); this is a bug in gangplan",)
    return Plan(
        placements,
        groups,
        report,
        before,
        after,
        levels=problem.tree.levels if problem.tree else (),
        warnings=warnings,
    )


def _final_gap(
    terms: list[Term], values: Mapping[str, int], searched: list[str], bound: int
) -> tuple[float, StageResult | None, list[Term]]:
    """The gap of the plan as chosen, which greedy completion after the search can take past
    what the search reached (on 32 nodes, 93.6% at its stage became 38.1%): at the first
    stage the search did not prove (``searched``, its terms), against its ``bound``; where
    the plan reaches that, at the next objective-1 stage, against the most it could be. Also
    the terms the plan was found to reach their bound at on the way."""
    by_name = {t.name: t for t in terms}
    last = max(terms.index(by_name[name]) for name in searched)
    reached: list[Term] = []
    for index, stage in enumerate([[by_name[name] for name in searched], *stage_terms([t for t in terms[last + 1 :] if t.primary])]):
        value, most = stage_objective(stage, lambda t: values[t.name]), stage_upper(stage) if index else bound
        if value < most:
            return (most - value) / max(1, abs(most), abs(value)), StageResult([t.name for t in stage], "FEASIBLE", value, most), reached
        reached += stage
    return 0.0, None, reached


def _reported(term: Term, value: int, bound: int | None, used: UsedDomains) -> ObjectiveValue:
    """A term as the plan scores it, with what running members alone hold (the same in every
    plan, so left out of the models and of their bounds) added to its value and bound alike."""
    held = term.uses.held_beyond(used) if isinstance(term.uses, DomainWeights) else 0
    return ObjectiveValue(term.name, value + held, term.sense, None if bound is None else bound + held)


def _violations(snapshot: Snapshot, problem: Problem, placements: tuple[Placement, ...]) -> tuple[Violation, ...]:
    """Every rule a plan breaks, as the independent verifier re-derives them from the input:
    0.04 s at 2,048 nodes and 0.4 s at 20,480, read once for both uses below."""
    levels = problem.tree.levels if problem.tree else ()
    return verify(snapshot, placements, levels).violations


def _broken_rule(problem: Problem, violations: Sequence[Violation]) -> str:
    """The first rule a plan breaks ('' when none): a plan that breaks one is a bug, never an
    answer. Greedy's plan replaces a solver's that does; with no such plan the run stops with
    an internal error. What the planner warned it does not model is passed over
    (``unwarned``)."""
    levels = problem.tree.levels if problem.tree else ()
    broken = unwarned(problem.grouping, levels, violations)
    return f"{broken[0].rule}: {broken[0].message}" if broken else ""


def _known_gaps(problem: Problem, violations: Sequence[Violation]) -> tuple[str, ...]:
    """Which rules warned about as not modelled the plan does break, and for whom: "the plan
    may break it" leaves an operator to run verify; where it does, the plan says so."""
    levels = problem.tree.levels if problem.tree else ()
    kept = set(unwarned(problem.grouping, levels, violations))
    broken: dict[str, set[str]] = defaultdict(set)
    for v in violations:
        if v not in kept:
            broken[v.rule].update(f"pod {pod}" for pod in (v.subject, v.partner) if pod)  # a pair: both of them
    return tuple(
        f"the plan breaks {rule}, warned about as not modelled, for {counted(sorted(who))} (gangplan verify says how)"
        for rule, who in sorted(broken.items())
    )


def unwarned(grouping: Grouping, levels: Sequence[str], violations: Sequence[Violation]) -> list[Violation]:
    """The violations a plan made from ``grouping`` may not have: the rules the pods warned
    about as not modelled ask are the plan's known gap, not a bug, and verify reports them to
    whoever checks the plan. Those are the pod affinity of pods joining pending pods alone, or
    kept together at a key that is no level (a gang kept together at a level is held, so its
    pods are checked like any); anti-affinity between two placed pods that only terms the
    planner does not keep apart break (a warned pod's other terms, and every term against
    running pods, are held); and topology spread constraints at a key other than the node's,
    or between pods that do not all carry and match them (a pod's others are held)."""
    affine = unheld_affinity(grouping, levels)
    apart = unheld_anti_affinity(grouping, levels)
    spread = unheld_spread(grouping)
    return [
        v for v in violations
        if not (v.rule == "pod-affinity" and v.subject in affine)
        and not (v.rule == "pod-anti-affinity" and v.partner and v.terms and apart.issuperset(v.terms))
        and not (v.rule == "topology-spread" and v.terms and spread.issuperset(v.terms))
    ]


def _broken_claim(snapshot: Snapshot, placements: tuple[Placement, ...], groups: tuple[GroupOutcome, ...]) -> str:
    """The first group whose outcome (placed, scheduled, pending) the verifier would call
    false ('' when none). Only a warning: the placements themselves keep every rule."""
    broken = claim_violations(snapshot, placements, claims_of(groups))
    return f"{broken[0].subject}: {broken[0].message}" if broken else ""


def _at_scale(
    problem: Problem, terms: list[Term], baseline: Assignment, options: Options, reporter: Reporter | None
) -> tuple[Assignment, str, float | None, StageResult | None, set[str], float, str]:
    """Objective 1 on the bucket model, expanded to nodes, then the later terms polished by
    the node-level model near that plan (its JobGroups fixed). Budget: 75% / 25%. The solver
    starts from the better of queue-order and demand-first greedy, level by level."""
    from .aggregate import Meter, realise, solve_buckets
    from .cpsat import solve_cpsat

    start = time.perf_counter()
    deterministic = options.workers <= 1
    start_from, charge = baseline, 0.0
    pairs = candidate_count(problem)
    if pairs <= LEXICOGRAPHIC_GREEDY_LIMIT:
        start_from, passes = lexicographic_greedy(problem, lambda a: score(terms, problem, a), baseline)
        if deterministic:
            charge = passes * pairs * SECONDS_PER_CANDIDATE_PASS
    spent = charge
    budget = options.time_limit - (spent if deterministic else time.perf_counter() - start)
    outcome = solve_buckets(
        problem, terms, start_from, time_limit=(1 - POLISH_SHARE) * budget, workers=options.workers,
        seed=options.seed, gpu_resource=options.gpu_resource, reporter=reporter, tuning=options.tuning,
    )
    spent += outcome.solve.deterministic_time
    found = start_from
    if outcome.solve.assignment is not None:
        meter = Meter()
        left = options.time_limit - (spent if deterministic else time.perf_counter() - start)
        found = realise(problem, terms, outcome.buckets, outcome.solve.assignment, seed=options.seed, meter=meter, stop=left)
        spent += meter.seconds if deterministic else 0.0
    # The last stage's solution may not pack where an earlier one did (multi-resource room).
    found = max((found, *outcome.on_nodes, start_from, baseline), key=lambda a: score(terms, problem, a))
    # The later terms get what objective 1 left, up to their own share: more than that overran
    # the limit at 2,048 nodes, where the work around the solver is more than it is charged.
    remaining = min(POLISH_SHARE * budget, options.time_limit - (spent if deterministic else time.perf_counter() - start))
    polished = False
    region = restrict(problem, found.counts) if remaining > 0 else problem
    build = candidate_count(region) * SECONDS_PER_POLISHED_PAIR
    if remaining > 2 * build:
        result = solve_cpsat(
            region, objective_terms(region), found, time_limit=remaining - build, workers=options.workers,
            seed=options.seed, reporter=reporter, fixed=found.placed, tuning=options.tuning,
        )
        spent += result.deterministic_time
        if result.assignment is not None and score(terms, problem, result.assignment) >= score(terms, problem, found):
            found, polished = result.assignment, True
    proven, gap, gap_stage = _bucket_proof(problem, terms, found, outcome, options.gpu_resource)
    parts = []
    if outcome.upper:
        level = problem.level_name(outcome.buckets.level - 1)  # type: ignore[operator]
        parts.append(f"objective 1 bounded per {level} domain (the largest gangs in detail)")
    if outcome.solve.variables:
        parts.append(
            f"objective 1 on {len(outcome.buckets.nodes)} node buckets ({outcome.solve.variables} variables"
            + ("" if outcome.whole else ", a neighbourhood of the greedy plan: no bound")
            + "), expanded to nodes"
        )
    if polished:
        parts.append("later terms searched near that plan")
    if found is baseline and gap != 0.0:
        parts.append(NOTHING_BETTER)
    note = "; ".join(parts)
    status = "FEASIBLE" if found is not baseline else "GREEDY"
    return found, status, gap, gap_stage, proven, spent - charge, note


def _bucket_proof(
    problem: Problem, terms: list[Term], found: Assignment, outcome: AggregateResult, gpu_resource: str
) -> tuple[set[str], float | None, StageResult | None]:
    """The objective-1 terms the bucket models prove for ``found``, and the gap at the first
    one they do not, with that stage's bound. A model's bound at a stage holds for every real plan that reaches, at
    every earlier stage, at least what the model's own solution did there (each stage was
    solved with the earlier ones held at those values); the tightest such bound counts, and
    the cluster-wide knapsack's (aggregate.cluster_bound, with the earlier stages held at the
    plan's values) where it is tighter. Without either, a stage is measured against the most
    it could be (every JobGroup of its level placed), not left without a gap; a plan that
    reaches that is proven there too. A bucket model that kept only a neighbourhood of buckets
    (8,192 nodes and up) bounds nothing, so there only the model one level up (which always
    has the whole problem), the knapsack (up to KNAPSACK_PROOF_LIMIT candidate pairs) and the
    most a stage could be count."""
    from .aggregate import cluster_bound

    runs = [outcome.solve.stages, outcome.upper] if outcome.whole else [outcome.upper]
    knapsack_too = outcome.whole or candidate_count(problem) <= KNAPSACK_PROOF_LIMIT
    stages = stage_terms([t for t in terms if t.primary])
    proven: set[str] = set()
    values: list[int] = []
    for index, stage_terms_ in enumerate(stages):
        value = stage_objective(stage_terms_, lambda t: term_value(t, problem, found))
        bound = stage_upper(stage_terms_)
        for run in runs:
            ran = run[index] if index < len(run) else None
            if ran is not None and ran.bound is not None and all(
                earlier.value is not None and earlier.value <= reached for earlier, reached in zip(run, values)
            ):
                bound = min(bound, ran.bound)
        if value < bound and knapsack_too and (knapsack := cluster_bound(problem, stages, values, gpu_resource)) is not None:
            bound = min(bound, knapsack)
        if value < bound:
            stage = StageResult([t.name for t in stage_terms_], "FEASIBLE", value, bound)
            return proven, (bound - value) / max(1, abs(bound), abs(value)), stage
        proven.update(t.name for t in stage_terms_)
        values.append(value)
    return proven, 0.0, None


def _queue_first(terms: list[Term], problem: Problem, assignment: Assignment) -> tuple[tuple[bool, ...], tuple[int, ...]]:
    """How ``--policy ordered`` ranks two of its plans: the one that places the first JobGroup
    in queue order where they differ, as the scheduler would reach it first; objective 1 then.
    Trading an earlier JobGroup for more quorum demand later is the default policy's choice."""
    return tuple(j in assignment.placed for j in range(len(problem.job_groups))), score(terms, problem, assignment)


def _ordered(
    problem: Problem, terms: list[Term], options: Options, reporter: Reporter | None
) -> tuple[Assignment, str, str, float]:
    """What the scheduler itself would do: JobGroups one at a time in queue order, each placed
    by the same model if it fits beside those before it, with no lookahead."""
    counts: dict[tuple[int, int], int] = {}  # grown step by step: a copy per step was quadratic
    placed: set[int] = set()
    spent, status = 0.0, "OPTIMAL"
    free, opened = problem.matrix("free").copy(), set[int]()  # the room the groups so far leave
    pending = [j for j, jg in enumerate(problem.job_groups) if jg.feasible]
    placer = Placer(problem, as_scheduler=options.solver == "greedy")
    for index, j in enumerate(pending):
        mark, added, fits = placer.place(j)
        step, taken = (added, fits) if fits else ({}, False)  # j's own pods; those before it are kept
        budget = max(0.0, options.time_limit - spent) / (len(pending) - index)
        if options.solver == "cp-sat" and budget <= 0.0:
            status = "FEASIBLE"
        elif options.solver == "cp-sat":
            from .cpsat import solve_cpsat

            # Its own model, on the room the groups before it left: as small as the JobGroup.
            sub, origin = alone(problem, j, free, opened, counts)
            own = {r: i for i, r in enumerate(origin)}
            start = Assignment(
                {(own[r], n): c for (r, n), c in step.items() if r in own}, frozenset({0}) if taken else frozenset()
            )
            sub_terms = objective_terms(sub)
            result = solve_cpsat(
                sub, sub_terms, start, time_limit=budget, workers=options.workers, seed=options.seed, reporter=reporter,
                tuning=options.tuning, symmetry=False, unreached=False,  # a step's gap is not reported
            )
            spent += (
                result.deterministic_time + SECONDS_PER_ORDERED_STEP + SECONDS_PER_ORDERED_VARIABLE * result.variables
                + SECONDS_PER_ORDERED_NODE * len(problem.nodes)
            )
            if result.assignment is None or score(sub_terms, sub, result.assignment) < score(sub_terms, sub, start):
                status = "FEASIBLE"
            else:
                step = {(origin[i], n): c for (i, n), c in result.assignment.counts.items()}
                taken = bool(result.assignment.placed)
                placer.instead(mark, step)
                if result.status != "OPTIMAL":
                    status = "FEASIBLE"
        for (r, n), c in step.items():
            if options.solver == "cp-sat" and (r, n) not in counts:
                free[n] -= np.array(problem.roles[r].request, dtype=np.int64) * c
                opened.add(n)
            counts[r, n] = c
        if taken:
            placed.add(j)
    return Assignment(counts, frozenset(placed)), ("greedy" if options.solver == "greedy" else "cp-sat"), (
        "GREEDY" if options.solver == "greedy" else status
    ), spent


def name_pods(problem: Problem, assignment: Assignment) -> tuple[Placement, ...]:
    per_role: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (r, node), n in assignment.counts.items():
        per_role[r].append((node, n))
    placements = []
    for r, items in per_role.items():
        if problem.roles[r].pods[0].to_come:
            continue  # room held for pods Kueue's group will have: nothing to bind
        pods = iter(problem.roles[r].pods)
        for node, n in sorted(items):
            for _ in range(n):
                pod = next(pods)
                group = problem.gangs[problem.roles[r].gang].key
                placements.append(
                    Placement(
                        pod.namespace, pod.name, problem.nodes[node].name, pod.uid, group, pod.manifest,
                        gated=bool(pod.scheduling_gates),
                    )
                )
    placements.sort(key=lambda p: (p.namespace, p.name))
    return tuple(placements)


def outcomes(problem: Problem, assignment: Assignment, ordered: bool = False) -> tuple[GroupOutcome, ...]:
    placed_pods: dict[int, int] = defaultdict(int)
    for (r, _), n in assignment.counts.items():
        if not problem.roles[r].pods[0].to_come:  # as name_pods names them
            placed_pods[problem.roles[r].gang] += n
    why = reasons(problem, assignment, ordered)
    occupied: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for g, level, d in used_domains(problem, assignment.counts):
        occupied[g][level].add(d)
    result = []
    for j, jg_spec in enumerate(problem.job_groups):
        jg = problem.grouping.job_groups[j]
        for g, gang in zip(jg_spec.gangs, jg.gangs):
            spec = problem.gangs[g]
            # A member whose members meet its minimums (finished, or running to quorum) stands
            # whatever its JobGroup's others do, as a lone group does: its pods beyond them wait
            # with the JobGroup. Running members that break its required term do not settle it
            # (problem.build_problem).
            broken = spec.topology is not None and bool(spec.topology.broken) and spec.running > 0
            settled = spec.met and not broken
            result.append(
                GroupOutcome(
                    key=spec.key,
                    job_group=jg_spec.key,
                    placed=j in assignment.placed or settled,
                    priority=jg_spec.priority,
                    min_member=gang.group.min_member - gang.to_come,  # as verify counts it: the pods there are
                    running=spec.running,
                    pending=len(gang.pending) - gang.to_come,
                    scheduled=placed_pods[g],
                    reason="" if j in assignment.placed or settled else _member_reason(
                        why.get(j, ""), spec.key, jg_spec.key, len(jg.gangs), too_few(problem, j, g)
                    ),
                    api=gang.group.api.value,
                    domains={
                        problem.level_name(level): tuple(sorted(problem.domain_name(level, d) for d in ds))
                        for level, ds in sorted(occupied[g].items())
                        if j in assignment.placed
                    },
                    preferred=tuple(problem.level_name(level) for level in spec.topology.preferred)
                    if spec.topology
                    else (),
                    succeeded=spec.succeeded,
                    blocked=len(gang.blocked),
                    unmade=gang.group.manifest and not (gang.running or gang.pending or gang.blocked),
                    finished=spec.done,
                )
            )
    return tuple(result)


def _member_reason(reason: str, member: str, job_group: str, members: int, short: str = "") -> str:
    """A JobGroup's reason as one member sees it: its own blocker, or its JobGroup's. A member
    with too few pods of its own (``short``, NotEnoughTasks) says so first, whichever member
    the JobGroup's reason names."""
    if members == 1:
        return reason
    own = f"member {member}: "
    if short.startswith(own) and not reason.startswith(own):
        return f"{short[len(own):]}; and JobGroup {job_group} cannot be placed: {reason}"
    return reason[len(own):] if reason.startswith(own) else f"JobGroup {job_group} cannot be placed: {reason}"


def resource_totals(problem: Problem, assignment: Assignment) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """(used, allocatable) per resource over all nodes, before and after the plan.

    Used is the running pods' requests as ``kubectl describe nodes`` adds them up, over 100%
    on an over-committed node, not allocatable less the free room (which stops at zero)."""
    before: dict[str, tuple[int, int]] = {}
    after: dict[str, tuple[int, int]] = {}
    added: defaultdict[int, int] = defaultdict(int)
    for (r, _), n in assignment.counts.items():
        for k, want in enumerate(problem.roles[r].request):
            added[k] += want * n
    for k, name in enumerate(problem.resources):
        if counted_rule(name):
            continue  # a host port, an anti-affinity term or a spread cap is no resource Kubernetes counts
        total = sum(a[k] for a in problem.allocatable)
        used = sum(u[k] for u in problem.used)
        before[name] = (used, total)
        after[name] = (used + added[k], total)
    return before, after


__all__ = ["Options", "plan", "Plan", "Term"]
