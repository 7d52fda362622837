"""The greedy placer: one JobGroup at a time in queue order, as a gang scheduler does.

It is the CP-SAT model's complete starting hint, the fallback when the solver finds
nothing better in time, and the baseline benchmarks compare against. Quorums are placed
first for every JobGroup in queue order; pods beyond minMember come in a second pass, so
they never cost a later group its quorum.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np

from .objective import Assignment
from .problem import GangTopology, Problem, apart_roles, on_room, pods_that_fit

# One greedy pass over the whole problem, per (role, node) candidate pair, on the 2-core
# development machine (charged to the deterministic time limit, which cannot see it).
SECONDS_PER_CANDIDATE_PASS = 0.6e-6


_DIVISORS: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _divisors(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """Allocatable per node and in all, each at least 1 (shares are divided by them), once per
    problem: explain starts a state per group left out (1,310 at 20,480 nodes, 0.3 ms each)."""
    allocatable = problem.matrix("allocatable")
    hit = _DIVISORS.get(id(allocatable))
    if hit is None or hit[0] is not allocatable:
        per_node = np.maximum(allocatable, 1)
        per_node.flags.writeable = False
        if len(_DIVISORS) > 64:
            _DIVISORS.clear()
        total = np.maximum(allocatable.sum(axis=0), 1)
        total.flags.writeable = False
        hit = _DIVISORS[id(allocatable)] = (allocatable, per_node, total)
    return hit[1], hit[2]


_FIXED: dict[int, "_Fixed"] = {}
_ONE_DOMAIN = np.zeros(1, dtype=np.int64)
_ONE_DOMAIN.flags.writeable = False


class _Fixed:
    """What a greedy pass reads of a problem and no placement changes, built on first use and
    kept per problem: a plan runs a dozen passes on one (baseline, starts, realisations) and
    explain starts a state per group left out (1,310 at 20,480 nodes)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.nodes: dict[int, np.ndarray] = {}
        self.masks: dict[int, np.ndarray] = {}
        self.requests: dict[int, np.ndarray] = {}
        self.shares: dict[int, float] = {}
        self.gangs: dict[int, np.ndarray] = {}
        # (gang, level) -> the gang's candidates' domains there and each one's (_labelled);
        # the candidates grouped by domain and where each group starts (_grouped).
        self.labels: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.groups: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.partner_sets: dict[tuple[int, int], frozenset[int]] = {}  # (gang, level) -> gangs kept apart from it
        self.exclusive_levels = sorted({level for level, _, _ in problem.exclusive})


def _fixed(problem: Problem) -> _Fixed:
    hit = _FIXED.get(id(problem))
    if hit is None or hit.problem is not problem:
        if len(_FIXED) > 4:  # each holds its problem: a plan places on one or two
            _FIXED.clear()
        hit = _FIXED[id(problem)] = _Fixed(problem)
    return hit


