"""Objective 1 at cluster scale: pod counts per (role, domain), then pods onto nodes.

At thousands of nodes a count per (role, node) is too many variables for CP-SAT to search
in seconds. Here nodes are pooled into buckets (a lowest-level topology domain such as a
tor; without topology, nodes that are identical for every role) and the model counts pods
per (role, bucket). A bucket's room is what its nodes could hold: per role what its eligible
nodes hold alone, per resource the free total, and per request size s of the GPU resource
(or the scarcest one) the slots of s its nodes have, each pod asking q holding floor(q / s)
of them; the same again on each smaller set of nodes some roles are confined to (node
selectors, taints), over those roles. For one resource with sizes that divide each other, on
nodes every role may use, this is exact; otherwise it is a relaxation, so:

- its bound is a valid bound on objective 1 for the whole problem (any real plan is a
  solution of it), which is how a gap is reported at scale;
- its solution is turned into pods on nodes bucket by bucket, largest pods first onto the
  tightest node that holds them; a bucket that does not pack that way is solved exactly at
  node level, and a JobGroup that still loses its quorum is dropped (the planner then
  tries it again greedily);
- on clusters small enough, each stage's solution is put on nodes at once; when a JobGroup
  does not survive that, the model learns a no-good per bucket that did not pack (a
  smallest set of its role counts that do not fit together: every real plan has fewer pods
  of one of them there) and the stage is solved again. No-goods only cut off what no real
  plan does, so the bound stays valid.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping, TypeVar

import numpy as np
from .sat import cp_model

from .cpsat import DETERMINISTIC_WORKERS, OPTIONAL_MARGIN, Pace, add_exclusive, add_kept_apart, add_quorum, hint_counts, read_counts, stage_budget, staged_solve
from .greedy import SECONDS_PER_CANDIDATE_PASS, complete, greedy, repair, repair_by_worth
from .objective import Assignment, Term, score
from .problem import GangSpec, Problem, apart_roles, candidate_count, pods_that_fit
from .repack import repack_level
from .stages import Reporter, SolveResult, StageResult, Tuning, stage_objective, stage_terms

T = TypeVar("T")

# Above this many (role, bucket) counts each role keeps a neighbourhood of buckets, and the
# bound proves nothing about the whole problem.
BUCKET_MODEL_LIMIT = 60_000
# Above this many counts, presolve is kept light (no probing, one round): at 8,192 nodes full
# presolve took 10 s before the search began; on small models its probing pays for itself.
LIGHT_PRESOLVE_FROM = 20_000
# Wall seconds per solve of a whole bucket model with its LP workers on two cores: per second
# of deterministic time, plus presolve and set-up per variable, which deterministic time hardly
# shows. Fitted on the stage solves at 512 nodes (1.4 per deterministic s) and the trace case
# (1.2 to 2.1); 4 per deterministic s alone had 512 nodes stop at 5 s of its 10 short of p10.
# With light presolve (2,048 nodes) the pace is kept at 2.5 although the solves fit 1.3: that
# plan spends 3.5 s outside the solver that no budget sees, and must stay within 10 s.
FULL_PACE = Pace(1.6, 1.3e-4)
LIGHT_PACE = Pace(2.5, 6e-5)
# Interleaved workers for a whole model with full presolve in the default mode: with three,
# 512 nodes proved every objective-1 stage in 10 s (p100's JobGroups in 0.1 deterministic s,
# against 0.55 with four, and a 6.5% gap left at p10). The trace case kept its plan either way;
# 2,048 nodes kept theirs too and keep four, whose wall time the 10 s target was measured on.
WHOLE_INTERLEAVED = 3
# Up to this many counts, the per-bucket cuts are repeated on the node sets some roles are
# confined to. At 1,213 trace nodes (11 k counts) they proved the top level optimal where the
# gap had been 7%; at 2,048 nodes (31 k) they added 4 k constraints, a second of presolve, and
# a looser bound in the time there is.
CONFINED_CUTS_UP_TO = 20_000
# The most request sizes (and shapes) a bucket's room is cut by: each cut has a term per role
# at least that large, so one per size made 5,000 pods of distinct cpu requests (a role each)
# 25 M terms, 55 s and 6.9 GB before the search began. Sizes are kept whole up to ROOM_SHAPES,
# and while (sizes x roles) stays within ROOM_TERMS: in the generated clusters and the traces
# a bucket has at most 59 shapes, and 65 k such terms (L). Beyond, they are thinned, never below
# ROOM_LEAST.
ROOM_SHAPES = 64
ROOM_TERMS = 100_000
ROOM_LEAST = 8
# A whole bucket model with light presolve (2,048 nodes) is too large for CP-SAT to decide which
# of a few large JobGroups go in: its bound stayed at the root LP, 5% above the optimum, for
# 30 s. So objective 1 is first solved on the domains one level up (a miniPod per bucket, not
# a tor), where the largest gangs keep a count per domain, largest first up to UPPER_DETAIL
# counts, and the others one count for the whole cluster; the per-selector cuts are on. Its
# first stage that the start does not already maximise gets UPPER_SHARE of objective 1's time
# (after it the tor model never had time to search on the five 2,048-node seeds; with 80%,
# seed 3's second level stopped at 8.06e11 against a bound of 1.022e12, with 90% it found
# 1.014e12 and the plan's gap went 28.2% -> 11.5%; all of it gave the same plan, and 90%
# leaves some room for the work around the solver no budget sees: 8.4 to 11.8 s of wall in
# four runs with all of it, 7.7 to 9.7 s in three with 90%, on a noisy host). At
# 2,048 nodes, with 2,800 counts of detail it proved the top level's optimum (8.52e11) in 0.7
# deterministic s; with 1,800, 8.57e11 in 2.4 s; with 1,100, 8.69e11 (a miniPod model with
# every gang in detail needed 6.7 s). Where greedy places every top-level JobGroup (seeds 3
# and 4), the second level's bound came within 0.5% of its solution in 1.5 s (seed 4).
UPPER_DETAIL = 2_800
UPPER_SHARE = 0.9
# Its answer is put on nodes by up to this many greedy passes. Where the tor model keeps only a
# neighbourhood of greedy's plan (no bound of its own), the model one level up still runs when
# those passes, as the budget counts them, take at most UPPER_PASSES_SHARE of its time, and
# its bound counts. At 2,048 nodes with 800 and 1,200 groups (0.6 and 0.9 M pairs) every seed
# that took the neighbourhood planned better (gap 19.8% -> 3.0%, 28.2% -> 20.0% and 10.8% ->
# 6.3% at 800; 23.5% -> 13.1% and 24.6% -> 16.5% at 1,200); at 8,192 nodes with 60 s, three
# seeds of five better (13.9% -> 0.8%), one the same, and one less p100 demand (-5.8%). At
# 20,480 nodes (25 M pairs) the passes alone would be 90 s.
UPPER_PASSES = 6
UPPER_PASSES_SHARE = 0.8
# Greedy puts the upper model's JobGroups first, those that need more than this share of their
# roomiest domain before the others (at 2,048 nodes 8.35e11 without, 8.45e11 with: a
# bigPod-wide gang placed late found no bigPod left); the others are kept off their nodes in
# one of its two passes.
TIGHT = 0.3
# Its wall seconds: at 2,048 nodes 2.7 to 3.1 s for 0.7 deterministic s, and up to 4.7 s for
# 1.4 with less detail; its cluster-wide and per-selector cuts make presolve dense (1.5 s).
UPPER_PACE = Pace(2.6, 4e-4)
# Up to this many (role, node) candidates each stage's solution is put on nodes and topped up
# greedily before the next stage starts from it (a fraction of a second at 512 nodes; at
# 20,480 nodes expansion alone took 9 s).
REFINE_LIMIT = 1_000_000
# Deterministic seconds for packing one bucket that first-fit did not pack: which roles to keep
# whole settled within 0.02 s at 512 nodes and on the trace (1 s changed nothing).
PACK_EXACTLY_LIMIT = 0.05
# Wall seconds of those small solves and of the no-good searches' feasibility checks (one
# worker): fitted on 512 nodes and the trace case, 2.5 per deterministic s (1.5 to 3.1).
SMALL_PACE = Pace(2.5, 1e-4)
# The cluster-wide knapsack behind a stage's bound where no model has a better one: at 1,213
# trace nodes and 2,048 generated ones 0.04 to 0.05 s a stage, built and solved, where it
# proves its optimum; 0.6 s where it stops at this limit (the second level at 2,048 nodes).
CLUSTER_BOUND_LIMIT = 0.2
# Seconds (as the budget counts them) the node-level model gets, within what the stage has left,
# to place the one priority level whose JobGroups a stage's bucket solution chose but greedy
# could not put on nodes. On the 512-node seeds 1 s took seed 4's gap to 2.92%, 4 s to 1.71%;
# no other seed, M or the trace case moved between 1 s and 4 s.
REPACK_LIMIT = 4.0
# The bucket model is a knapsack over JobGroups with a tight LP: CP-SAT's LP workers (with
# reduced-cost fixing) find and prove its optimum; the others only take turns from them in the
# interleaved search. At 512 nodes, the stage at the second priority level: 16% gap after 6.5 s
# with all of them, proven optimal in 5 s with these.
# A whole model (one that proves bounds) also goes without default_lp: on the 1,213-node
# trace one of its tasks took 9.7 s of wall for 1.0 s of deterministic time (8,700 LP calls of
# a few iterations each), so the limit overran; max_lp and reduced_costs alone proved the top
# level optimal there, with a plan that packs, in 4 s.
# So does any bucket model with --workers 2, where one full-problem worker runs beside the
# neighbourhood searches and would be default_lp: at 8,192 nodes it found nothing better than
# its start's top level in 23 s, where max_lp or reduced_costs alone found 1.013x of it (1.040x
# greedy's) in 9 to 12 s (the deterministic mode runs default_lp, max_lp and reduced_costs, and
# reduced_costs found it).
IGNORED_SUBSOLVERS = (
    "core", "no_lp", "max_lp_sym", "pseudo_costs", "quick_restart", "quick_restart_no_lp", "fixed",
)
# The model one level up is there for its bound and for which JobGroups go in: its LP workers
# find and prove the top level at 2,048 nodes, and neighbourhood search only took turns from
# them. With demand weights rounded per pod instead of per JobGroup, the top level of the
# generated 2,048-node seed 1 was not proven within its time with these (1.0865 of quorum demand
# placed against 1.0910), and was without them, as were seed 2's (with either rounding).
UPPER_IGNORED = IGNORED_SUBSOLVERS + (
    "default_lp", "graph_arc_lns", "graph_cst_lns", "graph_dec_lns", "graph_var_lns", "rnd_cst_lns", "rnd_var_lns",
)


@dataclass(slots=True)
class Buckets:
    of_node: np.ndarray  # bucket per node (-1: no role can use the node)
    nodes: list[list[int]]  # usable nodes per bucket, ascending
    level: int | None  # the topology level buckets are domains of, None when they are classes


def make_buckets(problem: Problem, *, by_roles: bool = False, level: int | None = None) -> Buckets:
    """The usable nodes of each lowest-level domain (a tor); outside the tree, nodes alike for
    every role (same free room, same idleness, eligible for the same roles). A tor's nodes need
    not be eligible for the same roles: each role's room there counts only its own candidates,
    and the tor-wide cuts stay valid, if looser (splitting tors by role set made the model at
    2,048 nodes 65 k counts and no bound; by tor, 31 k and a 10.8% gap). ``by_roles`` splits
    tors by role set too, for models too large to bound anyway. Role sets are compared
    by two random 64-bit sums per node (Zobrist hashing), not listed: 25 M (role, node) pairs
    at 20,480 nodes. ``level`` pools a higher level's domains instead."""
    if level is None and problem.tree is not None and problem.tree.levels:
        level = len(problem.tree.levels) - 1
    signed = by_roles or level is None or bool(problem.tree.outside)  # type: ignore[union-attr]
    keys = np.random.default_rng(0).integers(0, 2**63, size=(len(problem.roles), 2), dtype=np.uint64)
    signature = np.zeros((len(problem.nodes), 2), dtype=np.uint64)
    used = np.zeros(len(problem.nodes), dtype=bool)
    for r, role in enumerate(problem.roles):
        if signed:
            signature[role.nodes] += keys[r]  # each node once per role; wraps modulo 2**64
        used[role.nodes] = True
    of_node = np.full(len(problem.nodes), -1, dtype=np.int64)
    seen: dict[tuple, int] = {}
    nodes: list[list[int]] = []
    for n, (s0, s1) in zip(np.flatnonzero(used).tolist(), signature[used].tolist()):
        d = problem.domain(level, n) if level is not None else None
        if d is not None and n not in problem.tree.outside:  # type: ignore[union-attr]
            key: tuple = ("domain", d, s0, s1) if by_roles else ("domain", d)
        else:
            key = ("class", problem.free[n], problem.idle[n], s0, s1)
        b = seen.setdefault(key, len(nodes))
        if b == len(nodes):
            nodes.append([])
        nodes[b].append(n)
        of_node[n] = b
    return Buckets(of_node, nodes, level)


