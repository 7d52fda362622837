"""The CP-SAT model: integer pod counts per (role, node), one model for all JobGroups.

Lexicographic objectives are solved in stages. Consecutive terms are packed into one
weighted objective while their combined range stays far inside int64; after each stage
its objective is held at the value reached, and the next stage starts from that solution.
The greedy plan is the first stage's complete hint, so every stage starts feasible.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .sat import cp_model

from .errors import SolverError
from .objective import Assignment, Counts, Term, candidate_domains, used_domains
from .problem import GangTopology, Problem
from .stages import Reporter, Solution, SolveResult, StageResult, Tuning, stage_objective, stage_terms, stage_upper

DETERMINISTIC_WORKERS = 4
# Deterministic seconds per worker a stage's presolve takes per model variable, about (1 s for
# the 48,759 variables of the bucket model at 2,048 nodes); a later stage needs at least that.
PRESOLVE_PER_VARIABLE = 2e-5
# An optional solve (polishing a plan that stands without it) starts only with this many
# times its presolve estimate: the node-level polish at 2,048 and 8,192 nodes had 1.2 and
# 1.6 times it and returned nothing, or the plan it was given.
OPTIONAL_MARGIN = 2.0


def parse_parameters(text: str) -> tuple[tuple[str, str], ...]:
    """``"key:value key:value"`` as CP-SAT parameters of one value each; ValueError naming the
    first item that is not one."""
    known = cp_model.CpSolver().parameters
    found = []
    for item in text.split():
        key, _, value = item.partition(":")
        try:
            _set(known, key, value)
        except (AttributeError, ValueError, TypeError):
            raise ValueError(f"{item!r} is not key:value for a CP-SAT parameter of one value") from None
        found.append((key, value))
    return tuple(found)


def _set(parameters: Any, key: str, value: str) -> None:
    kind = type(getattr(parameters, key))
    if kind not in (bool, int, float, str) or not value:
        raise ValueError(key)
    setattr(parameters, key, value == "true" if kind is bool else kind(value))


def add_quorum(
    model: cp_model.CpModel,
    problem: Problem,
    placed: list[cp_model.IntVar],
    role_vars: dict[int, list[cp_model.IntVar]],
) -> None:
    """All or nothing (seed 000): a placed JobGroup has every member at minMember, each task at
    its minimum and minResources met; an unplaced one has no pods. ``role_vars`` holds each
    role's pod counts, per node or per bucket."""
    for j, jg in enumerate(problem.job_groups):
        if not jg.feasible:
            model.add(placed[j] == 0)
            continue
        for g in jg.gangs:
            gang = problem.gangs[g]
            for r in gang.roles:
                if role_vars.get(r):
                    model.add(sum(role_vars[r]) <= problem.roles[r].count * placed[j])
            if gang.need:
                model.add(sum(v for r in gang.roles for v in role_vars.get(r, ())) >= gang.need * placed[j])
            for task in gang.tasks:
                if task.need:
                    model.add(sum(v for r in task.roles for v in role_vars.get(r, ())) >= task.need * placed[j])
            for k, deficit in enumerate(gang.min_resources):
                if deficit:
                    added = [problem.roles[r].request[k] * v for r in gang.roles for v in role_vars.get(r, ())]
                    model.add(sum(added) >= deficit * placed[j])
        if all(problem.gangs[g].met for g in jg.gangs):
            model.add(placed[j] == 1)


def add_kept_apart(model: cp_model.CpModel, problem: Problem, on_node: list[tuple[int, cp_model.IntVar]]) -> None:
    """One node's pod counts ``on_node`` (role, count) hold no more than their cap of the roles
    one term of their PodGroup keeps apart (each role alone is capped by its bounds)."""
    together: dict[str, list[cp_model.IntVar]] = {}
    caps: dict[str, int] = {}
    for r, var in on_node:
        if apart := problem.roles[r].apart:
            together.setdefault(apart, []).append(var)
            caps[apart] = problem.roles[r].apart_cap
    for apart, held in together.items():
        if len(held) > 1:
            model.add(sum(held) <= caps[apart])


