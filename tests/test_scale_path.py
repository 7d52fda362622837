"""The cluster-scale path (objective 1 on node buckets, then nodes) on a cluster big enough to
take it: its plan verifies, never loses to greedy, and is deterministic. Timing is the
benchmark's business (benchmarks/scale.py), not this test's."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

import numpy as np
import pytest

from gangplan.stages import SolveResult, Tuning
from gangplan.aggregate import BucketSolution, Buckets, Meter, cluster_bound, expand, make_buckets, solve_buckets
from gangplan.errors import UsageError
from gangplan.generate import generate
from gangplan.greedy import greedy, repair
from gangplan.loader import load_snapshot
from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, Snapshot
from gangplan.objective import Assignment, Term, objective_terms
from gangplan.plan import Plan
from gangplan.planner import BUCKET_FROM, Options, name_pods, plan
from gangplan.problem import Problem, build_problem, candidate_count
from gangplan.render import render
from gangplan.verify import verify

GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    path = tmp_path_factory.mktemp("scale") / "s.json"
    path.write_text(json.dumps(generate(shape=(2, 4, 4, 16), groups=100, seed=1)))
    return load_snapshot([str(path)])


def test_a_512_node_cluster_takes_the_bucket_path_and_its_plan_holds(cluster: Snapshot) -> None:
    problem = build_problem(cluster)
    assert candidate_count(problem) > BUCKET_FROM
    result = plan(cluster, Options(time_limit=3))
    assert "node buckets" in result.solver.note
    _holds_beats_greedy_and_repeats(cluster, result)


def _holds_beats_greedy_and_repeats(cluster: Snapshot, result: Plan) -> None:
    """The plan verifies, is no worse than greedy's on objective 1, and comes out the same again."""
    assert verify(cluster, result.placements, result.topology_levels()).ok
    baseline = plan(cluster, Options(solver="greedy"))
    primary = [o.name for o in result.solver.objective if o.name.split("@")[0] in ("quorum-demand", "job-groups")]
    values = {o.name: o.value for o in result.solver.objective}
    reference = {o.name: o.value for o in baseline.solver.objective}
    assert [values[n] for n in primary] >= [reference[n] for n in primary]
    again = plan(cluster, Options(time_limit=3))
    assert render(again, "json") == render(result, "json")