def _scarce(problem: Problem, gpu_resource: str) -> int:
    if gpu_resource in problem.resources:
        return problem.resources.index(gpu_resource)
    share = [
        sum(role.request[k] * role.count for role in problem.roles) / max(1, sum(f[k] for f in problem.free))
        for k in range(len(problem.resources))
    ]
    return int(np.argmax(share)) if share else 0


@dataclass(slots=True)
class BucketSolution:
    counts: dict[tuple[int, int], int]  # (role, bucket) -> pods
    placed: frozenset[int]


@dataclass(slots=True)
class AggregateResult:
    solve: SolveResult[BucketSolution]
    buckets: Buckets
    whole: bool  # every role kept every bucket: the bounds hold for the whole problem
    on_nodes: list[Assignment] = field(default_factory=list)  # real plans made between stages
    upper: list[StageResult] = field(default_factory=list)  # objective 1 one level up, as far as it went


def solve_buckets(
    problem: Problem,
    terms: list[Term],
    hint: Assignment,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    gpu_resource: str = "nvidia.com/gpu",
    reporter: Reporter | None = None,
    tuning: Tuning,
) -> AggregateResult:
    """Objective 1 (and pods beyond minMember) on the bucket model, from ``hint``."""
    start = time.perf_counter()
    buckets = make_buckets(problem)
    pairs = _cap_pairs(problem, buckets)
    if pairs.size > BUCKET_MODEL_LIMIT:
        # No bound either way: finer buckets (a tor split by role set) search better here
        # (at 8,192 nodes, 4% more demand at the top level where whole tors found none).
        buckets = make_buckets(problem, by_roles=True)
        pairs = _cap_pairs(problem, buckets)
    scarce = _scarce(problem, gpu_resource)
    whole = pairs.size <= BUCKET_MODEL_LIMIT
    kept = [t for t in terms if t.primary]
    made: list[Assignment] = []
    upper: list[StageResult] = []
    spent = 0.0
    passes = UPPER_PASSES * candidate_count(problem) * SECONDS_PER_CANDIDATE_PASS
    affordable = whole or passes <= UPPER_PASSES_SHARE * UPPER_SHARE * time_limit
    if kept and pairs.size > LIGHT_PRESOLVE_FROM and buckets.level and affordable:
        upper, chosen, spent = _upper(
            problem, kept, hint, buckets.level - 1, scarce,
            time_limit=UPPER_SHARE * time_limit, workers=workers, seed=seed, reporter=reporter, tuning=tuning,
        )
        if chosen is not None and score(terms, problem, chosen) > score(terms, problem, hint):
            hint = chosen
            made.append(chosen)
        # The plan stands without the tor model: built only when it would be searched.
        first = stage_budget(time_limit - spent, 0, len(stage_terms(kept)))
        size, pace = (pairs.size, LIGHT_PACE) if whole else (BUCKET_MODEL_LIMIT, Pace())
        if workers <= 1 and pace.too_short(first, size + len(problem.job_groups), OPTIONAL_MARGIN):
            return AggregateResult(SolveResult(None, "UNKNOWN", deterministic_time=spent), buckets, whole, made, upper)
    model = cp_model.CpModel()
    hinted = _in_buckets(hint, buckets)

    caps = pairs.as_dict() if whole else _neighbourhood(problem, pairs, hinted, BUCKET_MODEL_LIMIT)

    count = {key: model.new_int_var(0, cap, f"x[{key[0]},{key[1]}]") for key, cap in sorted(caps.items())}
    placed = [model.new_bool_var(f"placed[{j}]") for j in range(len(problem.job_groups))]
    role_vars: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for (r, b), var in count.items():
        role_vars[r].append(var)

    add_quorum(model, problem, placed, role_vars)
    _kept_apart_per_bucket(model, problem, buckets.of_node, count)

    eligible = _bucket_room(_Cuts(model), problem, buckets, count, caps, scarce, confined=len(count) <= CONFINED_CUTS_UP_TO)
    covers = _required(model, problem, buckets, count, caps, placed)

    def expression(term: Term) -> cp_model.LinearExprT:
        parts: list = [coef * placed[j] for j, coef in term.job_groups.items()]
        if term.pods:
            parts.append(term.pods * sum(count.values()))
        parts.extend(coef * sum(role_vars.get(r, ())) for r, coef in term.roles.items())
        return sum(parts)

    cuts: list[tuple[cp_model.IntVar, tuple[int, int], int]] = []  # literal => count[key] < c

    def set_hint(solution: BucketSolution) -> None:
        hint_counts(model, count, placed, solution.counts, solution.placed)
        for var, keys in covers:
            model.add_hint(var, any(solution.counts.get(k, 0) for k in keys))
        for lit, key, c in cuts:
            model.add_hint(lit, solution.counts.get(key, 0) < c)

    def extract(solver: cp_model.CpSolver) -> BucketSolution:
        return BucketSolution(*read_counts(solver, count, placed))


    meter = Meter()

    def refine(solution: BucketSolution, left: float) -> BucketSolution | None:
        """The stage's solution on nodes, topped up greedily, back in buckets: the next stage
        (a lower priority level, say) then starts with the JobGroups greedy can still add."""
        on_nodes = realise(problem, terms, buckets, solution, seed=seed, meter=meter)
        lost = {problem.job_groups[j].priority for j in solution.placed - on_nodes.placed}
        if len(lost) == 1 and left > 0:
            repacked, seconds = repack_level(
                problem, terms, on_nodes, solution.placed, lost.pop(), time_limit=min(REPACK_LIMIT, left), seed=seed,
                tuning=tuning,
            )
            meter.seconds += seconds
            if repacked is not None and score(terms, problem, repacked) > score(terms, problem, on_nodes):
                on_nodes = repacked
        made.append(on_nodes)
        if not on_nodes.placed >= solution.placed:
            return None  # a JobGroup did not survive expansion: earlier stages would lose value
        return BucketSolution(_in_buckets(on_nodes, buckets), on_nodes.placed)

    def learn(solution: BucketSolution, left: float) -> bool:
        """No-goods for the buckets whose pods do not fit on their nodes at once, found within
        ``left`` seconds of the small searches' pace."""
        found = _no_goods(problem, buckets, solution, eligible, meter, left)
        for b, core in found:
            literals = []
            for r, c in core:
                literals.append(model.new_bool_var(f"fewer[{r},{b},{c}]"))
                model.add(count[r, b] <= c - 1).only_enforce_if(literals[-1])
                cuts.append((literals[-1], (r, b), c))
            model.add_bool_or(literals)
        return bool(found)

    start_hint = BucketSolution({k: v for k, v in hinted.items() if k in count}, hint.placed)
    small = whole and candidate_count(problem) <= REFINE_LIMIT
    light = len(count) > LIGHT_PRESOLVE_FROM
    result = staged_solve(
        model, kept, expression, set_hint, extract, start_hint,
        time_limit=time_limit - spent if workers <= 1 else time_limit,
        workers=workers, seed=seed, reporter=reporter, start=start,
        light_presolve=light,
        ignore_subsolvers=IGNORED_SUBSOLVERS + (("default_lp",) if whole or workers > 1 else ()),
        refine=refine if small else None, learn=learn if small else None,
        pace=(LIGHT_PACE if light else FULL_PACE) if whole else Pace(), tuning=tuning,
        interleaved=WHOLE_INTERLEAVED if whole and not light else DETERMINISTIC_WORKERS,
        optional=bool(upper),
        overhead=lambda: meter.seconds,
        # Not with a neighbourhood: at 20,480 nodes the knapsack took 1.4 to 1.7 s a stage.
        known=(lambda index, values: cluster_bound(problem, stage_terms(kept), values, gpu_resource, meter)) if whole else None,
    )
    result.variables = len(count) + len(placed)
    result.deterministic_time += spent
    return AggregateResult(result, buckets, whole, made, upper)