def _topology(
    model: cp_model.CpModel,
    problem: Problem,
    count: dict[tuple[int, int], cp_model.IntVar],
    upper: dict[tuple[int, int], int],
) -> tuple[dict[tuple[int, int, int], cp_model.IntVar], Callable[[], None]]:
    """uses[gang, level, domain]: whether the gang has pods in that domain (seed 003), and
    what adds their constraints.

    A required level allows one domain; spans and sort-rank terms count these booleans, and
    two gangs kept apart there (``Problem.exclusive``) share none.
    """
    uses: dict[tuple[int, int, int], cp_model.IntVar] = {}
    # Per (gang, level): its terms, its (role, node) pairs per domain, and its domains' booleans.
    links: list[tuple[GangTopology, int, dict[int, list[tuple[int, int]]], dict[int, cp_model.IntVar]]] = []
    for g, spec in enumerate(problem.gangs):
        topo = spec.topology
        if topo is None or not problem.job_groups[spec.job_group].feasible:
            continue
        for level in sorted({*topo.spans_levels, *topo.ranks}):
            members: dict[int, list[tuple[int, int]]] = {}
            for r in spec.roles:
                for n in problem.roles[r].nodes.tolist():
                    d = problem.domain(level, n)
                    if d is not None:
                        members.setdefault(d, []).append((r, n))
            domains = {}
            for d in candidate_domains(problem, g, level):
                domains[d] = uses[g, level, d] = model.new_bool_var(f"uses[{g},{level},{d}]")
            links.append((topo, level, members, domains))

    def constrain() -> None:
        for topo, level, members, domains in links:
            for d, var in domains.items():
                keys = members.get(d, [])
                model.add(sum(count[k] for k in keys) <= sum(upper[k] for k in keys) * var)
                if (level, d) in topo.held:
                    model.add(var == 1)
            if level in topo.required and members:
                model.add(sum(domains[d] for d in members) <= 1)
        if problem.exclusive:
            add_exclusive(model, problem, uses)

    return uses, constrain


def add_exclusive(
    model: cp_model.CpModel, problem: Problem, uses: Mapping[tuple[int, int, int], cp_model.IntVar]
) -> None:
    """Gangs kept apart at a level (``Problem.exclusive_cliques``) share none of its domains:
    in each, at most one of their ``uses`` booleans (gang, level, domain) is set."""
    cliques = problem.exclusive_cliques()
    levels = {level for level, _ in cliques}
    by_gang: dict[tuple[int, int], dict[int, cp_model.IntVar]] = {}
    for (g, level, d), var in uses.items():
        if level in levels:  # not the spans' node-level booleans, one per candidate node
            by_gang.setdefault((g, level), {})[d] = var
    for level, gangs in cliques:
        in_domain: dict[int, list[cp_model.IntVar]] = {}
        for g in gangs:
            for d, var in by_gang.get((g, level), {}).items():
                in_domain.setdefault(d, []).append(var)
        for d in sorted(in_domain):
            if len(in_domain[d]) > 1:
                model.add(sum(in_domain[d]) <= 1)


class _Progress(cp_model.CpSolverSolutionCallback):
    def __init__(self, reporter: Reporter, start: float) -> None:
        super().__init__()
        self.reporter, self.start = reporter, start

    def on_solution_callback(self) -> None:
        self.reporter.solution(self.objective_value, self.best_objective_bound, time.perf_counter() - self.start)