class _State:
    """Free capacity (a nodes x resources numpy matrix) with an undo log, so a gang that does
    not fit leaves no trace. Node choices are vectorised: a 20,000-node cluster is scanned in C.
    """

    def __init__(
        self, problem: Problem, prefer: Mapping[int, np.ndarray] | None = None, as_scheduler: bool = False
    ) -> None:
        self.problem = problem
        self.prefer = prefer or {}
        self.as_scheduler = as_scheduler
        self.free = problem.matrix("free").copy()
        self.allocatable, self.totals = _divisors(problem)
        self.idle = problem.matrix("idle")
        self.pod_slots = problem.resources.index("pods")
        self.counts: dict[tuple[int, int], int] = defaultdict(int)
        self.per_role: dict[int, int] = defaultdict(int)
        self.on_nodes: dict[int, dict[int, int]] = defaultdict(dict)  # role -> node -> pods, as counts
        self.touched = np.zeros(len(problem.nodes), dtype=bool)
        self.log: list[tuple[int, int, int, bool]] = []
        fixed = self.fixed = _fixed(problem)
        self._nodes, self._masks, self._requests, self._gangs = fixed.nodes, fixed.masks, fixed.requests, fixed.gangs
        # Per level gangs are kept apart at (Problem.exclusive), per domain, the pods of each gang there.
        self.occupants: dict[int, dict[int, Counter[int]]] = {level: defaultdict(Counter) for level in fixed.exclusive_levels}

    def gang_nodes(self, g: int) -> np.ndarray:
        """Every candidate node of a gang's roles, computed once per gang."""
        found = self._gangs.get(g)
        if found is None:
            found = self._gangs[g] = _candidates(self.problem, g)
        return found

    def nodes_of(self, r: int) -> np.ndarray:
        found = self._nodes.get(r)
        if found is None:
            found = self._nodes[r] = self.problem.roles[r].nodes
        return found

    def mask(self, r: int) -> np.ndarray:
        """Whether each node of the cluster is a candidate of role ``r``."""
        found = self._masks.get(r)
        if found is None:
            found = np.zeros(len(self.problem.nodes), dtype=bool)
            found[self.nodes_of(r)] = True
            found.flags.writeable = False
            self._masks[r] = found
        return found

    def candidates(self, r: int, among: np.ndarray) -> np.ndarray:
        """The nodes of ``among`` (kept in order) that are candidates of role ``r``."""
        return among[self.mask(r)[among]]

    def room(self, chosen: list[tuple[int, int]], nodes: np.ndarray) -> list[tuple[np.ndarray, int]]:
        """Per role of ``chosen``: how many of its pods each of ``nodes`` holds now (none where
        it is no candidate), with the pods it needs; the cheap check of ``_fill`` for many
        node sets at once."""
        return [(np.where(self.mask(r)[nodes], self.fits(r, nodes), 0), take) for r, take in chosen]

    def share(self, r: int) -> float:
        """Dominant share of one pod of role ``r``: how big it is, across resources. A pod kept
        k to a node takes a k-th of a node of the cluster's, as the term's column of k a node
        counted it: a cap orders a group's kinds of pod as the column did."""
        found = self.fixed.shares.get(r)
        if found is None:
            role = self.problem.roles[r]
            found = max((w / t for w, t in zip(role.request, self.totals.tolist())), default=0.0)
            if role.apart:
                found = max(found, 1 / max(role.apart_cap * len(self.problem.nodes), 1))
            self.fixed.shares[r] = found
        return found

    def fits(self, r: int, nodes: np.ndarray) -> np.ndarray:
        """How many more pods of role ``r`` each of ``nodes`` holds now: for pods kept apart,
        their cap less the pods of theirs (of any role carrying the term) there already."""
        role = self.problem.roles[r]
        fit = pods_that_fit(self.free, role.request, role.most, nodes)
        if (taken := self.taken_by_partners(role.gang)) is not None:
            fit[taken[nodes]] = 0
        if role.apart and (held := self.held(r)):
            on = np.array(sorted(held), dtype=np.int64)
            at = np.minimum(np.searchsorted(on, nodes), len(on) - 1)
            hit = on[at] == nodes
            left = role.apart_cap - np.array([held[n] for n in on.tolist()], dtype=np.int64)
            fit[hit] = np.minimum(fit[hit], np.maximum(left[at[hit]], 0))
        return fit

    def taken_by_partners(self, g: int) -> np.ndarray | None:
        """Per node, whether a gang kept apart from ``g`` at a level has pods in its domain
        (``problem.taken_by_partners``, read from ``occupants``: a gang of 245 jobs kept
        apart from each other asked each of its partners' nodes at every fit)."""
        partners = self.problem.partners(g) if self.occupants else ()
        if not partners:
            return None
        taken = None
        for level, occupied in self.occupants.items():
            mine = self.fixed.partner_sets.get((g, level))
            if mine is None:
                mine = self.fixed.partner_sets[g, level] = frozenset(o for lv, o in partners if lv == level)
            held = [d for d, gangs in occupied.items() if not mine.isdisjoint(gangs)]
            if held:
                array = self.problem.domain_array(level)
                found = np.isin(array, held)
                taken = found if taken is None else taken | found
        return taken

    def _occupy(self, r: int, node: int, count: int) -> None:
        g = self.problem.roles[r].gang
        for level, occupied in self.occupants.items():
            d = int(self.problem.domain_array(level)[node])
            if d >= 0:
                gangs = occupied[d]
                gangs[g] += count
                if not gangs[g]:
                    del gangs[g]

    def held(self, r: int) -> dict[int, int]:
        """Per node, the pods there of the roles one term keeps apart with role ``r`` (a node
        its pods were taken off, by ``put`` of a negative count, is left out)."""
        found: dict[int, int] = defaultdict(int)
        for q in apart_roles(self.problem, r):
            for n, c in self.on_nodes.get(q, {}).items():
                if c:
                    found[n] += c
        return found

    def taken(self, r: int) -> list[int]:
        """The nodes where the pods role ``r``'s term keeps apart are at its cap."""
        cap = self.problem.roles[r].apart_cap
        return [n for n, c in self.held(r).items() if c >= cap]

    def request(self, r: int) -> np.ndarray:
        found = self._requests.get(r)
        if found is None:
            found = np.array(self.problem.roles[r].request, dtype=np.int64)
            found.flags.writeable = False
            self._requests[r] = found
        return found

    def put(self, r: int, node: int, count: int) -> None:
        self.free[node] -= self.request(r) * count
        self.counts[(r, node)] += count
        self.per_role[r] += count
        mine = self.on_nodes[r]
        mine[node] = mine.get(node, 0) + count
        self.log.append((r, node, count, bool(self.touched[node])))
        self.touched[node] = True
        if self.occupants:
            self._occupy(r, node, count)

    def mark(self) -> int:
        return len(self.log)

    def undo(self, mark: int) -> None:
        while len(self.log) > mark:
            r, node, count, touched = self.log.pop()
            self.free[node] += self.request(r) * count
            self.counts[(r, node)] -= count
            self.per_role[r] -= count
            if not self.counts[(r, node)]:
                del self.counts[(r, node)]
                del self.on_nodes[r][node]
            else:
                self.on_nodes[r][node] -= count
            self.touched[node] = touched
            if self.occupants:
                self._occupy(r, node, -count)

    def placed_of(self, r: int) -> int:
        return self.per_role[r]


def place_pods(
    state: _State, r: int, wanted: int, candidates: Iterable[int] | None = None, ordered: bool = False
) -> int:
    """Place up to ``wanted`` pods of role ``r``: tightest nodes first, or first-fit in order.
    ``candidates`` must name each node once: a node listed twice is filled twice.

    Tightest first: a node that takes every remaining pod with the least room left over, else
    the node that takes the most; nodes that would be newly opened come last.
    """
    if candidates is None:
        nodes = state.nodes_of(r)
    else:
        among = candidates if isinstance(candidates, np.ndarray) else np.fromiter(candidates, dtype=np.int64)
        nodes = state.candidates(r, among)
    if wanted <= 0 or not len(nodes):
        return 0
    return _place(state, r, wanted, nodes, state.fits(r, nodes), ordered)