def cluster_bound(
    problem: Problem,
    stages: list[list[Term]],
    reached: list[int],
    gpu_resource: str = "nvidia.com/gpu",
    meter: Meter | None = None,
) -> int | None:
    """The most objective-1 stage ``len(reached)`` can be in a real plan that reaches
    ``reached`` at the stages before it, on the cluster's room alone (each role anywhere its
    candidates are, the bucket model's cuts over all nodes): valid for the whole problem at any
    size, and solved in a blink. Where no model searched a stage, or its model proved nothing,
    it beats "every JobGroup of the level placed"; and every solution of the bucket models
    meets its cuts, so a start that reaches it needs no search there. None when the small
    search settles nothing."""
    model = cp_model.CpModel()
    placed = [model.new_bool_var(f"placed[{j}]") for j in range(len(problem.job_groups))]
    caps = {
        r: min(role.count, int(role.caps.sum()))
        for r, role in enumerate(problem.roles)
        if problem.job_groups[problem.gangs[role.gang].job_group].feasible
    }
    count = {r: model.new_int_var(0, cap, f"x[{r}]") for r, cap in caps.items()}
    add_quorum(model, problem, placed, {r: [var] for r, var in count.items()})
    nodes = np.unique(np.concatenate([role.nodes for role in problem.roles] or [np.zeros(0, np.int64)]))
    _room(_Cuts(model), problem, nodes.tolist(), [(r, [var], caps[r]) for r, var in count.items()],
          _scarce(problem, gpu_resource), whole_node=False)

    def expression(term: Term) -> cp_model.LinearExprT:
        return sum(coef * placed[j] for j, coef in term.job_groups.items())

    for stage, value in zip(stages, reached):
        model.add(stage_objective(stage, expression) >= value)
    model.maximize(stage_objective(stages[len(reached)], expression))
    status, solver = (meter or Meter()).solve(model, limit=CLUSTER_BOUND_LIMIT)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return int(math.floor(solver.best_objective_bound + 1e-6))


def _in_buckets(assignment: Assignment, buckets: Buckets) -> dict[tuple[int, int], int]:
    """Pods per (role, bucket) of a plan on nodes."""
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for (r, n), c in assignment.counts.items():
        counts[r, int(buckets.of_node[n])] += c
    return dict(counts)