def solve_cpsat(
    problem: Problem,
    terms: list[Term],
    hint: Assignment,
    *,
    time_limit: float,
    workers: int = 1,
    seed: int = 0,
    reporter: Reporter | None = None,
    fixed: frozenset[int] | None = None,
    tuning: Tuning,
    symmetry: bool = True,
    unreached: bool = True,
) -> SolveResult[Assignment]:
    """Optimise ``terms`` lexicographically. ``workers == 1`` is deterministic: the limit is
    CP-SAT's deterministic time; with more workers it is wall time.

    ``symmetry=False`` for one JobGroup on a whole cluster (explain's questions, ``--policy
    ordered``'s steps): CP-SAT's presolve then finds no symmetry among alike nodes, which it
    does in time its deterministic clock does not count and that grows with the cube of their
    number (a 2,722-variable model on 1,024 alike nodes: 2.1 s of wall for 0.003 deterministic
    s; 19 s at 2,048 nodes, 192 s at 4,096).

    With ``fixed``, exactly those JobGroups are placed and only the terms after objective 1
    are optimised (polishing a plan found elsewhere). ``unreached=False``: no gap is worked
    out for stages the time did not reach (``--policy ordered``'s steps, whose gaps nobody
    reads: it rebuilt each step's objective, 20% of a step's wall time at 8,192 nodes)."""
    start = time.perf_counter()
    model = cp_model.CpModel()
    count: dict[tuple[int, int], cp_model.IntVar] = {}
    upper: dict[tuple[int, int], int] = {}
    for r, role in enumerate(problem.roles):
        if not problem.job_groups[problem.gangs[role.gang].job_group].feasible:
            continue
        for node, cap in zip(role.nodes.tolist(), role.caps.tolist()):
            count[r, node] = model.new_int_var(0, cap, f"count[{r},{node}]")
            upper[r, node] = cap
    placed = [model.new_bool_var(f"placed[{j}]") for j in range(len(problem.job_groups))]
    by_node: dict[int, list[tuple[int, cp_model.IntVar]]] = {}
    for (r, node), var in count.items():
        by_node.setdefault(node, []).append((r, var))

    role_vars: dict[int, list[cp_model.IntVar]] = {}
    for (r, _), var in count.items():
        role_vars.setdefault(r, []).append(var)
    opened = {node: model.new_bool_var(f"opened[{node}]") for node in by_node if problem.idle[node]}
    uses, topology = _topology(model, problem, count, upper)

    def constrain() -> None:
        add_quorum(model, problem, placed, role_vars)
        for node, items in by_node.items():
            room = problem.free[node]
            for k, have in enumerate(room):
                worst = sum(problem.roles[r].request[k] * upper[r, node] for r, _ in items)
                if worst > have:
                    model.add(sum(problem.roles[r].request[k] * var for r, var in items) <= have)
            add_kept_apart(model, problem, items)
            if node in opened:
                most = sum(upper[r, node] for r, _ in items)
                model.add(sum(var for _, var in items) <= most * opened[node])
        topology()
        if fixed is not None:
            for j, var in enumerate(placed):
                model.add(var == (j in fixed))

    def expression(term: Term) -> cp_model.LinearExprT:
        parts: list = [coef * placed[j] for j, coef in term.job_groups.items()]
        if term.pods:
            parts.append(term.pods * sum(count.values()))
        parts.extend(coef * sum(role_vars.get(r, ())) for r, coef in term.roles.items())
        if term.opened:
            parts.append(term.opened * sum(opened.values()))
        parts.extend(coef * var for t, var in uses.items() if (coef := term.uses.get(t, 0)))
        return sum(parts)

    def set_hint(assignment: Assignment) -> None:
        hint_counts(model, count, placed, assignment.counts, assignment.placed)
        used = {n for (r, n), c in assignment.counts.items() if c}
        occupied = used_domains(problem, assignment.counts)
        hint = model.proto.solution_hint  # in bulk, as hint_counts: add_hint was a third of an ordered step
        hint.vars.extend([var.index for var in opened.values()] + [var.index for var in uses.values()])
        hint.values.extend([int(node in used) for node in opened] + [int(t in occupied) for t in uses])

    if fixed is not None:
        terms = [t for t in terms if not t.primary]

    def extract(solver: cp_model.CpSolver) -> Assignment:
        return Assignment(*read_counts(solver, count, placed))

    result = staged_solve(
        model, terms, expression, set_hint, extract, hint,
        time_limit=time_limit, workers=workers, seed=seed, reporter=reporter, start=start,
        optional=fixed is not None, tuning=tuning, constrain=constrain, symmetry=symmetry, unreached=unreached,
    )
    result.variables = len(count) + len(placed) + len(opened)
    return result


def hint_counts(
    model: cp_model.CpModel,
    count: dict[tuple[int, int], cp_model.IntVar],
    placed: list[cp_model.IntVar],
    counts: Counts,
    placed_groups: frozenset[int],
) -> None:
    """A fresh hint for the pod counts and placed booleans (node-level or bucket-level),
    written in bulk: ``add_hint`` crosses into C++ twice per variable (2.7 s at 8,192 nodes)."""
    model.clear_hints()
    hint = model.proto.solution_hint
    hint.vars.extend([var.index for var in count.values()] + [var.index for var in placed])
    hint.values.extend([counts.get(key, 0) for key in count] + [int(j in placed_groups) for j in range(len(placed))])