def test_putting_the_bucket_plan_on_nodes_is_charged_to_the_limit(cluster: Snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """Buckets greedy packing cannot fill are packed by small searches: at 256 nodes, 11 of
    them in the plan's last expansion to nodes cost 0.77 s that the limit did not count."""
    from gangplan import aggregate

    original = aggregate.realise
    last: dict[str, float] = {}

    def costly(
        problem: Problem, terms: list[Term], buckets: Buckets, solution: BucketSolution, *, seed: int = 0,
        meter: Meter | None = None, stop: float | None = None,
    ) -> Assignment:
        if stop is None:  # a stage's, not the planner's
            return original(problem, terms, buckets, solution, seed=seed, meter=meter)
        found = original(problem, terms, buckets, solution, seed=seed, meter=meter, stop=stop)
        last["stop"] = stop
        assert meter is not None
        meter.seconds += 100.0  # as if its searches had cost that much
        return found

    monkeypatch.setattr(aggregate, "realise", costly)
    result = plan(cluster, Options(time_limit=3))
    assert "node buckets" in result.solver.note
    assert 0 < last["stop"] <= 3
    assert result.solver.deterministic_time >= 100.0
    assert verify(cluster, result.placements, result.topology_levels()).ok


def test_buckets_partition_the_usable_nodes_and_repair_makes_a_plan(cluster: Snapshot) -> None:
    problem = build_problem(cluster)
    buckets = make_buckets(problem)
    assert buckets.level is not None  # the generated cluster has a topology: buckets are its tors
    usable = sorted({n for role in problem.roles for n in role.nodes})
    assert sorted(n for nodes in buckets.nodes for n in nodes) == usable
    for b, nodes in enumerate(buckets.nodes):
        assert all(buckets.of_node[n] == b for n in nodes)
        tors = {problem.domain(buckets.level, n) for n in nodes}
        assert len(tors) == 1  # a bucket never straddles two tors
    tor_of_bucket = [problem.domain(buckets.level, nodes[0]) for nodes in buckets.nodes]
    assert len(set(tor_of_bucket)) == len(tor_of_bucket)  # one bucket per tor
    eligible: dict[int, set[int]] = {}
    for r, role in enumerate(problem.roles):
        for n in role.nodes.tolist():
            eligible.setdefault(n, set()).add(r)
    split = make_buckets(problem, by_roles=True)
    assert split.level is not None and len(split.nodes) > len(buckets.nodes)
    for nodes in split.nodes:
        assert len({problem.domain(split.level, n) for n in nodes}) == 1
        assert len({frozenset(eligible[n]) for n in nodes}) == 1  # the Zobrist sums merge no two sets
    terms = objective_terms(problem)
    start = greedy(problem)
    outcome = solve_buckets(problem, terms, start, time_limit=2, workers=1, seed=0, tuning=Tuning())
    assert outcome.whole and outcome.solve.assignment is not None
    tentative = expand(problem, outcome.buckets, outcome.solve.assignment)
    fixed = repair(problem, tentative)
    assert fixed.placed <= outcome.solve.assignment.placed
    assert verify(cluster, name_pods(problem, fixed), problem.tree.levels if problem.tree else ()).ok


def test_the_model_option_forces_either_model(cluster: Snapshot) -> None:
    nodes = plan(cluster, Options(time_limit=2, model="nodes"))
    assert "node buckets" not in nodes.solver.note
    assert verify(cluster, nodes.placements, nodes.topology_levels()).ok
    small = load_snapshot(["snapshots/small.yaml"])
    buckets = plan(small, Options(time_limit=2, model="buckets"))
    assert "node buckets" in buckets.solver.note
    assert verify(small, buckets.placements, buckets.topology_levels()).ok
    with pytest.raises(UsageError):
        Options(model="pods").check()


def test_spans_weights_are_the_candidate_domains_listed_lazily(cluster: Snapshot) -> None:
    problem = build_problem(cluster)
    spans = [t for t in objective_terms(problem) if "spans" in t.name]
    assert spans
    for term in spans:
        level = next(iter(term.uses))[1]
        eager = {
            (g, level, d): 1
            for g, spec in enumerate(problem.gangs)
            if spec.topology and level in getattr(spec.topology, term.name.split("-")[0])
            for d in sorted(
                {domain for r in spec.roles for n in problem.roles[r].nodes
                 for domain in [problem.domain(level, n)] if domain is not None}
            )
        }
        assert dict(term.uses) == eager
        assert len(term.uses) == len(eager) <= term.upper
        g, _, d = next(iter(eager))
        assert term.uses.get((g, level, d)) == 1 and term.uses.get((g, level, -5), 0) == 0
        assert term.uses.get((len(problem.gangs), level, d), 0) == 0


def _knapsack(problem: Problem, stages: list[list[Term]], reached: list[int]) -> int:
    """``cluster_bound``, which these tests expect to find (None: its search ran out)."""
    bound = cluster_bound(problem, stages, reached)
    assert bound is not None
    return bound


def test_a_stage_the_time_did_not_reach_is_measured_against_its_largest_value(cluster: Snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    from gangplan.aggregate import AggregateResult
    from gangplan.stages import SolveResult, StageResult, stage_terms, stage_weights
    from gangplan.objective import term_value
    from gangplan.planner import _bucket_proof

    problem = build_problem(cluster)
    terms = objective_terms(problem)
    found = greedy(problem)
    stages = stage_terms([t for t in terms if t.primary])
    value = [sum(w * term_value(t, problem, found) for w, t in zip(stage_weights(s), s)) for s in stages]
    first = StageResult([t.name for t in stages[0]], "OPTIMAL", value[0], value[0])
    outcome = AggregateResult(SolveResult(None, "FEASIBLE", [first]), make_buckets(problem), True)
    proven, gap, at = _bucket_proof(problem, terms, found, outcome, GPU)
    largest = [sum(w * t.upper for w, t in zip(stage_weights(s), s)) for s in stages]
    # Greedy places every JobGroup of the top level: stage 2 needs no solver to be proven.
    assert value[1] == largest[1] and value[2] < largest[2]
    assert proven == {t.name for s in stages[:2] for t in s}
    # Unsearched, stage 3 is measured against the tighter of the most it could be and the
    # cluster-wide knapsack with the earlier stages held at the plan's values.
    bound = min(largest[2], _knapsack(problem, stages, value[:2]))
    assert gap == pytest.approx((bound - value[2]) / bound)
    assert at is not None and (at.terms, at.value, at.bound) == ([t.name for t in stages[2]], value[2], bound)
    # A model that claims stage 3 at the plan's value proves it when the model was whole; a
    # neighbourhood's bounds say nothing about the whole problem, so there the claim is ignored
    # and stage 3 is measured as if no model had run (8,192 nodes and up).
    claims = [first] + [StageResult([t.name for t in s], "OPTIMAL", v, v) for s, v in zip(stages[1:3], value[1:3])]
    outcome = AggregateResult(SolveResult(None, "FEASIBLE", claims), make_buckets(problem), True)
    assert {t.name for t in stages[2]} <= _bucket_proof(problem, terms, found, outcome, GPU)[0]
    outcome.whole = False
    proof = _bucket_proof(problem, terms, found, outcome, GPU)
    assert proof[0] == proven and proof[1] == pytest.approx((bound - value[2]) / bound)
    # Above KNAPSACK_PROOF_LIMIT candidate pairs (20,480 nodes) no knapsack either: the most it could be.
    assert bound < largest[2]
    monkeypatch.setattr("gangplan.planner.KNAPSACK_PROOF_LIMIT", 0)
    proof = _bucket_proof(problem, terms, found, outcome, GPU)
    assert proof[0] == proven and proof[1] == pytest.approx((largest[2] - value[2]) / largest[2])
    assert proof[2] is not None and proof[2].bound == largest[2]


def test_the_proof_takes_a_bound_only_from_a_model_whose_earlier_stages_the_plan_reaches(cluster: Snapshot) -> None:
    from gangplan.aggregate import AggregateResult
    from gangplan.stages import SolveResult, StageResult, stage_objective, stage_terms, stage_upper
    from gangplan.objective import term_value
    from gangplan.planner import _bucket_proof

    problem = build_problem(cluster)
    terms = objective_terms(problem)
    found = greedy(problem)
    stages = stage_terms([t for t in terms if t.primary])
    value = [stage_objective(s, lambda t: term_value(t, problem, found)) for s in stages]
    names = [[t.name for t in s] for s in stages]
    # Stage 1 proven by the model one level up; the tor model's own stage 1 claimed more than the
    # plan reaches, so its tighter stage-3 bound (conditional on that) must not be used.
    upper = [StageResult(names[0], "OPTIMAL", value[0], value[0])]
    tor = [
        StageResult(names[0], "FEASIBLE", value[0] + 1, value[0] + 5),
        StageResult(names[1], "FEASIBLE", value[1], stage_upper(stages[1])),
        StageResult(names[2], "FEASIBLE", value[2], value[2]),
    ]
    outcome = AggregateResult(SolveResult(None, "FEASIBLE", tor), make_buckets(problem), True, [], upper)
    proven, gap, _ = _bucket_proof(problem, terms, found, outcome, GPU)
    largest = min(stage_upper(stages[2]), _knapsack(problem, stages, value[:2]))
    assert value[2] < largest
    assert proven == {t.name for s in stages[:2] for t in s}
    assert gap == pytest.approx((largest - value[2]) / largest)
    # When the tor model's earlier stages are what the plan reaches, its bound counts: proven.
    tor[0] = StageResult(names[0], "OPTIMAL", value[0], value[0])
    proven, gap, _ = _bucket_proof(problem, terms, found, outcome, GPU)
    assert proven == {t.name for s in stages[:3] for t in s}
    next_largest = min(stage_upper(stages[3]), _knapsack(problem, stages, value[:3]))  # no model reached it
    assert value[3] < next_largest and gap == pytest.approx((next_largest - value[3]) / next_largest)


def _two_racks(gangs: list[tuple[str, int, int, int, int, str]]) -> tuple[Problem, dict[str, int]]:
    """A zone of two 8-core, 4-GPU racks of one node, and gangs (name, pods, cores in
    millicores, GPUs, priority, creation second), each pod alike."""
    from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, Snapshot

    nodes = tuple(Node(f"n{i}", {"zone": "a", "rack": f"r{i}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(2))
    pods, groups = [], []
    for name, count, cpu, gpus, priority, created in gangs:
        groups.append(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=count, creation_timestamp=f"2024-01-01T00:00:{created}Z"))
        pods += [Pod("default", f"{name}-{i}", labels={"scheduling.x-k8s.io/pod-group": name},
                     containers=(Container("main", {"cpu": cpu, GPU: gpus}),), priority=priority) for i in range(count)]
    problem = build_problem(Snapshot(nodes=nodes, pods=tuple(pods), pod_groups=tuple(groups)), levels=("zone", "rack"))
    return problem, {jg.key.split("/")[1]: j for j, jg in enumerate(problem.job_groups)}


def _realised(
    monkeypatch: pytest.MonkeyPatch, problem: Problem, terms: list[Term], chosen: frozenset[int]
) -> tuple[list[list[int]], Assignment | None]:
    """The greedy orders the model one level up's realisation runs and the plan it keeps, when
    its solution chose ``chosen`` and solved the first stage of ``terms``."""
    import gangplan.aggregate as aggregate
    from gangplan.aggregate import _UpperSolution, _upper
    from gangplan.stages import SolveResult, StageResult, stage_terms

    first = stage_terms(terms)[0]
    found = SolveResult(_UpperSolution({}, {}, chosen), "FEASIBLE", [StageResult([t.name for t in first], "OPTIMAL", 1, 1)])
    monkeypatch.setattr(aggregate, "staged_solve", lambda *args, **kwargs: found)
    orders: list[list[int]] = []
    greedy_pass = aggregate.greedy

    def recorded(
        problem: Problem, order: Iterable[int] | None = None, prefer: Mapping[int, np.ndarray] | None = None
    ) -> Assignment:
        assert order is not None  # the realisation always gives its order
        orders.append(list(order))
        return greedy_pass(problem, order, prefer)

    monkeypatch.setattr(aggregate, "greedy", recorded)
    _, kept, _ = _upper(problem, terms, Assignment({}, frozenset()), 0, 1, time_limit=1.0, workers=1, seed=0, reporter=None, tuning=Tuning())
    return orders, kept


def test_a_level_the_model_one_level_up_did_not_solve_is_also_put_on_nodes_largest_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its JobGroups are put on nodes by greedy, steered and guarded; a priority level it did not
    solve goes in queue order, and again largest quorum demand first, and the best plan is kept.
    Here the lower level's small gang is first in queue order and takes the rack the large one
    needs: only the second order places the large one, and that plan is the one returned."""
    from dataclasses import replace

    from gangplan.stages import stage_terms

    problem, key = _two_racks([("top", 1, 1000, 4, 100, "00"), ("small", 1, 1000, 2, 10, "01"), ("large", 1, 1000, 4, 10, "02")])
    # Rounded weights, as at scale, keep the lower level out of the top level's stage.
    terms = [replace(t, exact=False) if t.name.endswith("@10") else t for t in objective_terms(problem) if t.primary]
    assert {t.name for t in stage_terms(terms)[0]} == {"quorum-demand@100", "job-groups@100", "queue-order@100"}
    top, small, large = key["top"], key["small"], key["large"]
    # The model's solution: the top level solved, its gang in the zone; the lower level not.
    orders, chosen = _realised(monkeypatch, problem, terms, frozenset({top}))
    assert orders == [[top, small, large]] * 2 + [[top, large, small]] * 2
    # Queue order puts the small gang on the rack the top gang left, the large one then finds
    # half a rack; largest first puts the large one there and the small one nowhere: more demand.
    assert chosen is not None and chosen.placed == {top, large}


def test_the_model_one_level_up_is_also_put_on_nodes_largest_pods_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its JobGroups are also put on nodes largest pods first (GPUs a pod asks), as first-fit
    decreasing packs bins. Here the gang of the most quorum demand has two CPU-heavy 1-GPU pods:
    first, it takes 5 of 8 cores on both nodes and the two 3-GPU pods, worth more together, find
    no node; largest pods first places those two and leaves it out."""
    problem, key = _two_racks([("cpu-heavy", 2, 5000, 1, 10, "00"), ("b", 1, 3500, 3, 10, "01"), ("c", 1, 3500, 3, 10, "02")])
    heavy, b, c = key["cpu-heavy"], key["b"], key["c"]
    assert problem.job_groups[heavy].demand > problem.job_groups[b].demand
    assert problem.job_groups[b].demand + problem.job_groups[c].demand > problem.job_groups[heavy].demand
    terms = [t for t in objective_terms(problem) if t.primary]
    orders, chosen = _realised(monkeypatch, problem, terms, frozenset({heavy, b, c}))
    assert orders == [[heavy, b, c]] * 2 + [[b, c, heavy]] * 2
    assert chosen is not None and chosen.placed == {b, c}


@pytest.mark.parametrize("one_level_up", [False, True])
def test_past_the_bucket_model_limit_a_neighbourhood_of_the_start_is_searched_and_its_plan_holds(
    cluster: Snapshot, monkeypatch: pytest.MonkeyPatch, one_level_up: bool
) -> None:
    """At 8,192 nodes and up the bucket model keeps each role's hinted buckets and its roomiest
    (``_neighbourhood``); here the limit is lowered so that 512 nodes take that path. With
    ``one_level_up`` the model one level up runs first, as it does there when its greedy passes
    are affordable (the light-presolve size it needs is lowered too)."""
    from gangplan import aggregate

    problem = build_problem(cluster)
    monkeypatch.setattr(aggregate, "BUCKET_MODEL_LIMIT", len(aggregate._caps(problem, make_buckets(problem))) // 4)
    if one_level_up:
        monkeypatch.setattr(aggregate, "LIGHT_PRESOLVE_FROM", -1)
    result = plan(cluster, Options(time_limit=3))
    assert "a neighbourhood of the greedy plan" in result.solver.note  # searched after it, too
    assert ("bounded per" in result.solver.note) is one_level_up
    _holds_beats_greedy_and_repeats(cluster, result)


@pytest.mark.parametrize("seed", range(40))
def test_a_neighbourhood_keeps_every_hinted_bucket_then_each_roles_roomiest(seed: int) -> None:
    import random

    from gangplan.aggregate import _CapPairs, _neighbourhood

    rng = random.Random(seed)
    caps = {
        (r, b): rng.randint(1, 6)
        for r in rng.sample(range(30), rng.randint(1, 8))
        for b in sorted(rng.sample(range(25), rng.randint(1, 20)))
    }
    hinted = {key: rng.choice([0, 1, 4]) for key in rng.sample(sorted(caps), rng.randint(0, len(caps)))}
    limit = rng.randint(1, 80)
    pairs = _CapPairs(*(np.array(c, dtype=np.int64) for c in zip(*((r, b, cap) for (r, b), cap in caps.items()))))
    kept = _neighbourhood(None, pairs, hinted, limit)  # type: ignore[arg-type]
    roles = {r for r, _ in caps}
    share = max(2, limit // len(roles))
    assert all(caps[key] == cap for key, cap in kept.items())
    for r in roles:
        mine = [(b, cap) for (s, b), cap in caps.items() if s == r]
        hint = {b for b, _ in mine if hinted.get((r, b), 0) > 0}
        others = sorted((b for b, _ in mine if b not in hint), key=lambda b: (-caps[r, b], b))
        expected = hint | set(others[: max(0, share - len(hint))])
        assert {b for (s, b) in kept if s == r} == expected


def test_the_bucket_path_shares_its_time_as_documented(cluster: Snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """planner._at_scale and README: the solver starts from the better of several greedy orders,
    each charged 0.6 µs a (role, node) pair; objective 1 on buckets gets 75% of the budget that
    leaves, the later terms at most the other 25% less the estimated cost of building their
    node-level model (8e-5 s a pair it keeps), which runs only with twice that to search; the
    deterministic time reported includes the searches'."""
    import gangplan.cpsat as cpsat
    import gangplan.planner as planner
    from gangplan import aggregate
    from gangplan.stages import SolveResult

    from spies import recording

    starts: list[tuple[Assignment, int]] = []
    buckets: list[float] = []
    outcomes: list[aggregate.AggregateResult] = []
    polishes: list[tuple[float, int, float]] = []  # time limit, pairs kept, deterministic time
    solve_buckets, solve_cpsat = aggregate.solve_buckets, cpsat.solve_cpsat

    def bucket_spy(*args: Any, **kwargs: Any) -> aggregate.AggregateResult:
        buckets.append(kwargs["time_limit"])
        outcomes.append(solve_buckets(*args, **kwargs))
        return outcomes[-1]

    def polish_spy(*args: Any, **kwargs: Any) -> SolveResult[Assignment]:
        result = solve_cpsat(*args, **kwargs)
        polishes.append((kwargs["time_limit"], candidate_count(args[0]), result.deterministic_time))
        return result

    monkeypatch.setattr(planner, "lexicographic_greedy", recording(planner.lexicographic_greedy, starts))
    monkeypatch.setattr(aggregate, "solve_buckets", bucket_spy)
    monkeypatch.setattr(cpsat, "solve_cpsat", polish_spy)
    result = plan(cluster, Options(time_limit=10))
    assert verify(cluster, result.placements, result.topology_levels()).ok
    pairs = candidate_count(build_problem(cluster))
    ((_, passes),) = starts
    budget = 10 - pairs * 1.5e-6 - passes * pairs * 0.6e-6
    (limit,) = buckets
    assert limit == pytest.approx(0.75 * budget)
    searched = outcomes[0].solve.deterministic_time + sum(p[2] for p in polishes)
    assert result.solver.deterministic_time >= round(searched, 3) > 0
    assert polishes  # on this cluster the later terms are searched
    for polish, kept, _ in polishes:
        build = kept * 8e-5
        assert polish + build <= 0.25 * budget + 1e-9 and polish >= build
    # With building the model estimated at 70% of the time left for the later terms, there is
    # not twice that to search: they are not searched.
    kept = polishes[0][1]
    remaining = polishes[0][0] + kept * 8e-5
    monkeypatch.setattr(planner, "SECONDS_PER_POLISHED_PAIR", 0.7 * remaining / kept)
    polishes.clear()
    again = plan(cluster, Options(time_limit=10))
    assert not polishes and "later terms searched" not in again.solver.note


def test_a_bound_looser_than_every_job_group_placed_changes_no_gap(cluster: Snapshot, monkeypatch: pytest.MonkeyPatch) -> None:
    """planner._bucket_proof and README: each stage's gap is taken against the tightest bound
    known, the bucket models' where the plan reaches their earlier stages and the knapsack's
    where that is tighter, and never more than the most the stage could be (every JobGroup of
    its level placed). Bounds from the models and the knapsack looser than that (10**15), or
    none at all, give the same plan, gap and term bounds."""
    from gangplan import aggregate
    from gangplan.stages import StageResult

    solve_buckets, cluster_bound = aggregate.solve_buckets, aggregate.cluster_bound

    def bounded(bound: int | None) -> Plan:
        def loosened(*args: Any, **kwargs: Any) -> aggregate.AggregateResult:
            found = solve_buckets(*args, **kwargs)
            monkeypatch.setattr(aggregate, "cluster_bound", lambda *a, **k: bound)  # for the proof only

            def at(stages: list[StageResult]) -> list[StageResult]:
                return [StageResult(s.terms, "FEASIBLE", s.value, None if bound is None else bound) for s in stages]

            solve = SolveResult(found.solve.assignment, "FEASIBLE", at(found.solve.stages), deterministic_time=found.solve.deterministic_time)
            return aggregate.AggregateResult(solve, found.buckets, found.whole, found.on_nodes, at(found.upper))

        monkeypatch.setattr(aggregate, "cluster_bound", cluster_bound)
        monkeypatch.setattr(aggregate, "solve_buckets", loosened)
        return plan(cluster, Options(time_limit=3))

    none, loosely = bounded(None), bounded(10**15)
    assert verify(cluster, loosely.placements, loosely.topology_levels()).ok
    assert loosely.placements == none.placements and loosely.solver.gap == none.solver.gap is not None
    assert loosely.solver.objective == none.solver.objective


def test_the_cluster_knapsack_cut_short_still_bounds_a_real_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cluster_bound`` is "valid for the whole problem at any size" even when its search stops
    at CLUSTER_BOUND_LIMIT before proving its optimum: what it returns must be the search's
    bound, never the best knapsack it found. Here 24 one-pod gangs of 30 to 99 GPUs and a node
    of half their GPUs (a subset sum); at 0.1 ms of deterministic time CP-SAT (9.x, one
    worker) stops with a solution below the optimum, which a real plan beats."""
    import random

    import gangplan.aggregate as aggregate
    from gangplan.stages import stage_objective, stage_terms

    rng = random.Random(0)
    sizes = [rng.randint(30, 99) for _ in range(24)]
    snapshot = Snapshot(
        nodes=(Node("n0", {}, {"cpu": 10**6, GPU: sum(sizes) // 2, "pods": 1000}),),
        pods=tuple(
            Pod("default", f"g{i}-0", labels={"scheduling.x-k8s.io/pod-group": f"g{i}"},
                containers=(Container("main", {"cpu": 1000, GPU: s}),))
            for i, s in enumerate(sizes)
        ),
        pod_groups=tuple(PodGroup("default", f"g{i}", PodGroupAPI.GODEL, min_member=1) for i in range(len(sizes))),
    )
    problem = build_problem(snapshot)
    stages = stage_terms([t for t in objective_terms(problem) if t.primary])
    real = plan(snapshot, Options())
    assert verify(snapshot, real.placements, real.topology_levels()).ok
    placed = {g.key for g in real.groups if g.placed}
    chosen = {j for j, jg in enumerate(problem.job_groups) if jg.key in placed}
    assert chosen
    value = stage_objective(stages[0], lambda t: sum(c for j, c in t.job_groups.items() if j in chosen))
    monkeypatch.setattr(aggregate, "CLUSTER_BOUND_LIMIT", 0.0001)
    bound = aggregate.cluster_bound(problem, stages, [])
    assert bound is None or bound >= value


def test_the_model_one_level_up_pools_the_level_above_the_tors_and_the_tor_model_has_its_confined_cuts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """README: objective 1 is first solved one topology level up (a bucket per miniPod over
    tors; here a zone over racks), and up to CONFINED_CUTS_UP_TO counts the tor model repeats
    its cuts on the node sets some roles are confined to."""
    import gangplan.aggregate as aggregate

    nodes = tuple(Node(f"n{i}", {"zone": "a", "rack": f"r{i // 2}", "kind": "ab"[i % 2]}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(4))
    pods = tuple(
        Pod("default", f"g{g}-{p}", labels={"scheduling.x-k8s.io/pod-group": f"g{g}"},
            containers=(Container("main", {"cpu": 1000, GPU: 2}),), node_selector={"kind": "a"} if g else {})
        for g in range(2) for p in range(2)
    )
    groups = tuple(PodGroup("default", f"g{g}", PodGroupAPI.GODEL, min_member=2) for g in range(2))
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups), levels=("zone", "rack"))
    levels: list[int | None] = []
    flags: list[bool] = []
    pool, room = aggregate.make_buckets, aggregate._bucket_room

    def pooled(problem: Problem, *, by_roles: bool = False, level: int | None = None) -> aggregate.Buckets:
        found = pool(problem, by_roles=by_roles, level=level)
        levels.append(found.level)
        return found

    def cut(*args: object, confined: bool, whole_node: bool = True) -> object:
        if whole_node:  # the tor model's; the model one level up has no whole-node cuts
            flags.append(confined)
        return room(*args, confined=confined, whole_node=whole_node)  # type: ignore[arg-type]

    monkeypatch.setattr(aggregate, "make_buckets", pooled)
    monkeypatch.setattr(aggregate, "_bucket_room", cut)
    monkeypatch.setattr(aggregate, "LIGHT_PRESOLVE_FROM", -1)
    outcome = aggregate.solve_buckets(
        problem, objective_terms(problem), Assignment({}, frozenset()), time_limit=5, workers=1, seed=0, tuning=Tuning()
    )
    assert outcome.buckets.level == 1 and outcome.upper
    assert 0 in levels  # zones, one level above the racks
    assert flags == [True]


def test_a_gang_counted_once_for_the_whole_cluster_may_spread_over_its_domains(monkeypatch: pytest.MonkeyPatch) -> None:
    """The model one level up counts a gang not in detail once for the whole cluster, within
    the room of all its domains: every real plan is a solution of it, so its bound holds.
    Here gang a (two 3-GPU pods, the higher priority) needs both zones' 4-GPU nodes, and is
    not in detail (UPPER_DETAIL 0 keeps only gang b, the largest): the first stage's bound
    must still count it placed."""
    import gangplan.aggregate as aggregate
    from gangplan.aggregate import _scarce_need, _upper
    from gangplan.stages import stage_objective, stage_terms

    nodes = tuple(Node(f"n{i}", {"zone": z, "rack": f"r{i}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i, z in enumerate("xy"))
    pods = tuple(
        Pod("default", f"{name}-{p}", labels={"scheduling.x-k8s.io/pod-group": name},
            containers=(Container("main", {"cpu": 1000, GPU: gpus}),), priority=priority)
        for name, gpus, priority in (("a", 3, 100), ("b", 4, 10)) for p in range(2)
    )
    groups = tuple(PodGroup("default", name, PodGroupAPI.SCHEDULER_PLUGINS, min_member=2) for name in "ab")
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups), levels=("zone", "rack"))
    assert [level for level in problem.priority_levels] == [100, 10]
    a, b = (next(g for g, spec in enumerate(problem.gangs) if spec.key == f"default/{n}") for n in "ab")
    gpu = problem.resources.index(GPU)
    assert _scarce_need(problem, b, gpu) > _scarce_need(problem, a, gpu)
    monkeypatch.setattr(aggregate, "UPPER_DETAIL", 0)
    terms = [t for t in objective_terms(problem) if t.primary]
    stages, _, _ = _upper(problem, terms, Assignment({}, frozenset()), 0, gpu, time_limit=5, workers=1, seed=0, reporter=None, tuning=Tuning())
    first = stage_terms(terms)[0]
    placed_a = stage_objective(first, lambda t: t.job_groups.get(problem.gangs[a].job_group, 0))
    assert placed_a > 0
    assert stages[0].bound is not None and stages[0].bound >= placed_a


def test_gangs_in_detail_and_gangs_counted_once_share_the_clusters_room(monkeypatch: pytest.MonkeyPatch) -> None:
    """README: one level up, the gangs not in detail share the cluster's room, with the gangs in
    detail wherever those are. Gang d (two 4-GPU pods, in detail) needs both zones' 4-GPU
    nodes, gang n (one 3-GPU pod) is counted once: the cluster's 8 GPUs hold one of them, so
    the first stage's bound is not both."""
    import gangplan.aggregate as aggregate
    from gangplan.aggregate import _upper
    from gangplan.stages import stage_objective, stage_terms

    nodes = tuple(Node(f"n{i}", {"zone": z, "rack": f"r{i}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i, z in enumerate("xy"))
    pods = tuple(
        Pod("default", f"{name}-{p}", labels={"scheduling.x-k8s.io/pod-group": name}, containers=(Container("main", {"cpu": 1000, GPU: gpus}),))
        for name, gpus, count in (("d", 4, 2), ("n", 3, 1)) for p in range(count)
    )
    groups = (PodGroup("default", "d", PodGroupAPI.GODEL, min_member=2), PodGroup("default", "n", PodGroupAPI.GODEL, min_member=1))
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups), levels=("zone", "rack"))
    monkeypatch.setattr(aggregate, "UPPER_DETAIL", 0)  # only the largest gang, d, in detail
    terms = [t for t in objective_terms(problem) if t.primary]
    gpu = problem.resources.index(GPU)
    stages, _, _ = _upper(problem, terms, Assignment({}, frozenset()), 0, gpu, time_limit=5, workers=1, seed=0, reporter=None, tuning=Tuning())
    both = stage_objective(stage_terms(terms)[0], lambda t: sum(t.job_groups.values()))
    assert len(problem.job_groups) == 2
    assert stages[0].bound is not None and stages[0].bound < both


def test_at_a_level_the_model_one_level_up_solved_its_job_groups_go_on_nodes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """README: the upper model's JobGroups are placed by greedy first, the rest of the plan after
    them. One priority level, solved, and the model chose gang b, second in queue order and no
    tighter than a (a quarter of the four nodes' room): every greedy pass takes b before a."""
    nodes = tuple(Node(f"n{i}", {"zone": "a", "rack": f"r{i // 2}"}, {"cpu": 8000, GPU: 4, "pods": 110}) for i in range(4))
    pods = tuple(
        Pod("default", f"{name}-0", labels={"scheduling.x-k8s.io/pod-group": name}, containers=(Container("main", {"cpu": 1000, GPU: 4}),))
        for name in "ab"
    )
    groups = tuple(
        PodGroup("default", name, PodGroupAPI.GODEL, min_member=1, creation_timestamp=f"2024-01-01T00:00:0{i}Z") for i, name in enumerate("ab")
    )
    problem = build_problem(Snapshot(nodes=nodes, pods=pods, pod_groups=groups), levels=("zone", "rack"))
    a, b = (next(j for j, jg in enumerate(problem.job_groups) if jg.key.endswith(f"/{name}")) for name in "ab")
    assert a < b
    terms = [t for t in objective_terms(problem) if t.primary]
    orders, chosen = _realised(monkeypatch, problem, terms, frozenset({b}))
    assert orders and all(order.index(b) < order.index(a) for order in orders)
    assert chosen is not None and b in chosen.placed