def _bucket_room(
    cuts: _Cuts,
    problem: Problem,
    buckets: Buckets,
    count: dict[tuple[int, int], cp_model.IntVar],
    caps: dict[tuple[int, int], int],
    scarce: int,
    *,
    confined: bool,
    whole_node: bool = True,
) -> Callable[[int, int], np.ndarray]:
    """Each bucket's room over the counts there and, with ``confined``, again on each smaller
    set of its nodes some roles may only use (node selectors, taints), over the roles confined
    to it. Returns the split of role candidates by bucket it used."""
    in_bucket: dict[int, list[int]] = defaultdict(list)
    for r, b in count:
        in_bucket[b].append(r)
    eligible = _splitter(problem, buckets)
    for b, roles in in_bucket.items():
        _room(cuts, problem, buckets.nodes[b], [(r, [count[r, b]], caps[r, b]) for r in roles], scarce, whole_node)
        if not confined:
            continue
        sets = {r: frozenset(eligible(r, b).tolist()) for r in roles}
        for nodes in sorted({e for e in sets.values() if len(e) < len(buckets.nodes[b])}, key=sorted):
            inside = [(r, [count[r, b]], caps[r, b]) for r in roles if sets[r] <= nodes]
            _room(cuts, problem, sorted(nodes), inside, scarce, whole_node)
    return eligible


@dataclass(frozen=True, slots=True)
class _UpperSolution:
    counts: dict[tuple[int, int], int]  # (role, domain) -> pods, for the gangs in detail
    pods: dict[int, int]  # role -> pods in the whole cluster, for the others
    placed: frozenset[int]


def _upper(
    problem: Problem,
    terms: list[Term],
    hint: Assignment,
    level: int,
    scarce: int,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    reporter: Reporter | None,
    tuning: Tuning,
) -> tuple[list[StageResult], Assignment | None, float]:
    """Objective 1's stages on the domains at ``level``, the largest gangs in detail
    (UPPER_DETAIL), as far as the time goes: every real plan is a solution of it, so each
    stage's bound holds for the whole problem (for plans that reach its earlier stages).
    Returns those stages, greedy's plan with the JobGroups it placed put first at each
    priority level it solved (the others as before), and the time spent.

    The detailed gangs share each domain's room as in the bucket model; the others only the
    cluster's, which is looser: a small pod may be counted in room a large one holds."""
    start = time.perf_counter()
    upper = make_buckets(problem, level=level)
    caps = _caps(problem, upper)
    per_gang: dict[int, int] = defaultdict(int)
    room: dict[int, int] = defaultdict(int)
    for (r, b), cap in caps.items():
        per_gang[problem.roles[r].gang] += 1
        room[r] += cap
    detailed: set[int] = set()
    total = 0
    for g in sorted(per_gang, key=lambda g: (-_scarce_need(problem, g, scarce), g)):
        if detailed and total + per_gang[g] > UPPER_DETAIL:
            break
        detailed.add(g)
        total += per_gang[g]
    model = cp_model.CpModel()
    count = {
        key: model.new_int_var(0, cap, f"x[{key[0]},{key[1]}]")
        for key, cap in sorted(caps.items())
        if problem.roles[key[0]].gang in detailed
    }
    everywhere = {
        r: model.new_int_var(0, min(problem.roles[r].count, most), f"x[{r}]")
        for r, most in sorted(room.items())
        if problem.roles[r].gang not in detailed
    }
    placed = [model.new_bool_var(f"placed[{j}]") for j in range(len(problem.job_groups))]
    role_vars: dict[int, list[cp_model.IntVar]] = defaultdict(list)
    for (r, _), var in count.items():
        role_vars[r].append(var)
    for r, var in everywhere.items():
        role_vars[r].append(var)
    add_quorum(model, problem, placed, role_vars)
    _kept_apart_per_bucket(model, problem, upper.of_node, count)
    _kept_apart_per_bucket(model, problem, np.zeros(len(problem.nodes), dtype=np.int64), {(r, 0): v for r, v in everywhere.items()})
    # No whole-node cuts here: on miniPods and the whole cluster they are dense, and at 2,048
    # nodes the top level took 1.5 deterministic s to prove instead of 0.7 (wall over 10 s).
    cuts = _Cuts(model)
    _bucket_room(cuts, problem, upper, count, caps, scarce, confined=True, whole_node=False)
    cluster = sorted(n for nodes in upper.nodes for n in nodes)
    _room(
        cuts, problem, cluster,
        [(r, role_vars[r], min(problem.roles[r].count, room[r])) for r in sorted(role_vars)], scarce,
        whole_node=False,
    )
    _required(model, problem, upper, count, caps, placed)

    meter = Meter()

    def set_hint(solution: _UpperSolution) -> None:
        hint_counts(model, count, placed, solution.counts, solution.placed)
        for r, var in everywhere.items():
            model.add_hint(var, solution.pods.get(r, 0))

    def extract(solver: cp_model.CpSolver) -> _UpperSolution:
        counts, chosen = read_counts(solver, count, placed)
        return _UpperSolution(counts, {r: solver.value(var) for r, var in everywhere.items()}, chosen)

    pods: dict[int, int] = defaultdict(int)
    for (r, _), c in hint.counts.items():
        pods[r] += c
    in_domains = _in_buckets(hint, upper)
    start_from = _UpperSolution(
        {k: c for k, c in in_domains.items() if k in count}, {r: c for r, c in pods.items() if r in everywhere},
        hint.placed,
    )
    result = staged_solve(
        model, terms, lambda t: sum(coef * placed[j] for j, coef in t.job_groups.items()), set_hint, extract,
        start_from, time_limit=time_limit, workers=workers, seed=seed, reporter=reporter, start=start,
        ignore_subsolvers=UPPER_IGNORED, pace=UPPER_PACE, interleaved=WHOLE_INTERLEAVED,
        one_search=True, overhead=lambda: meter.seconds,
        known=lambda index, values: cluster_bound(problem, stage_terms(terms), values, problem.resources[scarce], meter),
        tuning=tuning,
    )
    spent = result.deterministic_time
    if result.assignment is None or result.assignment.placed == hint.placed:
        return result.stages, None, spent
    chosen = result.assignment.placed  # only the JobGroups: its counts are not on nodes
    where: dict[int, set[int]] = defaultdict(set)
    for (r, d), c in result.assignment.counts.items():
        if c:
            where[problem.roles[r].gang].add(d)
    prefer = {g: np.array(sorted(n for d in ds for n in upper.nodes[d]), dtype=np.int64) for g, ds in where.items()}
    guarded = _guard(problem, prefer, [g for g in where if _tightness(problem, problem.gangs[g].job_group) > TIGHT])
    solved = {
        j for terms_, st in zip(stage_terms(terms), result.stages) if st.value is not None
        for t in terms_ for j in t.job_groups
    }
    plans = []
    # Its JobGroups first, those that need over TIGHT of their roomiest domain first, then
    # largest first; each gang tried first where it put it, and again with the others kept off
    # the nodes those tight gangs may use there. On four 2,048-node seeds the best plan was
    # always one of these two; largest first, or without the steer, never was. The levels it
    # did not solve go in queue order, and again largest quorum demand first, as the solver's
    # start tries them (lexicographic_greedy): on the five 2,048-node seeds, 20% more p100
    # demand at seed 2 and more p10 demand at seeds 3 and 4, for two passes of 0.07 s.
    #
    # A third order takes its JobGroups with the largest pods first (by the scarce resource),
    # as first-fit decreasing packs bins: whole-node pods take whole nodes before smaller ones
    # leave GPUs on nodes whose CPU or memory they used up. On the 2,048-node seeds it placed
    # more p100 demand at seeds 4 and 5 (gap 10.69% -> 9.04%, 26.64% -> 18.46%).
    def order(demand_first: bool, pods_first: bool = False) -> list[int]:
        def first(j: int) -> float:
            if j not in chosen:
                return 0
            return -_largest_pod(problem, j, scarce) if pods_first else -(_tightness(problem, j) > TIGHT)

        return sorted(
            range(len(problem.job_groups)),
            key=lambda j: (
                -problem.job_groups[j].priority,
                j not in solved or j not in chosen,
                first(j),
                -problem.job_groups[j].demand if j in solved or demand_first else 0,
                j,
            ),
        )

    orders: list[list[int]] = []
    for each in (order(False), order(True), order(True, pods_first=True)):
        if each not in orders:  # the first two are the same when every level was solved
            orders.append(each)
    for each in orders:
        for steer in (prefer, guarded):
            plans.append(greedy(problem, each, steer))
            spent += candidate_count(problem) * SECONDS_PER_CANDIDATE_PASS if workers <= 1 else 0.0
    return result.stages, max(plans, key=lambda plan: score(terms, problem, plan)), spent


