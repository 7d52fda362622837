"""verify judges a plan whole, as the state once every pod is bound; kube-scheduler judges one
pod at a time, against the pods bound before it. The two readings of required pod
anti-affinity and of DoNotSchedule topology spread are compared here on small random
clusters, against a brute force that binds the placed pods in every order with its own
reading of kube-scheduler's InterPodAffinity and PodTopologySpread filters, and shares no
code with verify: a plan verify accepts must be one some order of binding lets through, and
where the rule does not depend on the order (anti-affinity, and a spread constraint that
every pending pod it selects carries), verify must refuse no plan that some order allows.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cached_property
from itertools import permutations
from typing import Callable, Sequence

from gangplan.model import Container, Node, Pod, PodAffinityTerm, PodPhase, Snapshot, TopologySpreadConstraint
from gangplan.plan import Placement
from gangplan.verify import verify

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
KEYS = (HOSTNAME, ZONE)
NAMESPACES = ("default", "default", "default", "other")
APPS = ("x", "y", None)
INSTANCES = 5000

Bound = Sequence[tuple[Pod, Node]]


def _term(app: str, namespace: str, key: str) -> PodAffinityTerm:
    return PodAffinityTerm({"app": app}, (), (namespace,), key)


def _anti(rng: random.Random, namespace: str) -> tuple[PodAffinityTerm, ...]:
    return tuple(_term(rng.choice("xy"), namespace, rng.choice(KEYS)) for _ in range(rng.randint(1, 2)))


def _spread(rng: random.Random, app: str, namespace: str) -> tuple[TopologySpreadConstraint, ...]:
    keys = KEYS if rng.random() < 0.3 else (rng.choice(KEYS),)
    return tuple(TopologySpreadConstraint(_term(app, namespace, k), rng.choice([1, 2]), rng.choice([1, 3])) for k in keys)


@dataclass(frozen=True)
class Instance:
    seed: int
    snapshot: Snapshot
    placements: tuple[Placement, ...]

    @cached_property
    def violations(self) -> frozenset[str]:
        return verify(self.snapshot, self.placements).rules

    @cached_property
    def bound(self) -> list[tuple[Pod, Node]]:
        nodes = {n.name: n for n in self.snapshot.nodes}
        return [(p, nodes[p.node_name]) for p in self.snapshot.pods if p.node_name is not None]

    @cached_property
    def placed(self) -> list[tuple[Pod, Node]]:
        pods = {p.key: p for p in self.snapshot.pods}
        nodes = {n.name: n for n in self.snapshot.nodes}
        return [(pods[pl.pod], nodes[pl.node]) for pl in self.placements]

    def some_order(self, passes: Callable[[Pod, Node, Bound, Sequence[Node]], bool]) -> bool:
        for order in permutations(self.placed):
            state = list(self.bound)
            for pod, node in order:
                if not passes(pod, node, state, self.snapshot.nodes):
                    break
                state.append((pod, node))
            else:
                return True
        return False

    @cached_property
    def anti_allowed(self) -> bool:
        return self.some_order(_anti_passes)

    @cached_property
    def spread_allowed(self) -> bool:
        return self.some_order(_spread_passes)

    @property
    def has_anti(self) -> bool:
        return any(p.anti_affinity for p in self.snapshot.pods)

    @property
    def has_spread(self) -> bool:
        return any(p.spread for p in self.snapshot.pods)

    @property
    def tight(self) -> bool:
        """Every pending pod a constraint's selector matches carries it, and every carrier matches it."""
        pending = [p for p in self.snapshot.pods if p.node_name is None]
        constraints = [c for p in pending for c in p.spread]
        return all(
            (c in p.spread) == _selects(c.selector, p) for c in constraints for p in pending
        )

    def __str__(self) -> str:
        lines = [f"seed {self.seed}"]
        lines += [f"  node {n.name} {dict(n.labels)}" for n in self.snapshot.nodes]
        where = {pl.pod: pl.node for pl in self.placements}
        for p in self.snapshot.pods:
            at = f"running on {p.node_name}" if p.node_name else f"placed on {where[p.key]}"
            lines.append(f"  pod {p.key} {dict(p.labels)} {at}")
            lines += [f"    anti {dict(t.match_labels or {})} ns {t.namespaces} at {t.topology_key}" for t in p.anti_affinity]
            lines += [
                f"    spread {dict(c.selector.match_labels or {})} ns {c.selector.namespaces} at {c.selector.topology_key} "
                f"maxSkew {c.max_skew} minDomains {c.min_domains}"
                for c in p.spread
            ]
        return "\n".join(lines)