def read_counts(
    solver: cp_model.CpSolver, count: dict[tuple[int, int], cp_model.IntVar], placed: list[cp_model.IntVar]
) -> tuple[dict[tuple[int, int], int], frozenset[int]]:
    """The solver's nonzero pod counts and placed JobGroups."""
    return (
        {key: v for key, var in count.items() if (v := solver.value(var))},
        frozenset(j for j, var in enumerate(placed) if solver.boolean_value(var)),
    )


def _hinted_value(model: cp_model.CpModel) -> int | None:
    """The objective's value at the model's hint (None when the hint leaves a term unset)."""
    proto = model.proto
    # Arrays, not a dict of the whole hint per call (a tenth of an ordered step at 8,192 nodes).
    known, hinted = np.zeros(len(proto.variables), dtype=bool), np.zeros(len(proto.variables), dtype=np.int64)
    where = np.asarray(proto.solution_hint.vars, dtype=np.int64)
    known[where], hinted[where] = True, np.asarray(proto.solution_hint.values, dtype=np.int64)
    refs = np.asarray(proto.objective.vars, dtype=np.int64)
    index = np.where(refs >= 0, refs, -refs - 1)
    if not known[index].all():
        return None
    values = np.where(refs >= 0, hinted[index], 1 - hinted[index]).tolist()
    total = proto.objective.offset + sum(coef * value for coef, value in zip(proto.objective.coeffs, values))
    return round(proto.objective.scaling_factor * total) if proto.objective.scaling_factor else round(total)


@dataclass(frozen=True, slots=True)
class Pace:
    """Wall seconds a deterministic solve takes, as the budget counts them: ``per_deterministic``
    per second of CP-SAT's deterministic time, plus ``per_variable`` per model variable for the
    presolve and set-up that deterministic time does not show."""

    per_deterministic: float = DETERMINISTIC_WORKERS
    per_variable: float = 0.0

    def cost(self, deterministic_time: float, variables: int) -> float:
        return self.per_deterministic * deterministic_time + self.per_variable * variables

    def too_short(self, budget: float, variables: int, margin: float = 1.0) -> bool:
        # Presolve does not stop at the deterministic limit: a stage this short would only
        # overrun it (at 2,048 nodes, 4x on a 0.26 s stage).
        return budget < margin * max(self.per_deterministic * PRESOLVE_PER_VARIABLE, 2 * self.per_variable) * variables


def stage_budget(remaining: float, index: int, count: int) -> float:
    """A stage's share of the time left: 70%, all of it for the last stage."""
    return remaining if index == count - 1 else remaining * 0.7