def _guard(problem: Problem, prefer: dict[int, np.ndarray], tight: list[int]) -> dict[int, np.ndarray]:
    """``prefer`` with the nodes the ``tight`` gangs may use where they were put taken out of
    every other gang's first choice: a few pods of others there break a gang that needs
    nearly all of them."""
    reserved = np.zeros(len(problem.nodes), dtype=bool)
    for g in tight:
        for r in problem.gangs[g].roles:
            reserved[np.intersect1d(problem.roles[r].nodes, prefer[g])] = True
    everything = np.arange(len(problem.nodes), dtype=np.int64)
    guarded = dict(prefer)
    for g in range(len(problem.gangs)):
        if g not in tight:
            nodes = prefer.get(g, everything)
            guarded[g] = nodes[~reserved[nodes]]
    return guarded


def _largest_pod(problem: Problem, j: int, scarce: int) -> int:
    """The most of the scarce resource (GPUs) one pod of the JobGroup asks."""
    return max((problem.roles[r].request[scarce] for r in problem.roles_of(j)), default=0)


def _tightness(problem: Problem, j: int) -> float:
    """The largest share of its roomiest allowed domain a gang of the JobGroup needs (pods
    against what its candidates there hold, each alone): 1 is a gang that fills it."""
    tightest = 0.0
    for g in problem.job_groups[j].gangs:
        gang = problem.gangs[g]
        level = max(gang.topology.required) if gang.topology is not None and gang.topology.required else None
        room = np.zeros(1 if level is None else problem.domain_count(level))
        for r in gang.roles:
            role = problem.roles[r]
            domains = np.zeros(len(role.nodes), dtype=np.int64) if level is None else problem.domain_array(level)[role.nodes]
            inside = domains >= 0
            room += np.bincount(domains[inside], weights=role.caps[inside], minlength=len(room))
        tightest = max(tightest, gang.need / max(1.0, float(room.max(initial=0.0))))
    return tightest


def _scarce_need(problem: Problem, g: int, scarce: int) -> int:
    """How much of the scarce resource a gang's quorum asks for, about: its largest pod's."""
    gang = problem.gangs[g]
    return gang.need * max((problem.roles[r].request[scarce] for r in gang.roles), default=0)


@dataclass(frozen=True, slots=True)
class _CapPairs:
    """Every (role, bucket) pair a role's candidates reach, with how many of its pods they
    hold there, each alone; roles in order, buckets ascending within a role. Kept as arrays:
    at 8,192 nodes there are a million, which only ``_neighbourhood`` reads (as a dict
    they cost 0.6 s to build, and as much to read back)."""

    roles: np.ndarray
    buckets: np.ndarray
    room: np.ndarray

    @property
    def size(self) -> int:
        return len(self.roles)

    def as_dict(self) -> dict[tuple[int, int], int]:
        return dict(zip(zip(self.roles.tolist(), self.buckets.tolist()), self.room.tolist()))


def _cap_pairs(problem: Problem, buckets: Buckets) -> _CapPairs:
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for r, role in enumerate(problem.roles):
        if not problem.job_groups[problem.gangs[role.gang].job_group].feasible or not len(role.nodes):
            continue
        per = np.bincount(buckets.of_node[role.nodes], weights=role.caps, minlength=len(buckets.nodes))
        held = np.flatnonzero(per)
        parts.append((np.full(len(held), r, dtype=np.int64), held, np.minimum(per[held], role.count).astype(np.int64)))
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return _CapPairs(empty, empty, empty)
    return _CapPairs(*(np.concatenate(column).astype(np.int64) for column in zip(*parts)))


def _kept_apart_per_bucket(
    model: cp_model.CpModel, problem: Problem, of_node: np.ndarray, count: Mapping[tuple[int, int], cp_model.IntVar]
) -> None:
    """Roles of one PodGroup that its term keeps apart put no more pods in a bucket (``of_node``
    gives each node's) than their cap times its nodes that are a candidate of one of them: each
    role's caps alone let a Ray head and its workers count the same nodes twice."""
    sets: dict[str, list[int]] = defaultdict(list)
    for r, role in enumerate(problem.roles):
        if role.apart:
            sets[role.apart].append(r)
    for roles in sets.values():
        if len(roles) < 2:
            continue
        cap = problem.roles[roles[0]].apart_cap
        nodes = np.unique(np.concatenate([problem.roles[r].nodes for r in roles]))
        room = np.bincount(of_node[nodes], minlength=int(of_node.max(initial=0)) + 1)
        for b in np.flatnonzero(room).tolist():
            held = [count[r, b] for r in roles if (r, b) in count]
            if len(held) > 1:
                model.add(sum(held) <= cap * int(room[b]))


def _caps(problem: Problem, buckets: Buckets) -> dict[tuple[int, int], int]:
    """(role, bucket) -> how many of the role's pods its candidates there hold, each alone."""
    return _cap_pairs(problem, buckets).as_dict()