def _place(state: _State, r: int, wanted: int, nodes: np.ndarray, fit: np.ndarray, ordered: bool) -> int:
    """``place_pods`` on candidates ``nodes`` of role ``r`` that hold ``fit`` of its pods now
    (``state.fits``, which this updates as it places): a pick changes only its node's room, so
    only that node is counted again, where the whole candidate set was after each pick."""
    role = state.problem.roles[r]
    placed = 0
    if ordered:
        for node, holds in zip(nodes.tolist(), fit.tolist()):
            take = min(holds, wanted - placed)
            if take > 0:
                state.put(r, node, take)
                placed += take
            if placed == wanted:
                break
        return placed
    request = state.request(r)
    used = [k for k in np.nonzero(request)[0].tolist() if k != state.pod_slots] or [state.pod_slots]
    while placed < wanted:
        remaining = wanted - placed
        valid = np.flatnonzero(fit > 0)  # most candidates are full: the rest are few
        if not len(valid):
            break
        pick = nodes[valid]
        take = np.minimum(fit[valid], remaining)
        leftover = _leftover(state, pick, take, request, used)
        complete = take == remaining
        opens = state.idle[pick] & ~state.touched[pick]
        order = np.lexsort((pick, leftover, np.where(complete, 0, -take), ~complete, opens))
        if complete.any():
            best = int(order[0])
            state.put(r, int(pick[best]), int(take[best]))
            placed += int(take[best])
            _refit(state, r, nodes, fit, [int(pick[best])])
            continue
        # No node takes all that is left, so each pick fills a node (its room, not the role's
        # count, bounds it) and leaves the others' keys as they are: take them in this order
        # until one of the rest could take all that is then left, as a pick at a time would.
        taken = take[order]
        rest = np.maximum.accumulate(taken[::-1])[::-1]  # the most any of order[k:] takes
        picked: list[int] = []
        for k, best in enumerate(order.tolist()):
            if k and (rest[k] >= wanted - placed or int(taken[k - 1]) >= role.count):
                break
            state.put(r, int(pick[best]), int(take[best]))
            placed += int(take[best])
            picked.append(int(pick[best]))
        _refit(state, r, nodes, fit, picked)
    return placed


def _leftover(state: _State, pick: np.ndarray, take: np.ndarray, request: np.ndarray, used: list[int]) -> np.ndarray:
    """Per node of ``pick``, the room it has left once it takes ``take`` pods of ``request``:
    each resource ``used`` as a share of the node's allocatable, summed, as kube-scheduler's
    MostAllocated and Volcano's binpack score a node (the pod slots only for a pod that asks
    for nothing else). The largest share alone ranked nodes by their roomiest resource, nearly
    always the pod slots (110 a node), so a 1-GPU pod took the node with 8 GPUs free as readily
    as the one with 1.
    Column by column: numpy's row-wise reductions over a few columns, and fancy indexing of
    rows and then columns, were its slow paths."""
    free, allocatable = state.free.take(pick, axis=0), state.allocatable.take(pick, axis=0)
    leftover = (free[:, used[0]] - take * request[used[0]]) / allocatable[:, used[0]]
    for k in used[1:]:
        leftover += (free[:, k] - take * request[k]) / allocatable[:, k]
    return leftover


def _refit(state: _State, r: int, nodes: np.ndarray, fit: np.ndarray, changed: list[int]) -> None:
    """``fit`` (``state.fits`` of ``nodes`` before the room of ``changed`` nodes moved) made
    current: every other node holds what it held."""
    if changed:
        stale = np.flatnonzero(nodes == changed[0] if len(changed) == 1 else np.isin(nodes, changed))
        fit[stale] = state.fits(r, nodes[stale])


def _place_quorum(state: _State, j: int) -> bool:
    """The quorum of every member of JobGroup ``j``, members in queue order, else the fewest
    candidate nodes first: a member that could go anywhere took the room one with fewer
    choices needed. A failed try is undone."""
    gangs = list(state.problem.job_groups[j].gangs)
    mark = state.mark()
    if all(_place_gang_quorum(state, g) for g in gangs):
        return True
    state.undo(mark)
    narrowest = sorted(gangs, key=lambda g: len(state.gang_nodes(g)))
    if narrowest != gangs and all(_place_gang_quorum(state, g) for g in narrowest):
        return True
    state.undo(mark)
    return False


def _place_gang_quorum(state: _State, g: int) -> bool:
    tried: list[list[tuple[int, int]]] = []
    for order in _quorum_orders(state, g):
        chosen = _quorum_roles(state, g, order)
        if chosen is None or chosen in tried:
            continue
        tried.append(chosen)
        if _place_gang(state, g, sorted(chosen, key=lambda rt: -state.share(rt[0]))):
            return True
    return False


def _quorum_orders(state: _State, g: int) -> Iterator[list[int]]:
    """The orders in which a gang of several kinds of pod takes them into its quorum, each
    tried where the one before found no place: the smallest first (they fit most easily); the
    gang's own, Volcano's task order, from which its job controller counts minResources; the
    largest share of what minResources asks first. After the first, kinds no candidate node
    holds one of now come last in each (worked out only once the first has failed)."""
    problem = state.problem
    gang = problem.gangs[g]
    smallest = sorted(gang.roles, key=lambda r: (state.share(r), r))
    yield smallest
    if len(gang.roles) == 1:
        return
    nowhere = {r for r in gang.roles if not state.fits(r, state.nodes_of(r)).any()}
    orders = [smallest, list(gang.roles)]
    if any(gang.min_resources):
        asked = [k for k, m in enumerate(gang.min_resources) if m]

        def share(r: int) -> float:
            return max(problem.roles[r].request[k] / gang.min_resources[k] for k in asked)

        orders.append(sorted(gang.roles, key=lambda r: (-share(r), r)))
    for order in orders:
        yield sorted(order, key=lambda r: r in nowhere)