def instance(seed: int) -> Instance:
    """3-5 roomy untainted nodes, some without a zone; 0-2 running pods; 2-5 pending pods,
    placed at random. Odd seeds draw each pod's rule on its own; even seeds give every pending
    pod of one app and namespace the same spread constraints, or none, so tight ones abound.
    Some pods spread over both keys at once: their hostname domains are then only the nodes
    with a zone, which a single constraint never tells apart from the nodes with its key."""
    rng = random.Random(f"orders {seed}")
    nodes = tuple(
        Node(f"n{i}", {ZONE: rng.choice("ab")} if rng.random() < 0.75 else {}, {"cpu": 64000})
        for i in range(rng.randint(3, 5))
    )
    room = (Container("c", {"cpu": 10}),)

    def labels() -> dict[str, str]:
        app = rng.choice(APPS)
        return {} if app is None else {"app": app}

    pods: list[Pod] = []
    for i in range(rng.randint(0, 2)):
        namespace = rng.choice(NAMESPACES)
        guard = _anti(rng, namespace) if rng.random() < 0.4 else ()
        pods.append(Pod(namespace, f"run-{i}", labels=labels(), containers=room, anti_affinity=guard,
                        node_name=rng.choice(nodes).name, phase=PodPhase.RUNNING))
    shared: dict[tuple[str, str], tuple[TopologySpreadConstraint, ...]] = {}
    for i in range(rng.randint(2, 5)):
        namespace, own = rng.choice(NAMESPACES), labels()
        anti: tuple[PodAffinityTerm, ...] = ()
        spread: tuple[TopologySpreadConstraint, ...] = ()
        if seed % 2 == 0 and "app" in own:
            asked = (namespace, own["app"])
            if asked not in shared:
                shared[asked] = _spread(rng, own["app"], namespace) if rng.random() < 0.7 else ()
            spread = shared[asked]
        elif seed % 2 == 1 and rng.random() < 0.4:
            spread = _spread(rng, rng.choice("xy"), namespace)
        if not spread and rng.random() < 0.5:
            anti = _anti(rng, namespace)
        pods.append(Pod(namespace, f"p-{i}", labels=own, containers=room, anti_affinity=anti, spread=spread))
    placements = tuple(Placement(p.namespace, p.name, rng.choice(nodes).name) for p in pods if p.node_name is None)
    return Instance(seed, Snapshot(nodes=nodes, pods=tuple(pods)), placements)


def _selects(term: PodAffinityTerm, pod: Pod) -> bool:
    assert term.match_labels is not None and term.namespaces is not None and not term.match_expressions
    return pod.namespace in term.namespaces and all(pod.labels.get(k) == v for k, v in term.match_labels.items())


def _value(node: Node, key: str) -> str | None:
    return node.name if key == HOSTNAME else node.labels.get(key)


def _together(a: Node, b: Node, key: str) -> bool:
    return (v := _value(a, key)) is not None and v == _value(b, key)


def _anti_passes(pod: Pod, node: Node, state: Bound, nodes: Sequence[Node]) -> bool:
    """InterPodAffinity's Filter, anti-affinity only: the incoming pod's terms, then the bound pods'."""
    for other, there in state:
        if any(_together(node, there, t.topology_key) and _selects(t, other) for t in pod.anti_affinity):
            return False
        if any(_together(node, there, t.topology_key) and _selects(t, pod) for t in other.anti_affinity):
            return False
    return True


def _spread_passes(pod: Pod, node: Node, state: Bound, nodes: Sequence[Node]) -> bool:
    """PodTopologySpread's Filter under the default node inclusion policies (no node affinity
    here; taints ignored): matching pods are counted on the nodes that have every key of the
    pod's constraints, per domain; the fewest is 0 below minDomains domains."""
    keys = {c.selector.topology_key for c in pod.spread}
    if any(_value(node, k) is None for k in keys):
        return False
    eligible = [n for n in nodes if all(_value(n, k) is not None for k in keys)]
    for c in pod.spread:
        key = c.selector.topology_key
        counts = {_value(n, key): 0 for n in eligible}
        for other, there in state:
            if there in eligible and _selects(c.selector, other):
                counts[_value(there, key)] += 1
        fewest = min(counts.values()) if len(counts) >= c.min_domains else 0
        if counts[_value(node, key)] + _selects(c.selector, pod) - fewest > c.max_skew:
            return False
    return True


ALL = [instance(seed) for seed in range(INSTANCES)]


def test_the_instances_break_nothing_else() -> None:
    """Only the two rules under test may tell the plans apart, or a refusal could come from elsewhere."""
    for case in ALL:
        assert case.violations <= {"pod-anti-affinity", "topology-spread"}, f"{case.violations}\n{case}"


def test_anti_affinity_is_refused_exactly_when_every_order_is() -> None:
    """Required anti-affinity is symmetric in the order of binding, so verify's whole-plan
    reading must be kube-scheduler's, both ways."""
    for case in ALL:
        clean = "pod-anti-affinity" not in case.violations
        assert clean == case.anti_allowed, f"verify {'accepts' if clean else 'refuses'}, binding in every order {'allows' if case.anti_allowed else 'refuses'}\n{case}"
    asking = [case.anti_allowed for case in ALL if case.has_anti]
    assert sum(asking) >= len(asking) // 5 and len(asking) - sum(asking) >= len(asking) // 5


def test_tight_spread_is_refused_exactly_when_every_order_is() -> None:
    """Where every pending pod a constraint selects carries it (what the planner models), the
    final state verify reads decides the plan: some order of binding gets there exactly when
    no carrier's domain ends over maxSkew above the fewest."""
    tight = [case for case in ALL if case.has_spread and case.tight]
    for case in tight:
        clean = "topology-spread" not in case.violations
        assert clean == case.spread_allowed, f"verify {'accepts' if clean else 'refuses'}, binding in every order {'allows' if case.spread_allowed else 'refuses'}\n{case}"
    allowed = sum(case.spread_allowed for case in tight)
    assert len(tight) >= INSTANCES // 4
    assert allowed >= len(tight) // 5 and len(tight) - allowed >= len(tight) // 5


def test_spread_is_never_more_lenient_than_kube_scheduler() -> None:
    """Loose constraints too (placed pods the selector matches without carrying it, carriers it
    does not match): verify may refuse a plan some order lets through, never the reverse."""
    spread = [case for case in ALL if case.has_spread]
    for case in spread:
        if "topology-spread" not in case.violations:
            assert case.spread_allowed, f"verify accepts, binding in every order refuses\n{case}"
    loose = [case for case in spread if not case.tight]
    accepted = sum("topology-spread" not in case.violations for case in loose)
    refused = sum(not case.spread_allowed for case in loose)
    assert len(loose) >= INSTANCES // 10
    assert accepted >= len(loose) // 5 and refused >= len(loose) // 5