def _neighbourhood(
    problem: Problem, pairs: _CapPairs, hinted: dict[tuple[int, int], int], limit: int
) -> dict[tuple[int, int], int]:
    """Each role keeps the buckets the hint uses, then its roomiest ones, within ``limit``.
    Sorted with numpy: at 8,192 nodes there are a million (role, bucket) pairs."""
    if not pairs.size:
        return {}
    roles, buckets, room = pairs.roles, pairs.buckets, pairs.room
    width = int(buckets.max()) + 1
    used = np.array([r * width + b for (r, b), c in hinted.items() if c > 0 and 0 <= b < width], dtype=np.int64)
    unused = ~np.isin(roles * width + buckets, used)
    distinct, first = np.unique(roles, return_index=True)
    appearance = np.empty(len(distinct), dtype=np.int64)  # roles in the order the pairs list them
    appearance[np.argsort(first, kind="stable")] = np.arange(len(distinct))
    rank = appearance[np.searchsorted(distinct, roles)]
    order = np.lexsort((buckets, -room, unused, rank))
    starts = np.searchsorted(rank[order], np.arange(len(distinct)))
    within = np.arange(len(order)) - starts[rank[order]]
    share = max(2, limit // len(distinct))
    kept = order[(within < share) | ~unused[order]]
    return dict(zip(zip(roles[kept].tolist(), buckets[kept].tolist()), room[kept].tolist()))


# CP-SAT's -infinity in a linear constraint's domain, as its own ``<=`` writes it.
INT64_MIN = -(2**63)


class _Cuts:
    """The room cuts of one model, each added once. A set of nodes some roles are confined to
    often gives its bucket's cut again, term for term: at 2,048 nodes that was half the terms
    of the model one level up, which CP-SAT parsed and presolved (0.5 s of wall) only to
    drop. Written straight into the model's proto, in the form CP-SAT's own ``<=`` gives
    (terms by variable index): building a ``LinearExpr`` first cost six times as much, 1.3 s
    for 8,192 nodes' 10,828 cuts."""

    def __init__(self, model: cp_model.CpModel) -> None:
        self.model = model
        self._added: set[tuple[bytes, bytes, int]] = set()

    def add(self, indices: np.ndarray, coefficients: np.ndarray, limit: int) -> None:
        """``indices``: the variables' indices in the model, one per coefficient. Compared as
        bytes: a cut of 8,192 nodes' buckets has hundreds of terms, and tuples cost 1 s there."""
        order = np.argsort(indices, kind="stable")
        variables, merged = indices[order], coefficients[order]
        if (variables[1:] == variables[:-1]).any():  # a variable given twice: its terms summed
            variables, at = np.unique(variables, return_inverse=True)
            merged = np.zeros(len(variables), dtype=np.int64)
            np.add.at(merged, at, coefficients[order])
        kept = merged != 0
        variables, merged = variables[kept], merged[kept]
        key = (variables.tobytes(), merged.tobytes(), limit)
        if key not in self._added:
            self._added.add(key)
            linear = self.model.proto.constraints.add().linear
            linear.vars.extend(variables.tolist())
            linear.coeffs.extend(merged.tolist())
            linear.domain.extend([INT64_MIN, int(limit)])


def _room(
    cuts: _Cuts,
    problem: Problem,
    nodes: list[int],
    items: list[tuple[int, list[cp_model.IntVar], int]],
    scarce: int,
    whole_node: bool = True,
) -> None:
    """What the bucket's nodes can hold: valid for every real packing, exact when simple.
    ``items``: each role with the counts whose sum is its pods here, and the most it can have."""
    if not items:
        return
    free = problem.matrix("free")[nodes]
    requests = np.array([problem.roles[r].request for r, _, _ in items], dtype=np.int64)
    most = np.array([cap for _, _, cap in items], dtype=np.int64)
    most_float = most.astype(np.float64)
    indices = np.fromiter((var.index for _, counts, _ in items for var in counts), dtype=np.int64)
    owner = np.repeat(np.arange(len(items)), [len(counts) for _, counts, _ in items])
    order = np.argsort(indices, kind="stable")  # once here, not in every cut
    indices, owner = indices[order], owner[order]

    def at_most(coefficients: np.ndarray, limit: int) -> None:
        # Left out when the counts' caps keep it anyway; the int64 sum is trusted only where
        # the float one shows it cannot overflow (bytes times pods).
        if float(coefficients @ most_float) < 2.0**62 and int(coefficients @ most) <= limit:
            return
        cuts.add(indices, coefficients[owner], limit)

    for k in range(free.shape[1]):
        at_most(requests[:, k], int(free[:, k].sum()))
    # Cut each node into slots of s: a pod asking q holds at least floor(q / s) of them, since
    # pods on one node sum to at most its free amount F and floor(a / s) + floor(b / s) <=
    # floor((a + b) / s). Exact for one resource when sizes divide each other.
    column = free[:, scarce]
    most_sizes = min(ROOM_SHAPES, max(ROOM_LEAST, ROOM_TERMS // len(items)))
    for size in _spread(sorted(set(requests[:, scarce][requests[:, scarce] > 0].tolist())), most_sizes):
        at_most(requests[:, scarce] // size, int((column // size).sum()))
    # Pods at least as large as q in every resource: at most min_k floor(free_k / q_k) per node.
    shapes: Collection[tuple[int, ...]] = {tuple(row) for row in requests.tolist()}
    if len(shapes) > most_sizes:
        shapes = _spread(sorted(shapes, key=lambda q: (q[scarce], q)), most_sizes)
    for q in shapes:
        wanted = np.array(q, dtype=np.int64)
        positive = wanted > 0
        if not positive.any():
            continue
        dominating = (requests >= wanted).all(axis=1)
        if dominating.sum() < 2:
            continue
        at_most(dominating.astype(np.int64), int((free[:, positive] // wanted[positive]).min(axis=1).sum()))
    if whole_node:
        _whole_node_cuts(problem, nodes, items, free, requests, scarce, at_most)


def _spread(sizes: list[T], most: int) -> list[T]:
    """At most ``most`` of ``sizes`` (in order), spread evenly from the first to the last. Each
    cut is valid alone, so fewer only loosen the bound."""
    if len(sizes) <= most:
        return sizes
    return [sizes[i] for i in sorted(set(np.linspace(0, len(sizes) - 1, most).round().astype(int).tolist()))]


def _whole_node_cuts(
    problem: Problem,
    nodes: list[int],
    items: list[tuple[int, list[cp_model.IntVar], int]],
    free: np.ndarray,
    requests: np.ndarray,
    scarce: int,
    at_most: Callable[[np.ndarray, int], None],
) -> None:
    """Pods asking more than half of the scarce resource any node here has free go one to a
    node; when the others that ask for it never fit beside them, such a node is closed to
    those, so in each resource it counts whole against them (at least the least any node it
    fits on has free). At 512 nodes, 8-GPU pods on a tor made unusable the CPU that 1-GPU
    pods with many cores were counted in."""
    column = free[:, scarce]
    big = np.flatnonzero(2 * requests[:, scarce] > column.max(initial=0))
    if not len(big):
        return
    where = np.asarray(nodes, dtype=np.int64)
    order = np.argsort(where, kind="stable")
    ascending = where[order]
    least: dict[int, np.ndarray] = {}  # big pod -> per resource, the least free of the nodes here it fits on
    left = 0  # the most of the scarce resource a big pod leaves on a node here it fits on
    for i in big.tolist():
        role = problem.roles[items[i][0]]
        # The bucket's few nodes looked up in the role's candidates (ascending), not the other way.
        at = np.minimum(np.searchsorted(role.nodes, ascending), len(role.nodes) - 1)
        rows = order[(role.nodes[at] == ascending) & (role.caps[at] > 0)] if len(role.nodes) else order[:0]
        if len(rows):
            room = free[rows]
            least[i] = room.min(axis=0)
            left = max(left, int(room[:, scarce].max()) - int(requests[i, scarce]))
    if not least:
        return
    small = (requests[:, scarce] > left) & (2 * requests[:, scarce] <= column.max())
    if not small.any():
        return
    for k in range(free.shape[1]):
        coefficients = np.where(small, requests[:, k], 0)
        for i, room in least.items():
            coefficients[i] = room[k]
        at_most(coefficients, int(free[:, k].sum()))


def _required(
    model: cp_model.CpModel,
    problem: Problem,
    buckets: Buckets,
    count: dict[tuple[int, int], cp_model.IntVar],
    caps: dict[tuple[int, int], int],
    placed: list[cp_model.IntVar],
) -> list[tuple[cp_model.IntVar, list[tuple[int, int]]]]:
    """A required term allows one domain of its level; running members pin it. Returns each
    domain's boolean with the counts it covers (so a hint can set it).

    A domain too small for the gang's quorum (its candidates' room there, each role alone)
    is closed, and an open one holds at most that room: with the gang's pod total as the
    big-M, the LP spread a 64-pod gang over four domains a quarter each (2,048 nodes)."""
    by_role: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (r, b), var in count.items():
        by_role[r].append((b, var))
    covers: list[tuple[cp_model.IntVar, list[tuple[int, int]]]] = []  # not a dict: IntVar is unhashable in OR-Tools 9.12
    coarser: dict[tuple[int, int], np.ndarray] = {}
    exact: dict[tuple[int, int, int], cp_model.IntVar] = {}  # (gang, level, domain) -> its boolean
    for g, spec in enumerate(problem.gangs):
        topo = spec.topology
        if topo is None or not topo.required or not problem.job_groups[spec.job_group].feasible:
            continue
        for level in topo.required:
            # A level below the buckets' is taken one bucket at a time (a relaxation: the
            # domain it asks for lies inside one bucket), holding what one such domain holds.
            # Buckets that are classes of alike nodes (no levels) lie in no domain: each is
            # its own, and only the node level lies below them.
            if buckets.level is None:
                at = -1  # no level
                inside = _one_domain_room(problem, spec, level, buckets.of_node)
                where: Callable[[int], int | None] = lambda b: b  # noqa: E731
            else:
                at = min(level, buckets.level)
                inside = None
                if at != level:
                    if (level, at) not in coarser:
                        coarser[level, at] = _coarser(problem, level, at)
                    inside = _one_domain_room(problem, spec, level, coarser[level, at])
                where = lambda b: problem.domain(at, buckets.nodes[b][0])  # noqa: E731
            members: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for r in spec.roles:
                for b, var in by_role[r]:
                    d = where(b)
                    if d is None:
                        model.add(var == 0)
                    else:
                        members[d].append((r, b))
            uses = {}
            for d, keys in members.items():
                if inside is None:
                    room: dict[int, int] = defaultdict(int)
                    for r, b in keys:
                        room[r] += caps[r, b]
                    held = {r: min(c, problem.roles[r].count) for r, c in room.items()}
                    most = sum(held.values())
                    closed = _short(spec, held) or (
                        level in topo.pinned and d != _above(problem, level, topo.pinned[level], at=at)
                    )
                else:
                    held, most = inside.get(d, ({}, 0))
                    closed = not most
                if closed:
                    for k in keys:
                        model.add(count[k] == 0)
                    continue
                uses[d] = model.new_bool_var(f"uses[{g},{level},{d}]")
                if at == level:
                    exact[g, level, d] = uses[d]
                covers.append((uses[d], keys))
                model.add(sum(count[k] for k in keys) <= most * uses[d])
                if inside is not None:
                    for r in sorted({r for r, _ in keys}):
                        mine = [k for k in keys if k[0] == r]
                        if sum(caps[k] for k in mine) > held.get(r, 0):  # else its caps keep it
                            model.add(sum(count[k] for k in mine) <= held.get(r, 0))
            model.add(sum(uses.values()) <= placed[spec.job_group])
    # Gangs kept apart at a level no finer than the buckets' take distinct domains; at a finer
    # one the buckets do not see it, and the repair of the expansion does (greedy._split).
    add_exclusive(model, problem, exact)
    return covers


def _short(spec: GangSpec, held: dict[int, int]) -> bool:
    """Whether pods up to ``held`` per role miss the gang's quorum or a task's minimum."""
    return sum(held.values()) < spec.need or any(
        sum(held.get(r, 0) for r in task.roles) < task.need for task in spec.tasks
    )


def _one_domain_room(
    problem: Problem, spec: GangSpec, level: int, above: np.ndarray
) -> dict[int, tuple[dict[int, int], int]]:
    """For a gang required in one domain of ``level``, per coarser domain (``above[t]``, -1 for
    none, is the one ``level`` domain t lies in): per role the most of its pods one ``level``
    domain inside holds, and the most of the gang's pods one holds; only domains that hold its
    quorum count (a pinned gang, only its own). Without this a miniPod's total room passed for
    the one tor the gang needs. In arrays: at the node level there is a domain per node."""
    finer = problem.domain_array(level)
    count = problem.domain_count(level)
    held = np.zeros((len(spec.roles), count), dtype=np.int64)  # role's pods each domain holds
    for i, r in enumerate(spec.roles):
        role = problem.roles[r]
        domains = finer[role.nodes]
        ok = domains >= 0
        per = np.bincount(domains[ok], weights=role.caps[ok], minlength=count).astype(np.int64)
        held[i] = np.minimum(per, role.count)
    total = held.sum(axis=0)
    keep = (total > 0) & (total >= spec.need)
    row = {r: i for i, r in enumerate(spec.roles)}
    for task in spec.tasks:
        keep &= held[[row[r] for r in task.roles if r in row]].sum(axis=0) >= task.need
    pinned = spec.topology.pinned.get(level) if spec.topology is not None else None
    if pinned is not None:
        keep &= np.arange(count) == pinned
    keep &= above >= 0
    found = np.flatnonzero(keep)
    coarse, at = np.unique(above[found], return_inverse=True)
    most = np.zeros(len(coarse), dtype=np.int64)
    np.maximum.at(most, at.reshape(-1), total[found])
    best = np.zeros((len(spec.roles), len(coarse)), dtype=np.int64)
    for i in range(len(spec.roles)):
        np.maximum.at(best[i], at.reshape(-1), held[i, found])
    return {
        int(d): ({r: int(best[i, k]) for i, r in enumerate(spec.roles) if best[i, k]}, int(most[k]))
        for k, d in enumerate(coarse.tolist())
    }


def _above(problem: Problem, level: int, domain: int, *, at: int) -> int | None:
    """The domain at level ``at`` (no lower than ``level``) that holds ``domain``."""
    if at == level:
        return domain
    assert problem.tree is not None
    node = domain if level == len(problem.tree.levels) else problem.tree.domains[level][domain].nodes[0]
    return problem.domain(at, node)


def _coarser(problem: Problem, level: int, at: int) -> np.ndarray:
    """The domain at level ``at`` (no lower than ``level``) each domain of ``level`` lies in."""
    assert problem.tree is not None
    if level == len(problem.tree.levels):
        return problem.domain_array(at)
    return np.array([_above(problem, level, d, at=at) for d in range(problem.domain_count(level))], dtype=np.int64)


def expand(
    problem: Problem, buckets: Buckets, solution: BucketSolution, *, seed: int = 0, meter: Meter | None = None,
    stop: float = math.inf,
) -> Assignment:
    """Pods per (role, node) for a bucket solution. Tentative: where a bucket did not hold all
    its pods, a JobGroup may be short of quorum (``greedy.repair`` settles that). A bucket
    greedy packing fails is packed exactly only while ``meter`` is short of ``stop``: past
    it, the bucket's pods are left to the repair (at 256 nodes, 11 such buckets cost 0.77 s
    that no budget saw)."""
    meter = meter or Meter()
    free = problem.matrix("free").copy()
    eligible = _splitter(problem, buckets)
    counts: dict[tuple[int, int], int] = defaultdict(int)
    for b, items in sorted(_per_bucket(solution).items()):
        if _pack(problem, b, items, free, counts, eligible) and meter.seconds < stop:
            _pack_exactly(problem, buckets.nodes[b], items, free, counts, seed, meter)
    return Assignment({k: c for k, c in counts.items() if c}, solution.placed)


def realise(
    problem: Problem, terms: list[Term], buckets: Buckets, solution: BucketSolution, *, seed: int = 0,
    meter: Meter | None = None, stop: float = math.inf,
) -> Assignment:
    """A bucket solution as a plan on nodes: expanded, repaired both ways (the JobGroups
    that lost pods topped up in queue order beside everything else, or by worth), each
    completed greedily; the one objective 1 prefers."""
    tentative = expand(problem, buckets, solution, seed=seed, meter=meter, stop=stop)
    plans = [complete(problem, repair(problem, tentative)), complete(problem, repair_by_worth(problem, tentative))]
    return max(plans, key=lambda a: score(terms, problem, a))


def _per_bucket(solution: BucketSolution) -> dict[int, list[tuple[int, int]]]:
    per_bucket: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (r, b), c in sorted(solution.counts.items()):
        if c:
            per_bucket[b].append((r, c))
    return per_bucket


def _splitter(problem: Problem, buckets: Buckets) -> Callable[[int, int], np.ndarray]:
    """A role's candidate nodes in a bucket, split once per role by one sort; a bucket's
    slice is cut when asked for (at 8,192 nodes a role reaches a thousand buckets, and
    cutting them all took 0.4 s for the few asked)."""
    split: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def eligible(r: int, b: int) -> np.ndarray:
        if r not in split:
            nodes = problem.roles[r].nodes
            of = buckets.of_node[nodes]
            order = np.argsort(of, kind="stable")
            found, first = np.unique(of[order], return_index=True)
            split[r] = (found, np.append(first, len(nodes)), nodes[order])
        found, bounds, ordered = split[r]
        at = int(np.searchsorted(found, b))
        if at == len(found) or found[at] != b:
            return np.zeros(0, dtype=np.int64)
        return ordered[bounds[at]:bounds[at + 1]]

    return eligible


def _no_goods(
    problem: Problem,
    buckets: Buckets,
    solution: BucketSolution,
    eligible: Callable[[int, int], np.ndarray],
    meter: Meter | None = None,
    budget: float = math.inf,
) -> list[tuple[int, list[tuple[int, int]]]]:
    """Per bucket whose pods do not fit on its nodes at once, a smallest set of its (role,
    count) that already does not: every real plan has fewer pods of one of them there. Past
    ``budget`` (seconds on ``meter``) no bucket is looked at, and a set is kept as small as it
    got: any set that does not fit is a no-good."""
    meter = meter or Meter()
    stop = meter.seconds + budget
    free = problem.matrix("free").copy()
    scratch: dict[tuple[int, int], int] = defaultdict(int)
    found = []
    for b, items in sorted(_per_bucket(solution).items()):
        if meter.seconds >= stop:
            break
        if not _pack(problem, b, items, free, scratch, eligible) or _fits(problem, buckets.nodes[b], items, meter, stop) is not False:
            continue
        core = list(items)
        for item in sorted(items, key=lambda rc: (problem.roles[rc[0]].request, rc)):
            rest = [rc for rc in core if rc != item]
            if meter.seconds >= stop:
                break
            if rest and _fits(problem, buckets.nodes[b], rest, meter, stop) is False:
                core = rest
        found.append((b, core))
    return found


def _order(problem: Problem, items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Largest first, by the scarcest resources (extended resources such as GPUs sort last)."""
    return sorted(items, key=lambda rc: (tuple(-x for x in reversed(problem.roles[rc[0]].request)), rc[0]))


def _pack(
    problem: Problem,
    b: int,
    items: list[tuple[int, int]],
    free: np.ndarray,
    counts: dict[tuple[int, int], int],
    eligible: Callable[[int, int], np.ndarray],
) -> int:
    """Largest pods first, each role's pods onto the eligible node left tightest; returns the
    pods not placed. On failure nothing of this bucket is kept (the exact packing starts over)."""
    taken: list[tuple[int, int, int]] = []
    short = 0
    for r, c in _order(problem, items):
        role = problem.roles[r]
        request = np.array(role.request, dtype=np.int64)
        nodes = eligible(r, b)
        left = c
        while left and len(nodes):
            room = free[nodes]
            fit = pods_that_fit(room, request, min(left, role.most))
            if role.apart:
                mates = apart_roles(problem, r)
                held = np.array([sum(counts.get((q, n), 0) for q in mates) for n in nodes.tolist()], dtype=np.int64)
                fit = np.minimum(fit, np.maximum(role.apart_cap - held, 0))
            usable = np.nonzero(fit > 0)[0]
            if not len(usable):
                break
            # What is left on each node, each resource as a share of the roomiest node's.
            rest = room[usable] - request * fit[usable][:, None]
            slack = (rest / np.maximum(room.max(axis=0), 1)).sum(axis=1)
            order = usable[np.lexsort((nodes[usable], slack))]
            # Tightest first; the leading nodes whose pods all fit in ``left`` are filled at
            # once (taking them changes no other node's slack), then the rest is looked at anew.
            batch = max(1, int(np.searchsorted(np.cumsum(fit[order]), left, side="right")))
            for n, k_pods in zip(nodes[order[:batch]].tolist(), fit[order[:batch]].tolist()):
                free[n] -= request * k_pods
                counts[r, n] += k_pods
                taken.append((r, n, k_pods))
                left -= k_pods
        short += left
    if short:
        for r, n, k_pods in taken:
            free[n] += np.array(problem.roles[r].request, dtype=np.int64) * k_pods
            counts[r, n] -= k_pods
            if not counts[r, n]:
                del counts[r, n]
    return short


def _node_counts(
    problem: Problem, nodes: list[int], items: list[tuple[int, int]], free: np.ndarray, *, exact: bool
) -> tuple[cp_model.CpModel, dict[tuple[int, int], cp_model.IntVar]]:
    """The bucket at node level: pods per (role, node) within each node's free room, each
    role's total exactly or at most its count."""
    model = cp_model.CpModel()
    y: dict[tuple[int, int], cp_model.IntVar] = {}
    for r, c in items:
        role = problem.roles[r]
        cap_of = dict(zip(role.nodes.tolist(), role.caps.tolist()))
        mine = [y.setdefault((r, n), model.new_int_var(0, min(c, cap_of[n]), f"y[{r},{n}]")) for n in nodes if n in cap_of]
        model.add(sum(mine) == c if exact else sum(mine) <= c)
    on_node: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for (r, n), v in y.items():
        on_node[n].append((r, v))
    for n in nodes:
        here = on_node[n]
        for k in range(free.shape[1]):
            model.add(sum(problem.roles[r].request[k] * v for r, v in here) <= int(free[n, k]))
        add_kept_apart(model, problem, here)
    return model, y


@dataclass(slots=True)
class Meter:
    """Wall seconds the small node-level solves of a bucket cost, as the budget counts them:
    deterministic, so the limit can be charged for them (at 512 nodes, 100 of them took a
    second the stage solves' budget did not see)."""

    seconds: float = 0.0

    def solve(self, model: cp_model.CpModel, seed: int = 0, limit: float = 1.0) -> tuple[int, cp_model.CpSolver]:
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = seed
        solver.parameters.max_deterministic_time = limit
        solver.parameters.catch_sigint_signal = False
        status = solver.solve(model)
        self.seconds += SMALL_PACE.cost(solver.response_proto.deterministic_time, len(model.proto.variables))
        return status, solver


def _fits(
    problem: Problem, nodes: list[int], items: list[tuple[int, int]], meter: Meter, stop: float = math.inf
) -> bool | None:
    """Whether the bucket's nodes, as free as the snapshot leaves them, hold all of ``items``
    at once; None when the small search did not settle it (within 1 deterministic second,
    and before ``meter`` reaches ``stop``)."""
    model, _ = _node_counts(problem, nodes, items, problem.matrix("free"), exact=True)
    left = (stop - meter.seconds - SMALL_PACE.cost(0.0, len(model.proto.variables))) / SMALL_PACE.per_deterministic
    status, _ = meter.solve(model, limit=max(0.0, min(1.0, left)))
    return True if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else False if status == cp_model.INFEASIBLE else None


def _pack_exactly(
    problem: Problem,
    nodes: list[int],
    items: list[tuple[int, int]],
    free: np.ndarray,
    counts: dict[tuple[int, int], int],
    seed: int,
    meter: Meter,
) -> None:
    """The bucket at node level: what fits of its pods, kept whole where it can be (a small,
    deterministic CP-SAT). A role short of pods here costs its JobGroup the quorum unless
    greedy finds them room elsewhere, so the roles kept whole come first, higher priority
    levels before lower and, within a level, by their JobGroup's quorum demand; then pods."""
    model, y = _node_counts(problem, nodes, items, free, exact=False)
    levels = sorted({problem.job_groups[problem.gangs[problem.roles[r].gang].job_group].priority for r, _ in items})
    value = []
    for r, c in items:
        jg = problem.job_groups[problem.gangs[problem.roles[r].gang].job_group]
        value.append((levels.index(jg.priority), 1 + int(jg.demand * 1000)))
    base = sum(v for _, v in value) + 1
    pods = sum(c for _, c in items) + 1
    if pods * base ** len(levels) < 2**50:
        weight = [pods * base**k * v for k, v in value]
    else:
        weight = [pods * v for _, v in value]
    whole = [model.new_bool_var(f"whole[{r}]") for r, _ in items]
    for (r, c), full in zip(items, whole):
        model.add(sum(v for (rr, _), v in y.items() if rr == r) >= c * full)
    model.maximize(sum(w * full for w, full in zip(weight, whole)) + sum(y.values()))
    status, solver = meter.solve(model, seed, PACK_EXACTLY_LIMIT)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return
    for (r, n), var in y.items():
        c = solver.value(var)
        if c:
            free[n] -= np.array(problem.roles[r].request, dtype=np.int64) * c
            counts[r, n] += c