def _meet_min_resources(state: _State, g: int) -> bool:
    """More pods, role by role in the gang's order, until minResources is met: of each role
    only as many as what is still owed asks, since pods beyond that are beyond the quorum and
    must not take room another group's quorum could have."""
    problem = state.problem
    for r in problem.gangs[g].roles:
        owed = _min_resources_owed(state, g)
        if not any(owed):
            break
        request = problem.roles[r].request
        wanted = max((-(-o // request[k]) for k, o in enumerate(owed) if o and request[k]), default=0)
        _place_more(state, g, r, min(wanted, problem.roles[r].count - state.placed_of(r)))
    return _meets_min_resources(state, g)


def _place_more(state: _State, g: int, r: int, wanted: int) -> int:
    """Up to ``wanted`` more pods of role ``r`` inside the domains gang ``g`` holds. A gang
    that holds none yet (minMember 0, so no quorum placed) places one pod first: its node
    chooses the domains the others must share."""
    placed = 0
    if wanted > 0 and _holds_no_domain(state, g):
        placed = place_pods(state, r, 1, allowed_nodes(state, g))
        if not placed:
            return 0
    return placed + place_pods(state, r, wanted - placed, allowed_nodes(state, g))


def _quorum_roles(state: _State, g: int, order: list[int]) -> list[tuple[int, int]] | None:
    """How many pods of each role make the quorum: task minimums first, then the rest, each
    taken in ``order`` (one of ``_quorum_orders``)."""
    problem = state.problem
    gang = problem.gangs[g]
    rank = {r: i for i, r in enumerate(order)}
    taken: dict[int, int] = defaultdict(int)
    for task in gang.tasks:
        left = task.need
        for r in sorted(task.roles, key=rank.__getitem__):
            take = min(left, problem.roles[r].count)
            taken[r] += take
            left -= take
        if left > 0:
            return None
    # minResources still owed needs a pod even where minMember does not: it chooses the domain.
    left = max(gang.need, 1 if any(gang.min_resources) else 0) - sum(taken.values())
    for r in order:
        if left <= 0:
            break
        take = min(left, problem.roles[r].count - taken[r])
        taken[r] += take
        left -= take
    if left > 0:
        return None
    return [(r, n) for r, n in taken.items() if n]


def _fill(
    state: _State,
    chosen: list[tuple[int, int]],
    nodes: Iterable[int] | None,
    ordered: bool = False,
    room: list[tuple[np.ndarray, int]] | None = None,
) -> bool:
    """Place ``chosen`` (role, pods) in ``nodes`` (None: anywhere), all or none. ``room``:
    ``state.room(chosen, nodes)``, when it is current; else it is counted here."""
    within: np.ndarray | None = (
        nodes if nodes is None or isinstance(nodes, np.ndarray) else np.fromiter(nodes, dtype=np.int64)
    )
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for i, (r, take) in enumerate(chosen):  # a cheap necessary condition before any pod is placed
        if within is None:
            among = state.nodes_of(r)
            fit = state.fits(r, among)
        else:
            mine = state.mask(r)[within]
            among = within[mine]
            fit = state.fits(r, among) if room is None else room[i][0][mine]
        if int(fit.sum()) < take:
            return False
        found.append((among, fit))
    seen = state.mark()
    changed: set[int] = set()
    for (r, take), (among, fit) in zip(chosen, found):
        # The roles placed before this one changed the room of their nodes only.
        changed.update(n for _, n, _, _ in state.log[seen:])
        seen = state.mark()
        _refit(state, r, among, fit, sorted(changed))
        if (_place(state, r, take, among, fit, ordered) if take > 0 and len(among) else 0) != take:
            return False
    return True


def _place_gang(state: _State, g: int, chosen: list[tuple[int, int]]) -> bool:
    """Godel's way: NodeGroups by the required key, NodeCircles by the preferred keys, by rank;
    a gang with nodes in ``state.prefer`` tries the same within those first. Once ``chosen``
    is placed, more pods meet minResources inside the domains it took; where they cannot, the
    next NodeGroup is tried, as Godel's scheduler does when one cannot hold the whole gang."""
    topo = state.problem.gangs[g].topology
    if topo is not None and state.as_scheduler:
        topo = on_room(state.problem, topo, state.free)
    if not chosen:
        return _meet_min_resources(state, g)  # running members already make the quorum
    preferred = state.prefer.get(g)
    for among in ([preferred] if preferred is not None else []) + [None]:
        mark = state.mark()
        if topo is None:
            if _fill(state, chosen, among) and _meet_min_resources(state, g):
                return True
            state.undo(mark)
            continue
        everything = state.gang_nodes(g)
        room = state.room(chosen, everything)  # a failed try is undone: it holds for every one
        usable = None
        if among is not None:  # a mask, not a set intersection per NodeGroup (nodes ascend)
            keep = np.zeros(len(state.problem.nodes), dtype=bool)
            keep[among] = True
            usable = keep[everything]
        demand = _demand(state, chosen)
        for at in _node_groups(state, g, topo, room, demand, usable):
            if _place_in_circles(state, g, topo, chosen, at, [(fit[at], take) for fit, take in room], demand) and (
                _meet_min_resources(state, g)
            ):
                return True
            state.undo(mark)
    return False


def _candidates(problem: Problem, g: int) -> np.ndarray:
    roles = problem.gangs[g].roles
    if len(roles) == 1:
        return problem.roles[roles[0]].nodes
    return np.unique(np.concatenate([problem.roles[r].nodes for r in roles] or [np.zeros(0, np.int64)]))


def _node_groups(
    state: _State,
    g: int,
    topo: GangTopology,
    room: list[tuple[np.ndarray, int]],
    demand: np.ndarray,
    usable: np.ndarray | None,
) -> Iterator[np.ndarray]:
    """Positions in the gang's candidates (``state.gang_nodes``, ascending; ``usable`` those it
    may try now) per domain of its deepest required level (a domain there is a path, so it fixes
    the domains above it), in that level's sort-rule order: ranks are distinct per domain, so
    they alone order the NodeGroups. Only the NodeGroups that pass ``_enough`` for ``room``
    (``state.room`` of the candidates) and ``demand`` are given, found at once: at the node
    level there is one per candidate node."""
    deepest = max(topo.required) if topo.required else -1
    domains, labels, by_domain, starts = _grouped(state, g, deepest)
    free = state.free.take(state.gang_nodes(g), axis=0).astype(np.float64)
    if usable is None:  # every candidate may be tried
        ok = _enough(room, labels, len(domains), free, demand) & (starts[1:] > starts[:-1])
    else:
        ok = _enough([(fit * usable, take) for fit, take in room], labels, len(domains), free * usable[:, None], demand)
        ok &= np.bincount(labels, weights=usable, minlength=len(domains)) > 0
    ok &= _may_meet_min_resources(state, g, labels, len(domains))
    tries = np.flatnonzero(ok).tolist()
    if topo.required:
        tries.sort(key=lambda i: topo.ranks[deepest][int(domains[i])])
    for i in tries:
        at = by_domain[starts[i] : starts[i + 1]]
        yield at if usable is None else at[usable[at]]


def _may_meet_min_resources(state: _State, g: int, labels: np.ndarray, count: int) -> np.ndarray | bool:
    """Which of ``count`` domains (``labels`` gives each candidate's) may hold minResources:
    each role of the gang counted as the pods of it that fit there alone. One that fails this
    fails ``_meet_min_resources`` whatever the quorum took, so it need not be tried."""
    problem = state.problem
    gang = problem.gangs[g]
    if not any(gang.min_resources):
        return True
    nodes = state.gang_nodes(g)
    room = np.zeros((count, len(problem.resources)), dtype=np.int64)
    want = np.array(gang.min_resources, dtype=np.int64)
    for r in gang.roles:
        role = problem.roles[r]
        fit = np.where(state.mask(r)[nodes], state.fits(r, nodes), 0)
        there = np.bincount(labels, weights=fit, minlength=count).astype(np.int64)
        pods = np.minimum(there, role.count - state.placed_of(r))
        request = np.array(role.request, dtype=np.int64)
        room += pods[:, None] * request[None, :]
        want -= request * state.placed_of(r)
    return np.all(room >= want[None, :], axis=1)


def _grouped(state: _State, g: int, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The gang's candidates by domain at ``level`` (-1: all in one): ``_labelled``'s domains
    and labels, the candidates' positions grouped by domain (in order inside each) and where
    each group starts; once per problem, as candidates are."""
    if level < 0:  # one group of all: cheap to make afresh, and not worth keeping
        count = len(state.gang_nodes(g))
        return _ONE_DOMAIN, np.zeros(count, dtype=np.uint8), np.arange(count), np.array([0, count])
    domains, labels = _labelled(state, g, level)
    found = state.fixed.groups.get((g, level))
    if found is None:
        by_domain = np.argsort(labels, kind="stable").astype(np.int32)
        starts = np.concatenate(([0], np.cumsum(np.bincount(labels, minlength=len(domains)))))
        for array in (by_domain, starts):
            array.flags.writeable = False
        found = state.fixed.groups[(g, level)] = (by_domain, starts)
    return (domains, labels, *found)


def _labelled(state: _State, g: int, level: int) -> tuple[np.ndarray, np.ndarray]:
    """The domains of the gang's candidates at ``level`` (ascending) and each candidate's
    position among them, in the narrowest unsigned integer that holds it; once per problem (a
    pair of int64 per candidate and level, with the grouping, was 346 MiB at 20,480 nodes)."""
    found = state.fixed.labels.get((g, level))
    if found is None:
        domains, labels = np.unique(state.problem.domain_array(level)[state.gang_nodes(g)], return_inverse=True)
        labels = labels.reshape(-1).astype(np.min_scalar_type(len(domains)))
        for array in (domains, labels):
            array.flags.writeable = False
        found = state.fixed.labels[(g, level)] = (domains, labels)
    return found


def _enough(
    room: list[tuple[np.ndarray, int]], labels: np.ndarray, count: int, free: np.ndarray, demand: np.ndarray
) -> np.ndarray:
    """Which of ``count`` node sets (``labels`` gives each node's) pass ``_fill``'s cheap check,
    and hold in all what ``chosen`` asks for (``demand``, per resource; ``free``, the nodes'
    room as floats: a set short by rounding is tried, and fails in ``_fill``). A set failing
    either fails ``_fill`` and changes nothing, so it need not be tried: 5,000 pods each of
    their own size passed the first in every tor, and were placed into each in turn."""
    ok = np.ones(count, dtype=bool)
    for fit, take in room:
        ok &= np.bincount(labels, weights=fit, minlength=count) >= take
    for k in np.flatnonzero(demand > 0).tolist():
        ok &= np.bincount(labels, weights=free[:, k], minlength=count) >= demand[k] * (1 - 1e-9)
    return ok


def _demand(state: _State, chosen: list[tuple[int, int]]) -> np.ndarray:
    """What ``chosen`` asks for in all, per resource, as floats (sums of int64 may overflow)."""
    total = np.zeros(len(state.problem.resources), dtype=np.float64)
    for r, take in chosen:
        total += take * state.request(r).astype(np.float64)
    return total


def _place_in_circles(
    state: _State,
    g: int,
    topo: GangTopology,
    chosen: list[tuple[int, int]],
    at: np.ndarray,
    room: list[tuple[np.ndarray, int]],
    demand: np.ndarray,
) -> bool:
    """``at``: a NodeGroup, as positions in the gang's candidates (``state.gang_nodes``);
    ``room``: ``state.room`` of those nodes; ``demand``: ``_demand`` of ``chosen``; a failed
    try is undone, so they hold for every try.
    A domain running members already occupy comes first: pods there add no span. When no
    domain of a preferred level holds the gang, one of each level enclosing the smallest
    preferred one is tried, nearest first, before the whole candidate set."""
    problem = state.problem
    nodes = state.gang_nodes(g)[at]
    if not topo.preferred:
        return _fill(state, chosen, nodes, room=room)
    free = state.free.take(nodes, axis=0).astype(np.float64)
    for level in sorted(topo.preferred, reverse=True):
        # Domains numbered among all the gang's candidates: those the NodeGroup lacks fail the
        # check (each role of ``chosen`` takes a pod), and the rest keep their order.
        domains, labels = _labelled(state, g, level)
        labels = labels[at]
        tries = np.flatnonzero(_enough(room, labels, len(domains), free, demand)).tolist()
        rank = _held_first(topo, level)
        for i in sorted(tries, key=lambda i: rank[domains[i]]):
            mark = state.mark()
            inside = labels == i
            if _fill(state, chosen, nodes[inside], room=[(fit[inside], take) for fit, take in room]):
                return True
            state.undo(mark)
    enclosing = topo.enclosing if state.as_scheduler else ()
    order = _circle_order(problem, topo, nodes, enclosing)
    nodes, room, free = nodes[order], [(fit[order], take) for fit, take in room], free[order]
    for level in sorted(enclosing, reverse=True):
        domains, labels = np.unique(problem.domain_array(level)[nodes], return_inverse=True)
        labels = labels.reshape(-1)
        first = _first(labels, len(domains), np.arange(len(nodes)))
        for i in sorted(np.flatnonzero(_enough(room, labels, len(domains), free, demand)).tolist(), key=lambda i: first[i]):
            mark = state.mark()
            inside = labels == i
            if _fill(state, chosen, nodes[inside], ordered=True, room=[(fit[inside], take) for fit, take in room]):
                return True
            state.undo(mark)
    return _fill(state, chosen, nodes, ordered=True, room=room)


def _circle_order(problem: Problem, topo: GangTopology, nodes: np.ndarray, enclosing: tuple[int, ...]) -> np.ndarray:
    """Positions of ``nodes`` in the order a spreading gang fills them: by the sort-rule rank
    of their domain at each preferred level (running members' domains first), and grouped by
    domain at each enclosing level, that domain taking the place of its best node."""
    keys = {lv: _held_first(topo, lv)[problem.domain_array(lv)[nodes]] for lv in topo.preferred}
    order = np.lexsort((nodes, *(keys[lv] for lv in sorted(keys, reverse=True))))
    if not enclosing:
        return order
    position = np.empty(len(nodes), dtype=np.int64)
    position[order] = np.arange(len(nodes))
    for lv in enclosing:
        domains, labels = np.unique(problem.domain_array(lv)[nodes], return_inverse=True)
        labels = labels.reshape(-1)
        keys[lv] = _first(labels, len(domains), position)[labels]
    return np.lexsort((position, *(keys[lv] for lv in sorted(keys, reverse=True))))


def _held_first(topo: GangTopology, level: int) -> np.ndarray:
    """Each domain's sort-rule rank at ``level``, the domains running members occupy before
    every other (pods there add no span)."""
    ranks = np.array(topo.ranks[level], dtype=np.int64)
    ranks += len(ranks)
    held = [d for lv, d in topo.held if lv == level]
    ranks[held] -= len(ranks)
    return ranks


def _first(labels: np.ndarray, count: int, positions: np.ndarray) -> np.ndarray:
    """The smallest of ``positions`` per label: where each domain's best node stands."""
    first = np.full(count, len(labels), dtype=np.int64)
    np.minimum.at(first, labels, positions)
    return first


def allowed_nodes(state: _State, g: int) -> np.ndarray | None:
    """Nodes a gang's further pods may use: inside the domains its required terms hold."""
    problem = state.problem
    topo = problem.gangs[g].topology
    if topo is None or not topo.required:
        return None
    held = {level: d for level, d in topo.held if level in topo.required}
    for r in problem.gangs[g].roles:
        for n, c in state.on_nodes[r].items():
            if c:
                for level in topo.required:
                    held.setdefault(level, int(problem.domain_array(level)[n]))
    nodes = state.gang_nodes(g)
    keep = np.ones(len(nodes), dtype=bool)
    for level, d in held.items():
        keep &= problem.domain_array(level)[nodes] == d
    return nodes[keep]


def _holds_no_domain(state: _State, g: int) -> bool:
    """A gang with required terms and neither running nor placed pods to hold a domain."""
    topo = state.problem.gangs[g].topology
    if topo is None or not topo.required or any(level in topo.required for level, _ in topo.held):
        return False
    return not any(c for r in state.problem.gangs[g].roles for c in state.on_nodes[r].values())


def _min_resources_owed(state: _State, g: int) -> list[int]:
    """What of its minResources the gang's placed pods do not request yet, per resource."""
    problem = state.problem
    gang = problem.gangs[g]
    if not any(gang.min_resources):
        return [0] * len(problem.resources)
    added = [0] * len(problem.resources)
    for r in gang.roles:
        n = state.placed_of(r)
        for k, want in enumerate(problem.roles[r].request):
            added[k] += want * n
    return [max(0, m - a) for a, m in zip(added, gang.min_resources)]


def _meets_min_resources(state: _State, g: int) -> bool:
    return not any(_min_resources_owed(state, g))


class Placer:
    """JobGroups placed greedily one at a time on a room kept between calls, as ``--policy
    ordered`` goes down the queue: each costs its own placement, where starting from scratch
    replayed every group before it (O(n^2): 28.7 s for a 10 s limit at 7,000 groups)."""

    def __init__(self, problem: Problem, as_scheduler: bool = False) -> None:
        self.state = _State(problem, as_scheduler=as_scheduler)

    def place(self, j: int) -> tuple[int, dict[tuple[int, int], int], bool]:
        """JobGroup ``j`` (its quorum, then its pods beyond) beside what is placed: the mark to
        take it back by, its counts, and whether it fits (running members may make its quorum)."""
        state = self.state
        mark = state.mark()
        if not state.problem.job_groups[j].feasible or not _place_quorum(state, j):
            state.undo(mark)
            return mark, {}, False
        _place_extras(state, [j])
        added: dict[tuple[int, int], int] = defaultdict(int)
        for r, n, c, _ in state.log[mark:]:
            added[(r, n)] += c
        return mark, dict(added), True

    def instead(self, mark: int, counts: Mapping[tuple[int, int], int]) -> None:
        """``counts`` in place of what ``place`` put there since ``mark`` (the last call's)."""
        self.state.undo(mark)
        for (r, n), c in sorted(counts.items()):
            if c:
                self.state.put(r, n, c)


def complete(problem: Problem, base: Assignment) -> Assignment:
    """``base`` with every JobGroup it leaves out tried again greedily, in queue order, and
    pods beyond minMember added where they fit. Nothing placed in ``base`` moves, so every
    objective-1 term can only grow: used when the solver ran out of time before later stages.
    """
    state = _State(problem)
    for (r, n), c in sorted(base.counts.items()):
        state.put(r, n, c)
    placed = set(base.placed)
    for j in range(len(problem.job_groups)):
        if j in placed or not problem.job_groups[j].feasible:
            continue
        mark = state.mark()
        if _place_quorum(state, j):
            placed.add(j)
        else:
            state.undo(mark)
    _place_extras(state, sorted(placed))
    return Assignment({k: v for k, v in state.counts.items() if v}, frozenset(placed))


def _place_extras(state: _State, order: Iterable[int]) -> None:
    problem = state.problem
    for j in order:
        for g in problem.job_groups[j].gangs:
            for r in problem.gangs[g].roles:
                _place_more(state, g, r, problem.roles[r].count - state.placed_of(r))


def greedy(
    problem: Problem,
    order: Iterable[int] | None = None,
    prefer: Mapping[int, np.ndarray] | None = None,
    as_scheduler: bool = False,
) -> Assignment:
    """Queue-order placement; ``order`` overrides the JobGroup order (used by ``explain``).
    A gang in ``prefer`` tries those nodes first (where a coarser model put it), then any.
    ``as_scheduler``: place as Godel does, one group at a time: a gang no preferred domain
    holds tries one domain of each level above before spreading freely (it degrades level by
    level), and an Available sort rule ranks domains on the room the groups before it left.
    ``--solver greedy`` does; the starts and realisations of CP-SAT's plans do not: the
    degrading left them less quorum demand at 4 of the 10 generated S and M clusters (seeds
    1 to 5; as the solver's start, at 2), and CP-SAT ranks on the snapshot, one model for all."""
    state = _State(problem, prefer, as_scheduler)
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
    _place_extras(state, [j for j in order if j in placed])
    return Assignment({k: v for k, v in state.counts.items() if v}, frozenset(placed))


def lexicographic_greedy(
    problem: Problem, score_of: Callable[[Assignment], tuple[int, ...]], queue_order: Assignment
) -> tuple[Assignment, int]:
    """A better start for the solver than queue order: priority level by level, the level's
    JobGroups in queue order or largest quorum demand first, whichever ``score_of`` prefers,
    with the levels above kept as chosen. Each try is one greedy pass: greedy is sequential,
    so a prefix places the same way whatever follows it. ``queue_order`` is ``greedy(problem)``,
    already computed by the caller. Returns the plan and the greedy passes run."""
    levels: dict[int, list[int]] = {}
    for j, jg in enumerate(problem.job_groups):
        levels.setdefault(jg.priority, []).append(j)
    prefix: list[int] = []
    best = queue_order
    passes = 0
    for priority in sorted(levels, reverse=True):
        members = levels[priority]
        rest = [j for p in sorted(levels, reverse=True) if p < priority for j in levels[p]]
        by_demand = sorted(members, key=lambda j: (-problem.job_groups[j].demand, j))
        if by_demand == members:
            prefix += members
            continue
        tried = greedy(problem, prefix + by_demand + rest)
        passes += 1
        if score_of(tried) > score_of(best):
            best, chosen = tried, by_demand
        else:
            chosen = members
        prefix += chosen
    return best, passes


def repair(problem: Problem, tentative: Assignment) -> Assignment:
    """Make a plan from ``tentative``, whose JobGroups may be short of quorum (a bucket
    solution put on nodes): a short JobGroup gets its missing pods greedily, inside the
    domains its required terms hold, or is dropped with all its pods. One whose pods left a
    required domain (one below the buckets' level, such as the node) is placed afresh."""
    state = _State(problem)
    for (r, n), c in sorted(tentative.counts.items()):
        state.put(r, n, c)
    nodes_of: dict[int, set[int]] = defaultdict(set)  # a dropped JobGroup's pods are all tentative
    for r, n in tentative.counts:
        nodes_of[r].add(n)
    placed: set[int] = set()
    for j in range(len(problem.job_groups)):
        if j in tentative.placed and problem.job_groups[j].feasible and _split(state, j):
            _drop(state, j, nodes_of)
            mark = state.mark()
            if _place_quorum(state, j):
                placed.add(j)
            else:
                state.undo(mark)
            continue
        if j in tentative.placed and problem.job_groups[j].feasible:
            if not _quorum_met(state, j):
                mark = state.mark()
                _top_up(state, j)
                if not _quorum_met(state, j):
                    state.undo(mark)
            if _quorum_met(state, j):
                placed.add(j)
                continue
        _drop(state, j, nodes_of)
    return Assignment({k: v for k, v in state.counts.items() if v}, frozenset(placed))


def _drop(state: _State, j: int, nodes_of: Mapping[int, set[int]]) -> None:
    """Take a JobGroup's tentative pods off their nodes."""
    for r in state.problem.roles_of(j):
        for n in sorted(nodes_of.get(r, ())):
            c = state.counts.get((r, n), 0)
            if c:
                state.put(r, n, -c)


def _split(state: _State, j: int) -> bool:
    """Whether a gang of the JobGroup has placed pods in two domains of a required level, or
    in a domain a gang kept apart from it has pods in."""
    problem = state.problem
    return any(not _in_one_domain(state, g) or _beside_partner(state, g) for g in problem.job_groups[j].gangs)


def _beside_partner(state: _State, g: int) -> bool:
    taken = state.taken_by_partners(g)
    return taken is not None and any(
        taken[n] for r in state.problem.gangs[g].roles for n, c in state.on_nodes.get(r, {}).items() if c
    )


def repair_by_worth(problem: Problem, tentative: Assignment) -> Assignment:
    """``repair`` with JobGroups taken by what objective 1 says they are worth (priority
    level, then quorum demand) instead of all at once: each keeps the tentative pods that
    still fit beside those before it, is topped up, else placed afresh greedily, else
    dropped. A short JobGroup then takes room that lesser ones held only tentatively: at
    512 nodes a 256-pod gang the bucket model chose was dropped for want of room that seven
    smaller JobGroups of its level held, worth less than half as much together."""
    state = _State(problem)
    tentative_of: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for (r, n), c in sorted(tentative.counts.items()):
        tentative_of[r].append((n, c))
    order = sorted(
        (j for j in tentative.placed if problem.job_groups[j].feasible),
        key=lambda j: (-problem.job_groups[j].priority, -problem.job_groups[j].demand, j),
    )
    placed: set[int] = set()
    for j in order:
        mark = state.mark()
        for r in problem.roles_of(j):
            for n, c in tentative_of[r]:
                fit = min(c, int(state.fits(r, np.array([n]))[0]))
                if fit > 0:
                    state.put(r, n, fit)
        if not _quorum_met(state, j) and not _split(state, j):
            _top_up(state, j)
        if not _quorum_met(state, j) or _split(state, j):
            state.undo(mark)
            if not _place_quorum(state, j):
                state.undo(mark)
                continue
        placed.add(j)
    return Assignment({k: v for k, v in state.counts.items() if v}, frozenset(placed))


def _top_up(state: _State, j: int) -> None:
    for g in state.problem.job_groups[j].gangs:
        if not _holds_no_domain(state, g):
            _top_up_gang(state, g)
            continue
        # With nothing placed yet each pod picks a node, and so a domain, of its own: kept
        # only where they all landed in one; else the quorum chooses its domains at once.
        mark = state.mark()
        _top_up_gang(state, g)
        if _gang_quorum_met(state, g) and _in_one_domain(state, g):
            continue
        state.undo(mark)
        if not _place_gang_quorum(state, g):
            state.undo(mark)


def _top_up_gang(state: _State, g: int) -> None:
    problem = state.problem
    gang = problem.gangs[g]
    allowed = allowed_nodes(state, g)
    for task in gang.tasks:
        short = task.need - sum(state.placed_of(r) for r in task.roles)
        for r in task.roles:
            if short > 0:
                short -= place_pods(state, r, min(short, problem.roles[r].count - state.placed_of(r)), allowed)
    short = gang.need - sum(state.placed_of(r) for r in gang.roles)
    for r in sorted(gang.roles, key=state.share):
        if short > 0:
            short -= place_pods(state, r, min(short, problem.roles[r].count - state.placed_of(r)), allowed)
    _meet_min_resources(state, g)


def _in_one_domain(state: _State, g: int) -> bool:
    """Whether a gang's placed pods share one domain at each level its required terms name."""
    problem = state.problem
    topology = problem.gangs[g].topology
    if topology is None or not topology.required:
        return True
    nodes = [n for r in problem.gangs[g].roles for n, c in state.on_nodes[r].items() if c]
    return all(len(set(problem.domain_array(level)[nodes].tolist())) <= 1 for level in topology.required)


def _quorum_met(state: _State, j: int) -> bool:
    return all(_gang_quorum_met(state, g) for g in state.problem.job_groups[j].gangs)


def _gang_quorum_met(state: _State, g: int) -> bool:
    gang = state.problem.gangs[g]
    if sum(state.placed_of(r) for r in gang.roles) < gang.need:
        return False
    if any(sum(state.placed_of(r) for r in task.roles) < task.need for task in gang.tasks):
        return False
    return _meets_min_resources(state, g)