def staged_solve(
    model: cp_model.CpModel,
    terms: list[Term],
    expression: Callable[[Term], cp_model.LinearExprT],
    set_hint: Callable[[Solution], None],
    extract: Callable[[cp_model.CpSolver], Solution],
    hint: Solution,
    *,
    time_limit: float,
    workers: int,
    seed: int,
    reporter: Reporter | None,
    start: float,
    light_presolve: bool = False,
    ignore_subsolvers: tuple[str, ...] = (),
    refine: Callable[[Solution, float], Solution | None] | None = None,
    learn: Callable[[Solution, float], bool] | None = None,
    pace: Pace = Pace(),
    interleaved: int = DETERMINISTIC_WORKERS,
    optional: bool = False,
    one_search: bool = False,
    overhead: Callable[[], float] | None = None,
    known: Callable[[int, list[int]], int | None] | None = None,
    tuning: Tuning,
    constrain: Callable[[], None] | None = None,
    symmetry: bool = True,
    unreached: bool = True,
) -> SolveResult[Solution]:
    """Optimise ``terms`` lexicographically on ``model``, stage by stage, each stage starting
    from the last one's solution; shared by the node-level and the domain-level models.

    ``refine(solution, left)`` turns a stage's solution into a real one at least as good on
    every stage (for a relaxation: put on nodes and topped up), or returns None; ``left`` is
    what the stage's budget has left, which its own small searches keep within. Then
    ``learn(solution, left)`` may add constraints every real solution meets that this one
    breaks (and say so), within what is left after refine, and the stage is solved again
    within its budget.

    ``optional``: the caller has a plan already, so even the first stage is not started
    without ``OPTIONAL_MARGIN`` times the time presolve takes. ``one_search``: only the first
    stage that needs a search is searched, with all the time (stages the start already
    maximises cost nothing). ``overhead``: seconds charged so far by ``refine`` and
    ``learn`` (and ``known``), which the budget counts too. ``known(index, values)``: a bound on
    stage ``index`` for every solution reaching ``values`` at the stages before it, from
    elsewhere (a looser model, quick to solve); a start that reaches it is proven there without
    a search, and the search goes to a stage that needs one. ``constrain()`` adds the model's
    constraints, once, before the first is needed: deciding that no stage has the time to be
    searched needs only the variables, the hint and the objective (a node-level polish at
    2,048 nodes spent 0.9 s building constraints it then did not search)."""
    pending = [constrain] if constrain is not None else []

    def hold(bound: Any) -> None:
        while pending:
            pending.pop()()
        if bound is not None:
            model.add(bound)

    solver = cp_model.CpSolver()
    deterministic = workers <= 1
    solver.parameters.random_seed = seed
    if tuning.log is not None:
        solver.parameters.log_search_progress = True
        solver.log_callback = tuning.log
    solver.parameters.catch_sigint_signal = False  # the CLI handles Ctrl-C itself
    if deterministic:
        # Interleaved search runs the portfolio (LNS included) in fixed batches: deterministic,
        # whatever the machine, and far better than one plain search at cluster scale.
        solver.parameters.num_workers = interleaved
        solver.parameters.interleave_search = True
        solver.parameters.interleave_batch_size = interleaved  # small batches keep to the limit
    else:
        solver.parameters.num_workers = workers
    if not symmetry:
        solver.parameters.symmetry_level = 0  # see solve_cpsat
    for key, setting in tuning.parameters:
        _set(solver.parameters, key, setting)
    solver.parameters.log_to_stdout = False  # stdout carries only the output, whatever was asked
    for name in ignore_subsolvers:
        solver.parameters.ignore_subsolvers.append(name)
    if light_presolve:
        # Large models: probing and repeated presolve rounds cost more than they save.
        solver.parameters.cp_model_probing_level = 0
        solver.parameters.max_presolve_iterations = 1

    stages = stage_terms(terms)
    result: SolveResult[Solution] = SolveResult(None, "UNKNOWN")
    current = hint
    all_optimal = True
    spent = 0.0
    for index, stage in enumerate(stages):
        remaining = time_limit - (spent if deterministic else time.perf_counter() - start)
        objective = stage_objective(stage, expression)
        model.maximize(objective)
        set_hint(current)
        start_value = _hinted_value(model)
        largest = stage_upper(stage)
        most: int | None = largest
        if known is not None and start_value is not None and start_value < largest:
            before = overhead() if overhead is not None else 0.0
            most = known(index, [st.value for st in result.stages if st.value is not None])
            spent += (overhead() - before) if deterministic and overhead is not None else 0.0
        if start_value is not None and most is not None and start_value >= most:
            # The start already reaches the most the stage can be: nothing to search.
            result.stages.append(StageResult([t.name for t in stage], "OPTIMAL", start_value, start_value))
            result.assignment = current
            hold(objective >= start_value)
            continue
        if remaining <= 0.0:
            all_optimal = False
            break
        budget = remaining if one_search else stage_budget(remaining, index, len(stages))
        if deterministic and (index or optional) and pace.too_short(
            budget, len(model.proto.variables), OPTIONAL_MARGIN if optional and not index else 1.0
        ):
            all_optimal = False
            break
        stage_start, stage_spent = time.perf_counter(), 0.0
        answer: tuple[str, int, int, Solution] | None = None  # the last solve that found a solution
        cut = False  # whether what was learnt since cuts that solution off
        while True:
            set_hint(current)
            left = budget - (stage_spent if deterministic else time.perf_counter() - stage_start)
            variables = len(model.proto.variables)
            if answer is not None and (left <= 0.0 or (deterministic and pace.too_short(left, variables))):
                break  # no time to solve again after learning: the last answer stands
            if deterministic:
                # The budget is in wall seconds as the pace estimates them (measured, see README).
                solver.parameters.max_deterministic_time = max(0.0, left - pace.cost(0.0, variables)) / pace.per_deterministic
                solver.parameters.max_time_in_seconds = float("inf")
            else:
                solver.parameters.max_time_in_seconds = max(0.0, left)  # CP-SAT rejects a negative one
            hold(None)
            if reporter is not None:
                reporter.stage(", ".join(t.name for t in stage), index, len(stages))
                status = solver.solve(model, _Progress(reporter, start))
            else:
                status = solver.solve(model)
            used = solver.response_proto.deterministic_time
            used = pace.cost(used, variables) if deterministic else used
            spent += used
            stage_spent += used
            name = solver.status_name(status)
            if status in (cp_model.MODEL_INVALID, cp_model.INFEASIBLE):
                raise SolverError(f"CP-SAT returned {name} on a model whose hint is feasible; this is a bug")
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                break
            value, bound = round(solver.objective_value), round(solver.best_objective_bound)
            # Learning only cuts off what no real solution does: an earlier solve's bound holds.
            bound = min(bound, answer[2]) if answer is not None else bound
            # A start the solver did not improve on is kept as it was: the solver's copy has
            # later-stage variables presolve was free to change (a lower JobGroup dropped, say).
            found = extract(solver) if _hinted_value(model) != value else current
            answer, cut = (name, value, bound, found), False
            if refine is None or found is current:
                break
            before = overhead() if overhead is not None else 0.0
            real = refine(found, budget - (stage_spent if deterministic else time.perf_counter() - stage_start))
            learnt = False
            if real is None and learn is not None:
                refined = overhead() - before if overhead is not None else 0.0
                left = budget - (stage_spent + refined if deterministic else time.perf_counter() - stage_start)
                learnt = left > 0.0 and learn(found, left)
            if deterministic and overhead is not None:
                spent += overhead() - before
                stage_spent += overhead() - before
            if real is not None:
                answer = (name, value, bound, real)
                break
            if not learnt:
                break
            cut = True
        if answer is not None and cut:
            # No solve replaced the solution learning cut off: neither it (it does not pack) nor
            # its value (no real plan may reach it) can stand; the stage keeps its start.
            reached = _hinted_value(model)
            answer = None if reached is None else ("FEASIBLE", reached, answer[2], current)
        if answer is None:
            result.stages.append(StageResult([t.name for t in stage], name, None, None))
            all_optimal = False
            break
        name, value, bound, found = answer
        # Proven means at its bound, whatever the status says: a solve stopped just at its proof
        # says FEASIBLE, and one stopped by a gap limit (a tuning parameter) says OPTIMAL.
        name = "OPTIMAL" if value >= bound else "FEASIBLE"
        result.stages.append(StageResult([t.name for t in stage], name, value, bound))
        if name != "OPTIMAL":
            all_optimal = False
            if result.gap is None and any(t.primary for t in stage):
                result.gap = abs(bound - value) / max(1, abs(bound), abs(value))
                result.gap_stage = result.stages[-1]
        current = found
        result.assignment = current
        hold(objective >= value)
        if one_search:
            all_optimal = False
            break
    if result.assignment is not None:
        result.status = "OPTIMAL" if all_optimal and len(result.stages) == len(stages) else "FEASIBLE"
    result.deterministic_time = spent
    result.wall_time = time.perf_counter() - start
    proven = {name for st in result.stages if st.status == "OPTIMAL" for name in st.terms}
    if result.gap is None and {t.name for t in terms if t.primary} <= proven:
        result.gap = 0.0  # every objective-1 stage was proven
    elif unreached and result.gap is None and result.assignment is not None:
        solved = sum(st.value is not None for st in result.stages)
        if bound_gap := _unreached_gap(model, stages[solved:], expression, set_hint, current):
            result.gap, result.gap_stage = bound_gap
    return result


def _unreached_gap(
    model: cp_model.CpModel,
    stages: list[list[Term]],
    expression: Callable[[Term], cp_model.LinearExprT],
    set_hint: Callable[[Any], None],
    current: Any,
) -> tuple[float, StageResult] | None:
    """The gap at the first objective-1 stage the time did not reach, against the most it
    could be (that stage's bound): without a search there, nothing better is known."""
    for stage in stages:
        if not any(t.primary for t in stage):
            return None
        model.maximize(stage_objective(stage, expression))
        set_hint(current)
        value = _hinted_value(model)
        largest = stage_upper(stage)
        if value is None:
            return None
        if value < largest:
            gap = (largest - value) / max(1, abs(largest), abs(value))
            return gap, StageResult([t.name for t in stage], "UNKNOWN", value, largest)
    return None
