"""The greedy placer: one JobGroup at a time in queue order, as a gang scheduler does.

It is the CP-SAT model's complete starting hint, the fallback when the solver finds
nothing better in time, and the baseline benchmarks compare against. Quorums are placed
first for every JobGroup in queue order; pods beyond minMember come in a second pass, so
they never cost a later group its quorum.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from .objective import Assignment
from .problem import Problem, Role


class _State:
    """Free capacity with an undo log, so a gang that does not fit leaves no trace."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.free = [list(v) for v in problem.free]
        self.counts: dict[tuple[int, int], int] = defaultdict(int)
        self.touched = [False] * len(problem.nodes)
        self.log: list[tuple[int, int, int, bool]] = []
        self.totals = [max(1, sum(a[k] for a in problem.allocatable)) for k in range(len(problem.resources))]

    def share(self, r: int) -> float:
        """Dominant share of one pod of role ``r``: how big it is, across resources."""
        request = self.problem.roles[r].request
        return max((w / t for w, t in zip(request, self.totals)), default=0.0)

    def fits(self, role: Role, node: int) -> int:
        room = self.free[node]
        best = role.count
        for want, have in zip(role.request, room):
            if want:
                best = min(best, have // want)
        return best

    def put(self, r: int, node: int, count: int) -> None:
        role = self.problem.roles[r]
        room = self.free[node]
        for k, want in enumerate(role.request):
            room[k] -= want * count
        self.counts[(r, node)] += count
        self.log.append((r, node, count, self.touched[node]))
        self.touched[node] = True

    def mark(self) -> int:
        return len(self.log)

    def undo(self, mark: int) -> None:
        while len(self.log) > mark:
            r, node, count, touched = self.log.pop()
            role = self.problem.roles[r]
            for k, want in enumerate(role.request):
                self.free[node][k] += want * count
            self.counts[(r, node)] -= count
            if not self.counts[(r, node)]:
                del self.counts[(r, node)]
            self.touched[node] = touched

    def placed_of(self, r: int) -> int:
        return sum(c for (role, _), c in self.counts.items() if role == r)


def place_pods(
    state: _State, r: int, wanted: int, candidates: Iterable[int] | None = None, ordered: bool = False
) -> int:
    """Place up to ``wanted`` pods of role ``r``: tightest nodes first, or first-fit in order."""
    problem = state.problem
    role = problem.roles[r]
    if candidates is None:
        nodes = list(role.nodes)
    else:
        allowed = set(role.nodes)
        nodes = [n for n in candidates if n in allowed]
    placed = 0
    if ordered:
        for node in nodes:
            take = min(state.fits(role, node), wanted - placed)
            if take > 0:
                state.put(r, node, take)
                placed += take
            if placed == wanted:
                break
        return placed
    while placed < wanted:
        best: tuple | None = None
        for node in nodes:
            fit = state.fits(role, node)
            if fit <= 0:
                continue
            take = min(fit, wanted - placed)
            opens = problem.idle[node] and not state.touched[node]
            leftover = tuple(
                (have - want * take) * 1.0 / max(1, a)
                for want, have, a in zip(role.request, state.free[node], problem.allocatable[node])
                if want
            )
            complete = take == wanted - placed
            key = (opens, not complete, 0 if complete else -take, max(leftover, default=0.0), node)
            if best is None or key < best[0]:
                best = (key, node, take)
        if best is None:
            break
        _, node, take = best
        state.put(r, node, take)
        placed += take
    return placed


def _place_quorum(state: _State, j: int) -> bool:
    problem = state.problem
    for g in problem.job_groups[j].gangs:
        gang = problem.gangs[g]
        chosen = _quorum_roles(state, g)
        if chosen is None:
            return False
        chosen.sort(key=lambda rt: -state.share(rt[0]))
        if not _place_gang(state, g, chosen):
            return False
        if not _meets_min_resources(state, g):
            allowed = allowed_nodes(state, g)
            for r in gang.roles:
                place_pods(state, r, problem.roles[r].count - state.placed_of(r), allowed)
                if _meets_min_resources(state, g):
                    break
            if not _meets_min_resources(state, g):
                return False
    return True


def _quorum_roles(state: _State, g: int) -> list[tuple[int, int]] | None:
    """How many pods of each role make the quorum: task minimums first, then the smallest pods."""
    problem = state.problem
    gang = problem.gangs[g]
    taken: dict[int, int] = defaultdict(int)
    for task in gang.tasks:
        left = task.need
        for r in sorted(task.roles, key=lambda r: (state.share(r), r)):
            take = min(left, problem.roles[r].count)
            taken[r] += take
            left -= take
        if left > 0:
            return None
    left = gang.need - sum(taken.values())
    # Smallest pods make a quorum most easily; the biggest are then placed first.
    for r in sorted(gang.roles, key=lambda r: (state.share(r), r)):
        if left <= 0:
            break
        take = min(left, problem.roles[r].count - taken[r])
        taken[r] += take
        left -= take
    if left > 0:
        return None
    return [(r, n) for r, n in taken.items() if n]


def _fill(state: _State, chosen: list[tuple[int, int]], nodes: Iterable[int] | None, ordered: bool = False) -> bool:
    nodes = None if nodes is None else list(nodes)
    return all(place_pods(state, r, take, nodes, ordered) == take for r, take in chosen)


def _place_gang(state: _State, g: int, chosen: list[tuple[int, int]]) -> bool:
    """Godel's way: NodeGroups by the required key, NodeCircles by the preferred keys, by rank."""
    topo = state.problem.gangs[g].topology
    if not chosen:
        return True  # running members already make the quorum
    if topo is None:
        return _fill(state, chosen, None)
    for nodes in _node_groups(state.problem, g):
        mark = state.mark()
        if _place_in_circles(state, g, chosen, nodes):
            return True
        state.undo(mark)
    return False


def _candidates(problem: Problem, g: int) -> list[int]:
    return sorted({n for r in problem.gangs[g].roles for n in problem.roles[r].nodes})


def _node_groups(problem: Problem, g: int) -> list[list[int]]:
    topo = problem.gangs[g].topology
    assert topo is not None
    nodes = _candidates(problem, g)
    if not topo.required:
        return [nodes]
    groups: dict[tuple, list[int]] = defaultdict(list)
    for n in nodes:
        groups[tuple(problem.domain(level, n) for level in topo.required)].append(n)
    deepest_first = list(reversed(topo.required))

    def rank(key: tuple) -> tuple:
        by_level = dict(zip(topo.required, key))
        return tuple(topo.ranks[level][by_level[level]] for level in deepest_first)

    return [groups[key] for key in sorted(groups, key=rank)]


def _place_in_circles(state: _State, g: int, chosen: list[tuple[int, int]], nodes: list[int]) -> bool:
    problem = state.problem
    topo = problem.gangs[g].topology
    assert topo is not None
    if not topo.preferred:
        return _fill(state, chosen, nodes)
    for level in sorted(topo.preferred, reverse=True):
        circles: dict[int, list[int]] = defaultdict(list)
        for n in nodes:
            circles[problem.domain(level, n)].append(n)  # type: ignore[index]
        for d in sorted(circles, key=lambda d: topo.ranks[level][d]):
            mark = state.mark()
            if _fill(state, chosen, circles[d]):
                return True
            state.undo(mark)
    ordered = sorted(nodes, key=lambda n: (tuple(topo.ranks[lv][problem.domain(lv, n)] for lv in topo.preferred), n))  # type: ignore[index]
    return _fill(state, chosen, ordered, ordered=True)


def allowed_nodes(state: _State, g: int) -> list[int] | None:
    """Nodes a gang's further pods may use: inside the domains its required terms hold."""
    problem = state.problem
    topo = problem.gangs[g].topology
    if topo is None or not topo.required:
        return None
    roles = set(problem.gangs[g].roles)
    held = {level: d for level, d in topo.held if level in topo.required}
    for (r, n), c in state.counts.items():
        if c and r in roles:
            for level in topo.required:
                held.setdefault(level, problem.domain(level, n))  # type: ignore[arg-type]
    return [
        n for n in _candidates(problem, g)
        if all(problem.domain(level, n) == held.get(level, problem.domain(level, n)) for level in topo.required)
    ]


def _meets_min_resources(state: _State, g: int) -> bool:
    problem = state.problem
    gang = problem.gangs[g]
    if not any(gang.min_resources):
        return True
    added = [0] * len(problem.resources)
    for r in gang.roles:
        n = state.placed_of(r)
        for k, want in enumerate(problem.roles[r].request):
            added[k] += want * n
    return all(a >= m for a, m in zip(added, gang.min_resources))


def extend(problem: Problem, base: Assignment, j: int) -> Assignment:
    """``base`` plus JobGroup ``j`` placed greedily beside it, if it fits; else ``base``."""
    state = _State(problem)
    for (r, n), c in sorted(base.counts.items()):
        state.put(r, n, c)
    if not problem.job_groups[j].feasible:
        return base
    mark = state.mark()
    if not _place_quorum(state, j):
        state.undo(mark)
        return base
    for g in problem.job_groups[j].gangs:
        allowed = allowed_nodes(state, g)
        for r in problem.gangs[g].roles:
            place_pods(state, r, problem.roles[r].count - state.placed_of(r), allowed)
    return Assignment({k: v for k, v in state.counts.items() if v}, base.placed | {j})


def greedy(problem: Problem, order: Iterable[int] | None = None) -> Assignment:
    """Queue-order placement; ``order`` overrides the JobGroup order (used by ``explain``)."""
    state = _State(problem)
    order = list(range(len(problem.job_groups)) if order is None else order)
    placed: set[int] = set()
    for j in order:
        if not problem.job_groups[j].feasible:
            continue
        mark = state.mark()
        if _place_quorum(state, j):
            placed.add(j)
        else:
            state.undo(mark)
    for j in order:
        if j in placed:
            for g in problem.job_groups[j].gangs:
                allowed = allowed_nodes(state, g)
                for r in problem.gangs[g].roles:
                    place_pods(state, r, problem.roles[r].count - state.placed_of(r), allowed)
    return Assignment({k: v for k, v in state.counts.items() if v}, frozenset(placed))
