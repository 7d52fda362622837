"""The verifier, rule by rule: a valid placement passes and a wrong one is caught by its rule.

Each boundary is tested at the exact edge (fits, then one unit over), because an off-by-one
in the verifier would let the solver's off-by-one through.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Unpack

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gangplan.model import (
    Container,
    HostPort,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodAffinityTerm,
    PodGroup,
    PodGroupAPI,
    PodPhase,
    Snapshot,
    Taint,
    Toleration,
)
from gangplan.plan import Claim, Placement
from gangplan.verify import Verification, Violation, format_spans, format_verification, verify

from model_fields import PodGroupFields

GIB = 2**30


def node(
    name: str = "n1",
    cpu: int = 4000,
    labels: Mapping[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    ready: bool = True,
    unschedulable: bool = False,
    pods: int = 110,
    gpus: int = 0,
    **extra: int,
) -> Node:
    allocatable = {"cpu": cpu, "memory": 8 * GIB, "pods": pods, **({"nvidia.com/gpu": gpus} if gpus else {}), **extra}
    return Node(
        name,
        dict(labels or {}),
        allocatable,
        taints=taints,
        ready=ready,
        unschedulable=unschedulable,
    )


def pod(
    name: str,
    cpu: int = 1000,
    namespace: str = "ns",
    on: str | None = None,
    phase: PodPhase | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    **kwargs: object,
) -> Pod:
    if phase is None:
        phase = PodPhase.RUNNING if on else PodPhase.PENDING
    kwargs.setdefault("containers", (Container("main", {"cpu": cpu}),))
    return Pod(
        namespace,
        name,
        labels=dict(labels or {}),
        annotations=dict(annotations or {}),
        node_name=on,
        phase=phase,
        **kwargs,  # type: ignore[arg-type]
    )


def group(
    name: str,
    min_member: int,
    namespace: str = "ns",
    api: PodGroupAPI = PodGroupAPI.SCHEDULER_PLUGINS,
    **kwargs: Unpack[PodGroupFields],
) -> PodGroup:
    return PodGroup(namespace, name, api, min_member=min_member, **kwargs)


def member(name: str, group_name: str, **kwargs: object) -> Pod:
    labels = {"scheduling.x-k8s.io/pod-group": group_name}
    return pod(name, labels=labels, **kwargs)  # type: ignore[arg-type]


def place(*pairs: tuple[str, str], namespace: str = "ns") -> list[Placement]:
    return [Placement(namespace, name, node_name) for name, node_name in pairs]


def check(
    nodes: list[Node],
    pods: list[Pod],
    placements: list[Placement],
    groups: tuple[PodGroup, ...] = (),
    levels: tuple[str, ...] = (),
) -> Verification:
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods), pod_groups=groups)
    return verify(snapshot, placements, levels) if levels else verify(snapshot, placements)


def rules(result: Verification) -> list[str]:
    return [v.rule for v in result.violations]


def only(result: Verification, rule: str) -> Violation:
    assert rules(result) == [rule], format_verification(result)
    return result.violations[0]


def affinity(*terms: NodeSelectorTerm) -> NodeSelector:
    return NodeSelector(tuple(terms))


def term(
    *expressions: NodeSelectorRequirement, fields: tuple[NodeSelectorRequirement, ...] = ()
) -> NodeSelectorTerm:
    return NodeSelectorTerm(tuple(expressions), fields)


def req(key: str, operator: str, *values: str) -> NodeSelectorRequirement:
    return NodeSelectorRequirement(key, operator, tuple(values))


def test_valid_placement_passes_and_is_counted() -> None:
    result = check(
        [node("n1"), node("n2")],
        [pod("a"), pod("b"), pod("c")],
        place(("a", "n1"), ("b", "n2"), ("c", "n2")),
    )
    assert result.ok
    assert format_verification(result) == []
    assert result.summary.placements == 3
    assert result.summary.pods_placed == 3
    assert result.summary.groups_with_placements == 3
    assert result.summary.nodes_used == 2


def test_unknown_pod_is_caught() -> None:
    violation = only(check([node()], [pod("a")], place(("ghost", "n1"))), "unknown-pod")
    assert violation.subject == "ns/ghost"
    assert check([node()], [pod("a")], place(("a", "n1"), namespace="other")).rules == {
        "unknown-pod"
    }


def test_uid_mismatch_is_an_unknown_pod() -> None:
    snapshot = Snapshot(nodes=(node(),), pods=(Pod("ns", "a", uid="u-1"),))
    assert verify(snapshot, [Placement("ns", "a", "n1", "u-1")]).ok
    violation = only(verify(snapshot, [Placement("ns", "a", "n1", "u-2")]), "unknown-pod")
    assert "u-2" in violation.message and "u-1" in violation.message


def test_running_pod_is_not_pending() -> None:
    violation = only(check([node()], [pod("a", on="n1")], place(("a", "n1"))), "not-pending")
    assert "n1" in violation.message


@pytest.mark.parametrize("phase", [PodPhase.SUCCEEDED, PodPhase.FAILED])
def test_finished_pod_without_node_is_not_pending(phase: PodPhase) -> None:
    only(check([node()], [pod("a", phase=phase)], place(("a", "n1"))), "not-pending")


@pytest.mark.parametrize("state,said", [
    ({"deleting": True}, "being deleted"),
    ({"scheduling_gates": ("example.com/wait",)}, "scheduling gates example.com/wait"),
])
def test_a_gated_or_terminating_pod_is_not_schedulable(state: dict, said: str) -> None:
    violation = only(check([node()], [pod("a", **state)], place(("a", "n1"))), "not-schedulable")
    assert said in violation.message


def test_a_pod_kueue_gates_is_planned_through() -> None:
    """Kueue lifts its own gates when it admits the workload, the decision a plan is for."""
    assert check([node()], [pod("a", scheduling_gates=("kueue.x-k8s.io/admission",))], place(("a", "n1"))).ok


def test_a_binding_of_a_pod_kueue_gates_is_one_the_api_server_refuses() -> None:
    """A plan may place it; a List of Bindings to apply now may not: the API server answers a
    Binding of any gated pod with Conflict (helper-56's review; verify said ok)."""
    snapshot = Snapshot(nodes=(node(),), pods=(pod("a", scheduling_gates=("kueue.x-k8s.io/admission",)),))
    violation = only(verify(snapshot, place(("a", "n1")), objects=True), "not-schedulable")
    assert "kueue.x-k8s.io/admission" in violation.message and "Conflict" in violation.message


def test_a_pod_of_a_timed_out_godel_group_is_not_schedulable() -> None:
    """Godel's final phase Timeout: its scheduler takes the group's pods no more, so a plan
    binding one asks for what no scheduler will do (the planner leaves them unplanned)."""
    pods = [member("a", "g")]
    live = group("g", 1, api=PodGroupAPI.GODEL_BYTEDANCE)
    assert check([node()], pods, place(("a", "n1")), (live,)).ok
    timed_out = replace(live, timed_out=True)
    violation = only(check([node()], pods, place(("a", "n1")), (timed_out,)), "not-schedulable")
    assert violation.subject == "ns/a" and "Timeout" in violation.message


def test_a_pod_to_create_is_held_to_its_workloads_pod_in_every_part() -> None:
    """kubectl create makes what the object says: a Pod whose metadata differs (here its labels
    leave the gang) is another pod than the one planned though its spec is the same, and one
    without apiVersion is refused by kubectl. spec.nodeName is the plan's, not compared."""
    labels = {"scheduling.x-k8s.io/pod-group": "g"}
    meta: dict[str, object] = {"name": "w0", "namespace": "ns", "labels": labels}
    made: dict[str, object] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    }
    to_create = [pod("w0", manifest=made)]

    def given(**parts: object) -> list[Placement]:
        manifest = {k: v for k, v in {**made, **parts}.items() if v is not None}
        return [Placement("ns", "w0", "n1", manifest=manifest)]

    assert check([node()], to_create, given()).ok
    violation = only(check([node()], to_create, given(metadata={**meta, "labels": {}})), "pod-object")
    assert violation.message == "the Pod to create is not the one its workload makes (metadata differs)"
    unversioned = only(check([node()], to_create, given(apiVersion=None)), "pod-object")
    assert unversioned.message.endswith("(apiVersion differs)")


def test_bound_pod_still_in_phase_pending_is_not_pending() -> None:
    result = check([node()], [pod("a", on="n1", phase=PodPhase.PENDING)], place(("a", "n1")))
    only(result, "not-pending")


def test_duplicate_placement_is_caught_once_and_counted_once() -> None:
    result = check([node("n1", cpu=1000), node("n2")], [pod("a")], place(("a", "n1"), ("a", "n2")))
    violation = only(result, "duplicate")
    assert "n1" in violation.message and "n2" in violation.message
    assert result.summary.pods_placed == 1


def test_unknown_node_is_caught() -> None:
    result = check([node("n1")], [pod("a")], place(("a", "n9")))
    violation = only(result, "unknown-node")
    assert violation.subject == "ns/a" and "n9" in violation.message
    # The pod is meant to run (it counts for its group), but no node of the snapshot is used.
    assert (result.summary.pods_placed, result.summary.nodes_used) == (1, 0)


def test_not_ready_node_is_caught() -> None:
    assert check([node(ready=True)], [pod("a")], place(("a", "n1"))).ok
    only(check([node(ready=False)], [pod("a")], place(("a", "n1"))), "node-not-ready")


def test_unschedulable_node_is_caught() -> None:
    only(check([node(unschedulable=True)], [pod("a")], place(("a", "n1"))), "unschedulable")


GPU_TAINT = Taint("gpu", "true", "NoSchedule")


@pytest.mark.parametrize(
    "taint, tolerations",
    [
        (GPU_TAINT, (Toleration("gpu", "Equal", "true", "NoSchedule"),)),
        (GPU_TAINT, (Toleration("gpu", "Equal", "true", ""),)),  # empty effect: all effects
        (GPU_TAINT, (Toleration("gpu", "Exists", "", "NoSchedule"),)),
        (GPU_TAINT, (Toleration("gpu", "Exists", "whatever", ""),)),  # Exists ignores value
        (GPU_TAINT, (Toleration("", "Exists", "", ""),)),  # tolerates everything
        (Taint("gpu", "true", "NoExecute"), (Toleration("", "Exists", "", "NoExecute"),)),
        (Taint("gpu", "true", "PreferNoSchedule"), ()),  # only a preference
        (GPU_TAINT, (Toleration("gpu", "", "true", "NoSchedule"),)),  # no operator: Equal
        (
            GPU_TAINT,
            (Toleration("other", "Exists", "", ""), Toleration("gpu", "Equal", "true", "")),
        ),
    ],
)
def test_tolerated_taints_pass(taint: Taint, tolerations: tuple[Toleration, ...]) -> None:
    result = check([node(taints=(taint,))], [pod("a", tolerations=tolerations)], place(("a", "n1")))
    assert result.ok, format_verification(result)


@pytest.mark.parametrize(
    "taint, tolerations",
    [
        (GPU_TAINT, ()),
        (GPU_TAINT, (Toleration("gpu", "Equal", "false", "NoSchedule"),)),  # wrong value
        (GPU_TAINT, (Toleration("gpu", "Equal", "true", "NoExecute"),)),  # wrong effect
        (GPU_TAINT, (Toleration("gpu2", "Exists", "", ""),)),  # wrong key
        (Taint("gpu", "true", "NoExecute"), (Toleration("", "Exists", "", "NoSchedule"),)),
        (GPU_TAINT, (Toleration("gpu", "", "false", ""),)),  # no operator: Equal, value counts
        (GPU_TAINT, (Toleration("gpu", "Above", "true", ""),)),  # not corev1's: tolerates nothing
    ],
)
def test_untolerated_taints_are_caught(taint: Taint, tolerations: tuple[Toleration, ...]) -> None:
    result = check([node(taints=(taint,))], [pod("a", tolerations=tolerations)], place(("a", "n1")))
    violation = only(result, "taint")
    assert f"gpu=true:{taint.effect}" in violation.message


def test_each_untolerated_taint_is_reported() -> None:
    taints = (Taint("a", "1", "NoSchedule"), Taint("b", "2", "NoExecute"))
    tolerate_a = (Toleration("a", "Equal", "1", ""),)
    assert rules(check([node(taints=taints)], [pod("p")], place(("p", "n1")))) == ["taint"] * 2
    result = check([node(taints=taints)], [pod("p", tolerations=tolerate_a)], place(("p", "n1")))
    assert "b=2:NoExecute" in only(result, "taint").message


def test_node_selector() -> None:
    nodes = [node("n1", labels={"zone": "a", "gpu": "yes"}), node("n2", labels={"zone": "b"})]
    pods = [pod("p", node_selector={"zone": "a", "gpu": "yes"})]
    assert check(nodes, pods, place(("p", "n1"))).ok
    result = check(nodes, pods, place(("p", "n2")))
    assert rules(result) == ["node-selector", "node-selector"]
    assert "zone=b" in result.violations[0].message
    assert "no label gpu" in result.violations[1].message


ZONE_A = {"zone": "a", "size": "8"}
ZONE_B = {"zone": "b", "size": "big"}
NO_ZONE: dict[str, str] = {}


@pytest.mark.parametrize(
    "selector, labels, matches",
    [
        (affinity(term(req("zone", "In", "a", "c"))), ZONE_A, True),
        (affinity(term(req("zone", "In", "a", "c"))), ZONE_B, False),
        (affinity(term(req("zone", "In", "a"))), NO_ZONE, False),
        (affinity(term(req("zone", "NotIn", "b"))), ZONE_A, True),
        (affinity(term(req("zone", "NotIn", "b"))), ZONE_B, False),
        (affinity(term(req("zone", "NotIn", "b"))), NO_ZONE, True),  # absent label matches
        (affinity(term(req("zone", "Exists"))), ZONE_B, True),
        (affinity(term(req("zone", "Exists"))), NO_ZONE, False),
        (affinity(term(req("zone", "DoesNotExist"))), NO_ZONE, True),
        (affinity(term(req("zone", "DoesNotExist"))), ZONE_A, False),
        (affinity(term(req("size", "Gt", "7"))), ZONE_A, True),
        (affinity(term(req("size", "Gt", "8"))), ZONE_A, False),  # strictly greater
        (affinity(term(req("size", "Gt", "1"))), ZONE_B, False),  # non-integer label
        (affinity(term(req("size", "Gt", "1"))), NO_ZONE, False),
        (affinity(term(req("size", "Lt", "9"))), ZONE_A, True),
        (affinity(term(req("size", "Lt", "8"))), ZONE_A, False),
        (affinity(term(req("size", "Lt", "-3"))), {"size": "-4"}, False),  # "-3" is no label value: no such term is built
        (affinity(term(req("size", "Gt", "1"))), {"size": "1_0"}, False),  # not ParseInt
        (affinity(term(req("size", "Gt", "x"))), ZONE_A, False),  # non-integer bound
        (affinity(term(req("zone", "In", "a"), req("size", "Gt", "100"))), ZONE_A, False),  # AND
        (affinity(term(req("zone", "In", "b")), term(req("zone", "In", "a"))), ZONE_A, True),  # OR
        (affinity(term()), ZONE_A, False),  # a term with no requirements matches nothing
        (affinity(), ZONE_A, False),  # no terms match nothing
        (affinity(term(req("zone", "Bogus", "a"))), ZONE_A, False),
        (affinity(term(req("zone", "In"))), ZONE_A, False),  # In without values is invalid
        (affinity(term(req("zone", "NotIn"))), NO_ZONE, False),  # and so is NotIn without values
        (affinity(term(req("zone", "In", ""))), {"zone": ""}, True),  # an empty value is a value
        (affinity(term(req("zone", "In", ""))), NO_ZONE, False),  # In needs the label
        (affinity(term(req("zone", "Exists", "a"))), ZONE_A, False),  # Exists takes no values
        (affinity(term(req("zone", "DoesNotExist", "a"))), NO_ZONE, False),  # nor DoesNotExist
        (affinity(term(req("size", "Gt", "1", "2"))), ZONE_A, False),  # Gt takes exactly one
        (affinity(term(req("size", "Gt", "6"))), ZONE_A, True),
        (affinity(term(req("size", "Gt", "+6"))), ZONE_A, False),  # ParseInt takes it, IsValidLabelValue not
        (affinity(term(req("size", "Gt", "-1"))), ZONE_A, False),  # so no negative bound is built
        (affinity(term(req("zone", "NotIn", "b c"))), ZONE_A, False),  # nor a value with a space
        (affinity(term(req("zone", "In", "a", "x" * 64))), ZONE_A, False),  # nor one over 63 characters
        (affinity(term(req("size", "Gt", "-1")), term(req("zone", "In", "a"))), ZONE_A, True),  # the others count
        (affinity(term(req("size", "Lt", "1"))), ZONE_B, False),  # "big" is no number, not 0
        (affinity(term(req("size", "Gt", "1"))), {"size": str(2**63)}, False),  # beyond int64
        (affinity(term(req("size", "Lt", str(2**63)))), ZONE_A, False),  # a bound beyond int64
        (affinity(term(req("size", "Lt", "0"))), {"size": str(-(2**63))}, True),  # int64's least
        (affinity(term(fields=(req("metadata.name", "In", "n1"),))), NO_ZONE, True),
        (affinity(term(fields=(req("metadata.name", "In", "n2"),))), NO_ZONE, False),
        (affinity(term(fields=(req("metadata.name", "NotIn", "n2"),))), NO_ZONE, True),
        (affinity(term(fields=(req("metadata.name", "NotIn", "n1"),))), NO_ZONE, False),
        (affinity(term(fields=(req("metadata.labels", "In", "n1"),))), NO_ZONE, False),
        (affinity(term(fields=(req("metadata.name", "In", "n1", "n2"),))), NO_ZONE, False),  # one value
        (affinity(term(fields=(req("metadata.name", "Exists", "n1"),))), NO_ZONE, False),  # In, NotIn only
        (
            affinity(term(req("zone", "In", "a"), fields=(req("metadata.name", "In", "n2"),))),
            ZONE_A,
            False,
        ),  # expressions AND fields
        (
            affinity(term(req("zone", "In", "a"), fields=(req("metadata.name", "In", "n1"),))),
            ZONE_A,
            True,
        ),
    ],
)
def test_required_node_affinity(
    selector: NodeSelector, labels: Mapping[str, str], matches: bool
) -> None:
    nodes, pods = [node("n1", labels=labels)], [pod("p", node_affinity=selector)]
    result = check(nodes, pods, place(("p", "n1")))
    if matches:
        assert result.ok, format_verification(result)
    else:
        only(result, "node-affinity")


def test_node_affinity_message_names_the_failing_requirement() -> None:
    selector = affinity(term(req("zone", "In", "a"), req("size", "Gt", "100")))
    result = check([node(labels=ZONE_A)], [pod("p", node_affinity=selector)], place(("p", "n1")))
    message = only(result, "node-affinity").message
    assert "size Gt [100] (node has size=8)" in message
    assert "zone In" not in message


def test_group_node_selector_applies_to_every_member() -> None:
    selector = affinity(term(req("pool", "In", "train")))
    pg = group("g", 2, api=PodGroupAPI.GODEL_BYTEDANCE, node_selector=selector)
    nodes = [node("n1", labels={"pool": "train"}), node("n2", labels={"pool": "serve"})]
    pods = [member("a", "g"), member("b", "g"), pod("loner")]
    assert check(nodes, pods, place(("a", "n1"), ("b", "n1"), ("loner", "n2")), (pg,)).ok
    result = check(nodes, pods, place(("a", "n1"), ("b", "n2")), (pg,))
    violation = only(result, "group-node-selector")
    assert violation.subject == "ns/b" and "ns/g" in violation.message


def test_capacity_at_the_edge() -> None:
    pods = [pod("r", cpu=2500, on="n1"), pod("a", cpu=1000), pod("b", cpu=500)]
    assert check([node(cpu=4000)], pods, place(("a", "n1"), ("b", "n1"))).ok
    violation = only(check([node(cpu=3999)], pods, place(("a", "n1"), ("b", "n1"))), "capacity")
    assert violation.subject == "n1"
    assert violation.message == "cpu: running 2500m + placed 1500m = 4000m > allocatable 3999m"



def test_a_node_that_does_not_say_how_many_pods_it_takes_takes_the_kubelet_default() -> None:
    """110, the kubelet's default --max-pods, as the planner assumes (and the loader fills in
    for YAML): a Node built without ``pods`` was once a capacity violation for every pod."""
    bare = Node("n1", {}, {"cpu": 200_000})
    pods = [pod(f"p{i}", cpu=1) for i in range(111)]
    assert check([bare], pods[:110], place(*((f"p{i}", "n1") for i in range(110)))).ok
    violation = only(check([bare], pods, place(*((f"p{i}", "n1") for i in range(111)))), "capacity")
    assert violation.message == "pods: running 0 + placed 111 = 111 > allocatable 110"

def test_finished_pods_do_not_consume_capacity() -> None:
    pods = [
        pod("done", cpu=3000, on="n1", phase=PodPhase.SUCCEEDED),
        pod("broke", cpu=3000, on="n1", phase=PodPhase.FAILED),
        pod("a", cpu=1000),
    ]
    assert check([node(cpu=1000)], pods, place(("a", "n1"))).ok
    running = [pod("busy", cpu=1, on="n1"), pod("a", cpu=1000)]
    only(check([node(cpu=1000)], running, place(("a", "n1"))), "capacity")


def test_host_ports_clash_between_placed_pods_as_with_running_ones() -> None:
    """NodePorts, pod by pod as they bind: two placed pods binding one protocol and port on one
    address, or one of them on 0.0.0.0, clash with no running pod there; the later (by key) is
    the one named. On two addresses, or two protocols, they share the node."""
    def ported(name: str, *ports: HostPort, on: str | None = None, phase: PodPhase | None = None) -> Pod:
        return pod(name, on=on, phase=phase, host_ports=ports)

    pairs = place(("a", "n1"), ("b", "n1"))
    violation = only(check([node()], [ported("a", HostPort(80)), ported("b", HostPort(80, "TCP", "10.0.0.1"))], pairs), "host-port")
    assert (violation.subject, violation.message) == (
        "ns/b", "hostPort 80/TCP on 10.0.0.1 is bound on node n1 already (on 0.0.0.0, by pod ns/a)",
    )
    only(check([node()], [ported("a", HostPort(80, "UDP", "10.0.0.2")), ported("b", HostPort(80, "UDP", "10.0.0.2"))], pairs), "host-port")
    apart = [ported("a", HostPort(80, "TCP", "10.0.0.1")), ported("b", HostPort(80, "TCP", "10.0.0.2"), HostPort(80, "UDP"))]
    assert check([node()], apart, pairs).ok
    # A finished pod binds nothing; one being deleted binds its port till it is gone.
    done = ported("done", HostPort(80), on="n1", phase=PodPhase.FAILED)
    assert check([node()], [done, ported("a", HostPort(80))], place(("a", "n1"))).ok
    going = replace(ported("going", HostPort(80), on="n1"), deleting=True)
    only(check([node()], [going, ported("a", HostPort(80))], place(("a", "n1"))), "host-port")


def test_resource_missing_from_allocatable_is_zero() -> None:
    gpu_pod = pod("a", containers=(Container("c", {"cpu": 100, "nvidia.com/gpu": 1}),))
    assert check([node(gpus=1)], [gpu_pod], place(("a", "n1"))).ok
    violation = only(check([node()], [gpu_pod], place(("a", "n1"))), "capacity")
    assert violation.message.startswith("nvidia.com/gpu:")
    assert "allocatable 0" in violation.message


def test_every_pod_takes_a_pods_slot() -> None:
    pods = [pod("r", cpu=0, on="n1"), pod("a", cpu=0), pod("b", cpu=0)]
    assert check([node(pods=3)], pods, place(("a", "n1"), ("b", "n1"))).ok
    violation = only(check([node(pods=2)], pods, place(("a", "n1"), ("b", "n1"))), "capacity")
    assert violation.message == "pods: running 1 + placed 2 = 3 > allocatable 2"


def test_memory_is_reported_in_binary_units() -> None:
    big = pod("a", containers=(Container("c", {"memory": 9 * GIB}),))
    message = only(check([node()], [big], place(("a", "n1"))), "capacity").message
    assert message == "memory: running 0 + placed 9Gi = 9Gi > allocatable 8Gi"


def test_a_capacity_line_gives_every_figure_in_one_unit() -> None:
    """'2298Mi + 64Gi = 67834Mi > 60069807Ki' asked the reader to convert before comparing:
    every figure of a line is in the largest binary unit that writes each of them exactly, so
    the comparison reads digit for digit as it is made (helper reviews)."""
    mib, kib = 2**20, 2**10
    running = pod("r", on="n1", containers=(Container("c", {"memory": 2298 * mib}),))
    big = pod("a", containers=(Container("c", {"memory": 64 * GIB}),))
    small = node(memory=60069807 * kib)
    message = only(check([small], [running, big], place(("a", "n1"))), "capacity").message
    assert message == "memory: running 2353152Ki + placed 67108864Ki = 69462016Ki > allocatable 60069807Ki"
    even = node(memory=60 * GIB)
    message = only(check([even], [running, big], place(("a", "n1"))), "capacity").message
    assert message == "memory: running 2298Mi + placed 65536Mi = 67834Mi > allocatable 61440Mi"


def test_a_min_resources_line_gives_both_figures_in_one_unit() -> None:
    pg = group("g", 1, min_resources={"memory": 2 * GIB})
    pods = [member("a", "g", containers=(Container("c", {"memory": 1536 * 2**20}),))]
    violation = only(check([node()], pods, place(("a", "n1")), (pg,)), "min-resources")
    assert violation.message == "memory: running, succeeded and placed members request 1536Mi < minResources 2048Mi"


def test_a_terminating_pod_still_holds_its_room() -> None:
    """kube-scheduler counts a bound pod with a deletionTimestamp on its node until it is gone:
    its room is not free yet, so a plan may not count on it."""
    pods = [pod("leaving", cpu=3000, on="n1", deleting=True), pod("a", cpu=1000)]
    assert check([node(cpu=4000)], pods, place(("a", "n1"))).ok
    only(check([node(cpu=3999)], pods, place(("a", "n1"))), "capacity")


def test_overcommitted_node_without_placements_is_not_the_plans_fault() -> None:
    pods = [pod("r", cpu=5000, on="n1"), pod("a")]
    assert check([node("n1", cpu=4000), node("n2")], pods, place(("a", "n2"))).ok


def test_placed_pods_are_checked_only_for_what_they_request() -> None:
    """As the scheduler's Fit filter: a pod asking for no cpu lands on a cpu-overcommitted node."""
    pods = [pod("r", cpu=5000, on="n1"), pod("a", cpu=0), pod("b", cpu=1)]
    assert check([node(cpu=4000)], pods, place(("a", "n1"))).ok
    only(check([node(cpu=4000)], pods, place(("b", "n1"))), "capacity")


def test_init_container_peak_wins_over_containers() -> None:
    init = pod(
        "a",
        containers=(Container("c1", {"cpu": 500}), Container("c2", {"cpu": 500})),
        init_containers=(Container("i1", {"cpu": 3000}), Container("i2", {"cpu": 2000})),
    )
    assert check([node(cpu=3000)], [init], place(("a", "n1"))).ok
    only(check([node(cpu=2999)], [init], place(("a", "n1"))), "capacity")


def test_init_containers_are_not_summed() -> None:
    init = pod(
        "a",
        cpu=100,
        init_containers=(Container("i1", {"cpu": 1000}), Container("i2", {"cpu": 1000})),
    )
    assert check([node(cpu=1000)], [init], place(("a", "n1"))).ok


def test_init_container_max_is_per_resource() -> None:
    init = pod(
        "a",
        containers=(Container("c", {"cpu": 2000, "memory": 1 * GIB}),),
        init_containers=(Container("i", {"cpu": 100, "memory": 4 * GIB}),),
    )
    assert check([node(cpu=2000, memory=4 * GIB)], [init], place(("a", "n1"))).ok
    result = check([node(cpu=2000, memory=4 * GIB - 1)], [init], place(("a", "n1")))
    assert only(result, "capacity").message.startswith("memory:")


def test_sidecar_runs_beside_containers_and_later_init_containers() -> None:
    """containers 1000 + sidecar 500 run together (1500); an init after the sidecar peaks at
    its own 1200 + the sidecar 500 = 1700, which is the pod's effective request."""
    sidecar_first = pod(
        "a",
        init_containers=(
            Container("proxy", {"cpu": 500}, restart_policy="Always"),
            Container("setup", {"cpu": 1200}),
        ),
    )
    assert check([node(cpu=1700)], [sidecar_first], place(("a", "n1"))).ok
    only(check([node(cpu=1699)], [sidecar_first], place(("a", "n1"))), "capacity")


def test_init_before_sidecar_does_not_run_beside_it() -> None:
    setup_first = pod(
        "a",
        init_containers=(
            Container("setup", {"cpu": 1200}),
            Container("proxy", {"cpu": 500}, restart_policy="Always"),
        ),
    )
    assert check([node(cpu=1500)], [setup_first], place(("a", "n1"))).ok
    only(check([node(cpu=1499)], [setup_first], place(("a", "n1"))), "capacity")


def test_overhead_is_added() -> None:
    with_overhead = pod("a", cpu=1000, overhead={"cpu": 250})
    assert check([node(cpu=1250)], [with_overhead], place(("a", "n1"))).ok
    only(check([node(cpu=1249)], [with_overhead], place(("a", "n1"))), "capacity")


def test_pod_level_requests_are_what_a_pod_holds_and_asks() -> None:
    """A running pod and a pending one with spec.resources and bare containers: 6 cpu each, so
    not both on an 8-cpu node (gangplan had placed them together; user review G)."""
    running = pod("r", cpu=0, on="n1", pod_level_requests={"cpu": 6000})
    pending = pod("a", cpu=0, pod_level_requests={"cpu": 6000})
    only(check([node(cpu=8000)], [running, pending], place(("a", "n1"))), "capacity")
    assert check([node(cpu=12000)], [running, pending], place(("a", "n1"))).ok


def test_pod_level_requests_replace_the_containers_and_overhead_comes_on_top() -> None:
    """Kubernetes' PodRequests: spec.resources replaces the containers' sum (not added to it),
    then spec.overhead is added to what that leaves: 3000 + 250, whatever the containers ask."""
    both = pod("a", cpu=2000, pod_level_requests={"cpu": 3000}, overhead={"cpu": 250})
    assert check([node(cpu=3250)], [both], place(("a", "n1"))).ok
    violation = only(check([node(cpu=3249)], [both], place(("a", "n1"))), "capacity")
    assert violation.message == "cpu: running 0m + placed 3250m = 3250m > allocatable 3249m"


def test_running_pods_use_the_same_request_rules() -> None:
    running = pod("r", cpu=100, on="n1", init_containers=(Container("i", {"cpu": 3000}),))
    pods = [running, pod("a", cpu=1000)]
    assert check([node(cpu=4000)], pods, place(("a", "n1"))).ok
    only(check([node(cpu=3999)], pods, place(("a", "n1"))), "capacity")


def test_group_reaching_min_member_passes() -> None:
    pods = [member("a", "g"), member("b", "g"), member("c", "g")]
    result = check([node()], pods, place(("a", "n1"), ("b", "n1"), ("c", "n1")), (group("g", 3),))
    assert result.ok
    assert result.summary.groups_with_placements == 1


def test_group_one_pod_short_is_caught() -> None:
    pods = [member("a", "g"), member("b", "g"), member("c", "g")]
    result = check([node()], pods, place(("a", "n1"), ("b", "n1")), (group("g", 3),))
    violation = only(result, "min-member")
    assert violation.subject == "ns/g"
    assert violation.message == "2 of minMember 3 (running 0 + placed 2)"


def test_running_members_count_toward_min_member() -> None:
    pods = [member("r", "g", on="n1"), member("a", "g"), member("b", "g")]
    assert check([node()], pods, place(("a", "n1"), ("b", "n1")), (group("g", 3),)).ok
    failed = member("r", "g", on="n1", phase=PodPhase.FAILED)
    finished = [failed, member("a", "g"), member("b", "g")]
    only(check([node()], finished, place(("a", "n1"), ("b", "n1")), (group("g", 3),)), "min-member")


def test_a_group_with_running_members_can_still_fall_short() -> None:
    """Running members count toward minMember, they do not excuse the rest: one running and
    one placed of minMember 3 is short, the gang's other pending pod left unplaced."""
    pods = [member("r", "g", on="n1"), member("a", "g"), member("b", "g")]
    violation = only(check([node()], pods, place(("a", "n1")), (group("g", 3),)), "min-member")
    assert violation.message == "2 of minMember 3 (running 1 + placed 1)"


def test_group_already_at_quorum_with_nothing_placed_is_quiet() -> None:
    pods = [member("r1", "g", on="n1"), member("r2", "g", on="n1"), member("p", "g"), pod("x")]
    assert check([node()], pods, place(("x", "n1")), (group("g", 2),)).ok
    short = [member("r1", "g", on="n1"), member("p", "g"), pod("x")]
    assert check([node()], short, place(("x", "n1")), (group("g", 2),)).ok


def test_members_placed_on_an_unknown_node_still_count_for_the_group() -> None:
    pods = [member("a", "g"), member("b", "g")]
    result = check([node()], pods, place(("a", "n1"), ("b", "n9")), (group("g", 2),))
    assert rules(result) == ["unknown-node"]


@pytest.mark.parametrize(
    "labels, annotations",
    [
        ({"scheduling.x-k8s.io/pod-group": "g"}, {}),
        ({"pod-group.scheduling.sigs.k8s.io": "g"}, {}),
        ({}, {"scheduling.k8s.io/group-name": "g"}),
        ({}, {"scheduling.volcano.sh/group-name": "g"}),
        ({}, {"godel.bytedance.com/pod-group-name": "g"}),
        ({"godel.bytedance.com/pod-group-name": "g"}, {}),
    ],
)
def test_every_membership_key_joins_the_group(
    labels: dict[str, str], annotations: dict[str, str]
) -> None:
    pods = [pod(n, labels=labels, annotations=annotations) for n in ("a", "b")]
    result = check([node()], pods, place(("a", "n1")), (group("g", 2),))
    assert only(result, "min-member").subject == "ns/g"
    assert check([node()], pods, place(("a", "n1"), ("b", "n1")), (group("g", 2),)).ok


def test_membership_is_per_namespace() -> None:
    pods = [member("a", "g", namespace="other"), member("b", "g", namespace="other")]
    result = check([node()], pods, place(("a", "n1"), namespace="other"), (group("g", 2),))
    assert result.ok


def test_pod_naming_a_missing_group_is_a_group_of_one() -> None:
    pods = [member("a", "nope"), member("b", "nope")]
    assert check([node()], pods, place(("a", "n1")), (group("g", 2),)).ok


def test_kueue_plain_pod_group() -> None:
    def kueue(name: str, total: str = "3") -> Pod:
        return pod(
            name,
            labels={"kueue.x-k8s.io/pod-group-name": "train"},
            annotations={"kueue.x-k8s.io/pod-group-total-count": total},
        )

    pods = [kueue("a"), kueue("b"), kueue("c")]
    assert check([node()], pods, place(("a", "n1"), ("b", "n1"), ("c", "n1"))).ok
    violation = only(check([node()], pods, place(("a", "n1"), ("b", "n1"))), "min-member")
    assert violation.subject == "ns/train"
    assert violation.message == "2 of minMember 3 (running 0 + placed 2)"
    # A sign, as Go's strconv.Atoi reads it (Kueue, and the planner): "+3" had made the pods
    # lone ones, and one of three placed passed (review 19 T F1).
    signed = [kueue(name, "+3") for name in "abc"]
    assert only(check([node()], signed, place(("a", "n1"))), "min-member").message == "1 of minMember 3 (running 0 + placed 1)"


def test_a_kueue_fast_admission_group_is_held_to_its_runnable_pods() -> None:
    """Kueue admits a fast-admitted group with the runnable pods it has: neither a Failed member
    nor an unbound one being deleted is one (kills each dropped from verify's count)."""
    labels = {"kueue.x-k8s.io/pod-group-name": "fast"}
    annotations = {"kueue.x-k8s.io/pod-group-total-count": "4", "kueue.x-k8s.io/pod-group-fast-admission": "true"}
    pods = [
        pod("a", labels=labels, annotations=annotations),
        pod("b", labels=labels, annotations=annotations),
        pod("c", labels=labels, annotations=annotations, phase=PodPhase.FAILED),
        pod("d", labels=labels, annotations=annotations, deleting=True),
    ]
    assert check([node()], pods, place(("a", "n1"), ("b", "n1"))).ok
    assert only(check([node()], pods, place(("a", "n1"))), "min-member").message == "1 of minMember 2 (running 0 + placed 1)"


def test_a_plan_calling_a_kueue_fast_admission_group_of_failed_pods_placed_is_caught() -> None:
    """With no runnable pod Kueue admits nothing: the group keeps its total count, and is no
    group of none that any plan places (kills dropping ``or gang.min_member``)."""
    labels = {"kueue.x-k8s.io/pod-group-name": "fast"}
    annotations = {"kueue.x-k8s.io/pod-group-total-count": "3", "kueue.x-k8s.io/pod-group-fast-admission": "true"}
    pods = tuple(pod(f"f-{i}", labels=labels, annotations=annotations, phase=PodPhase.FAILED) for i in range(2))
    result = verify(Snapshot(nodes=(node(),), pods=pods), [], claims=[Claim("ns/fast", True, 0, form="kueue")])
    assert only(result, "outcome").message == (
        "the plan says placed, but min-member: 0 of minMember 3 (running 0 + placed 0)"
    )


def test_a_podgroup_object_wins_over_a_kueue_group_and_a_missing_name() -> None:
    both = {
        "labels": {"kueue.x-k8s.io/pod-group-name": "k", "scheduling.x-k8s.io/pod-group": "nope"},
        "annotations": {
            "kueue.x-k8s.io/pod-group-total-count": "1",
            "scheduling.volcano.sh/group-name": "g",
        },
    }
    pods = [pod("a", **both), pod("b", **both)]  # type: ignore[arg-type]
    result = check([node()], pods, place(("a", "n1")), (group("g", 2),))
    assert only(result, "min-member").subject == "ns/g"


def test_a_pod_naming_two_groups_joins_the_first_in_designs_order() -> None:
    """DESIGN section 1 lists the scheduler-plugins label before Volcano's annotation: a pod
    carrying both joins g, and g's minMember holds, not the smaller one of h."""
    both = {
        "labels": {"scheduling.x-k8s.io/pod-group": "g"},
        "annotations": {"scheduling.volcano.sh/group-name": "h"},
    }
    pods = [pod("a", **both), pod("b", **both)]  # type: ignore[arg-type]
    groups = (group("g", 2), group("h", 1, api=PodGroupAPI.VOLCANO))
    result = check([node()], pods, place(("a", "n1")), groups)
    assert only(result, "min-member").subject == "ns/g"
    assert check([node()], pods, place(("a", "n1"), ("b", "n1")), groups).ok


def test_kueue_members_that_disagree_on_the_count_are_held_to_the_largest() -> None:
    """Kueue wants every member to carry the same total count; where they differ the largest
    is the quorum (the planner warns so), since a gang placed at a smaller count would start
    short of the pods some member waits for. Whichever member comes first or last."""

    def kueue(name: str, total: str) -> Pod:
        return pod(
            name,
            labels={"kueue.x-k8s.io/pod-group-name": "train"},
            annotations={"kueue.x-k8s.io/pod-group-total-count": total},
        )

    for counts in (("3", "2", "2"), ("2", "3", "2"), ("2", "2", "3")):
        pods = [kueue(name, total) for name, total in zip("abc", counts)]
        violation = only(check([node()], pods, place(("a", "n1"), ("b", "n1"))), "min-member")
        assert violation.message == "2 of minMember 3 (running 0 + placed 2)"
        assert check([node()], pods, place(("a", "n1"), ("b", "n1"), ("c", "n1"))).ok


def test_kueue_label_without_a_count_is_a_group_of_one() -> None:
    pods = [pod(n, labels={"kueue.x-k8s.io/pod-group-name": "k"}) for n in ("a", "b")]
    assert check([node()], pods, place(("a", "n1"))).ok


def test_min_resources() -> None:
    pg = group("g", 1, min_resources={"cpu": 3000})
    pods = [member("a", "g"), member("b", "g"), member("c", "g")]
    assert check([node()], pods, place(("a", "n1"), ("b", "n1"), ("c", "n1")), (pg,)).ok
    violation = only(check([node()], pods, place(("a", "n1"), ("b", "n1")), (pg,)), "min-resources")
    assert violation.message == "cpu: running, succeeded and placed members request 2000m < minResources 3000m"
    with_running = [member("r", "g", on="n1"), *pods]
    assert check([node()], with_running, place(("a", "n1"), ("b", "n1")), (pg,)).ok


def test_min_resources_counts_effective_requests() -> None:
    pg = group("g", 1, min_resources={"cpu": 1500})
    pods = [member("a", "g", cpu=1000, overhead={"cpu": 500})]
    assert check([node()], pods, place(("a", "n1")), (pg,)).ok


def test_min_resources_at_the_edge() -> None:
    pg = group("g", 1, min_resources={"cpu": 3000})
    exact = [member("a", "g"), member("b", "g"), member("c", "g", cpu=1000)]
    short = [member("a", "g"), member("b", "g"), member("c", "g", cpu=999)]
    everything = place(("a", "n1"), ("b", "n1"), ("c", "n1"))
    assert check([node()], exact, everything, (pg,)).ok
    violation = only(check([node()], short, everything, (pg,)), "min-resources")
    assert violation.message == "cpu: running, succeeded and placed members request 2999m < minResources 3000m"


def test_min_resources_holds_every_resource_it_names() -> None:
    """Enough cpu does not make up for too little memory."""
    pg = group("g", 1, min_resources={"cpu": 2000, "memory": 2 * GIB})

    def sized(name: str, memory: int) -> Pod:
        return member(name, "g", containers=(Container("c", {"cpu": 1000, "memory": memory}),))

    both = place(("a", "n1"), ("b", "n1"))
    assert check([node()], [sized("a", GIB), sized("b", GIB)], both, (pg,)).ok
    result = check([node()], [sized("a", GIB), sized("b", GIB - 1)], both, (pg,))
    assert only(result, "min-resources").message.startswith("memory:")


def volcano_task(name: str, role: str, **kwargs: object) -> Pod:
    """A member of Volcano PodGroup g in task ``role``."""
    annotations = {"scheduling.k8s.io/group-name": "g", "volcano.sh/task-spec": role}
    return pod(name, annotations=annotations, **kwargs)  # type: ignore[arg-type]


def test_volcano_min_task_member() -> None:
    pg = group("g", 3, api=PodGroupAPI.VOLCANO, min_task_member={"ps": 1, "worker": 2})

    def task(name: str, role: str, by_label: bool = False) -> Pod:
        role_key = {"volcano.sh/task-spec": role}
        annotations = {"scheduling.k8s.io/group-name": "g"}
        if by_label:
            return pod(name, annotations=annotations, labels=role_key)
        return pod(name, annotations={**annotations, **role_key})

    pods = [task("ps", "ps"), task("ps-label", "ps", by_label=True)]
    pods += [task(f"w{i}", "worker") for i in (1, 2, 3)]
    assert check([node()], pods, place(("ps", "n1"), ("w1", "n1"), ("w2", "n1")), (pg,)).ok
    result = check([node()], pods, place(("w1", "n1"), ("w2", "n1"), ("w3", "n1")), (pg,))
    violation = only(result, "min-task-member")
    assert violation.message == "task ps: 0 running, succeeded and placed < minTaskMember 1"
    # Volcano's getTaskID reads the annotation alone: with the label only, a pod is in no task.
    labelled = check([node()], pods, place(("ps-label", "n1"), ("w1", "n1"), ("w2", "n1")), (pg,))
    assert only(labelled, "min-task-member").message == violation.message


def test_volcano_checks_task_minimums_only_when_min_member_covers_them() -> None:
    """Volcano's CheckTaskValid: "if job minAvailable is less than sumof(task minAvailable),
    skip this check". minMember 2 < 1 + 2, so two workers and no ps make a valid gang."""
    pg = group("g", 2, api=PodGroupAPI.VOLCANO, min_task_member={"ps": 1, "worker": 2})
    pods = [volcano_task("ps", "ps"), volcano_task("w1", "worker"), volcano_task("w2", "worker")]
    assert check([node()], pods, place(("w1", "n1"), ("w2", "n1")), (pg,)).ok


def test_running_and_succeeded_tasks_count_toward_their_minimum() -> None:
    """Volcano counts a task's allocated (running) and succeeded pods as ready; a failed one
    is not, so the ps is then missing from both minimums."""
    pg = group("g", 3, api=PodGroupAPI.VOLCANO, min_task_member={"ps": 1, "worker": 2})
    workers = [volcano_task("w1", "worker"), volcano_task("w2", "worker")]
    both = place(("w1", "n1"), ("w2", "n1"))
    for phase in (PodPhase.RUNNING, PodPhase.SUCCEEDED):
        ps = volcano_task("ps", "ps", on="n1", phase=phase)
        assert check([node()], [ps, *workers], both, (pg,)).ok, phase
    failed = volcano_task("ps", "ps", on="n1", phase=PodPhase.FAILED)
    assert rules(check([node()], [failed, *workers], both, (pg,))) == ["min-member", "min-task-member"]


def job_group_snapshot(
    queue_b: str = "q", b_running: int = 0
) -> tuple[list[Pod], tuple[PodGroup, ...]]:
    groups = (
        group("a", 2, api=PodGroupAPI.VOLCANO, sub_group="sg", queue="q"),
        group("b", 2, api=PodGroupAPI.VOLCANO, sub_group="sg", queue=queue_b),
    )
    pods = [member("a1", "a"), member("a2", "a"), member("b1", "b"), member("b2", "b")]
    pods += [member(f"rb{i}", "b", on="n1") for i in range(b_running)]
    return pods, groups


def test_job_group_placed_whole_passes() -> None:
    pods, groups = job_group_snapshot()
    everything = place(("a1", "n1"), ("a2", "n1"), ("b1", "n1"), ("b2", "n1"))
    assert check([node()], pods, everything, groups).ok


def test_job_group_with_one_member_left_out_is_caught() -> None:
    pods, groups = job_group_snapshot()
    violation = only(check([node()], pods, place(("a1", "n1"), ("a2", "n1")), groups), "job-group")
    assert violation.subject == "ns/b"
    assert "JobGroup ns/sg" in violation.message and "ns/a" in violation.message
    assert "0 of minMember 2" in violation.message


def test_job_group_member_already_running_needs_nothing() -> None:
    pods, groups = job_group_snapshot(b_running=2)
    assert check([node()], pods, place(("a1", "n1"), ("a2", "n1")), groups).ok


def test_job_group_member_short_with_its_own_placements_is_a_min_member() -> None:
    pods, groups = job_group_snapshot()
    result = check([node()], pods, place(("a1", "n1"), ("a2", "n1"), ("b1", "n1")), groups)
    assert only(result, "min-member").subject == "ns/b"


def test_a_finished_member_none_of_whose_pods_waits_holds_no_job_group_back() -> None:
    """b's job ran to the end (Completed) and its pods are gone: a's placement alone is the
    JobGroup's, not one member short. Not finished, b is the missing member."""
    pods, groups = job_group_snapshot()
    done = (groups[0], replace(groups[1], finished=True))
    a_only = [p for p in pods if p.name.startswith("a")]
    assert check([node()], a_only, place(("a1", "n1"), ("a2", "n1")), done).ok
    only(check([node()], a_only, place(("a1", "n1"), ("a2", "n1")), groups), "job-group")


def test_a_finished_group_whose_pods_wait_is_all_or_nothing_again() -> None:
    """Finished excuses a group none of whose pods waits; pods waiting again (a restarted
    job) are a gang like any other, held to minMember."""
    pg = group("g", 2, api=PodGroupAPI.VOLCANO, finished=True)
    pods = [member("a", "g"), member("b", "g")]
    assert only(check([node()], pods, place(("a", "n1")), (pg,)), "min-member").subject == "ns/g"
    assert check([node()], pods, place(("a", "n1"), ("b", "n1")), (pg,)).ok


def test_different_queues_do_not_form_a_job_group() -> None:
    pods, groups = job_group_snapshot(queue_b="other")
    assert check([node()], pods, place(("a1", "n1"), ("a2", "n1")), groups).ok


def test_a_plan_naming_a_group_the_snapshot_lacks_is_caught() -> None:
    """A Plan's record of a group the snapshot does not have (a plan of another snapshot, or a
    name mistyped) says nothing true of this one."""
    snapshot = Snapshot(nodes=(node(),), pods=(member("a", "g"),), pod_groups=(group("g", 1),))
    placements = place(("a", "n1"))
    assert verify(snapshot, placements, claims=[Claim("ns/g", True, 1)]).ok
    result = verify(snapshot, placements, claims=[Claim("ns/g", True, 1), Claim("ns/ghost", False, 0)])
    violation = only(result, "outcome")
    assert violation.subject == "ns/ghost"
    assert violation.message == "the plan names a group the snapshot does not have"


def test_a_plans_pending_count_leaves_out_the_pods_no_scheduler_may_bind() -> None:
    """A Plan's "pending" counts the pods it could place: one gated by another controller or
    being deleted is "blocked" there (kube-scheduler leaves it alone), not pending."""
    gated = member("b", "g", scheduling_gates=("example.com/wait",))
    pods = (member("a", "g"), gated, member("c", "g", deleting=True))
    snapshot = Snapshot(nodes=(node(),), pods=pods, pod_groups=(group("g", 1),))
    placements = place(("a", "n1"))
    assert verify(snapshot, placements, claims=[Claim("ns/g", True, 1, pending=1)]).ok
    violation = only(verify(snapshot, placements, claims=[Claim("ns/g", True, 1, pending=3)]), "outcome")
    assert violation.message == (
        "the plan says 3 pending; the snapshot has 1 pending pods of it that may be bound"
    )


def test_format_verification_lines() -> None:
    pods = [member("a", "g"), member("b", "g"), pod("x", cpu=5000)]
    placements = place(("a", "n1"), ("x", "n1"), ("ghost", "n1"))
    result = check([node()], pods, placements, (group("g", 2),))
    assert format_verification(result) == [
        "unknown-pod ns/ghost: no such pod in the snapshot",
        "capacity n1: cpu: running 0m + placed 6000m = 6000m > allocatable 4000m",
        "min-member ns/g: 1 of minMember 2 (running 0 + placed 1)",
    ]
    assert not result.ok


def test_group_node_selector_reaches_members_joined_by_godel_annotation() -> None:
    selector = affinity(term(req("pool", "In", "train")))
    pg = group("g", 1, api=PodGroupAPI.GODEL_BYTEDANCE, node_selector=selector)
    pods = [pod("a", annotations={"godel.bytedance.com/pod-group-name": "g"})]
    nodes = [node("n1", labels={"pool": "train"}), node("n2", labels={"pool": "serve"})]
    assert check(nodes, pods, place(("a", "n1")), (pg,)).ok
    result = check(nodes, pods, place(("a", "n2")), (pg,))
    assert only(result, "group-node-selector").subject == "ns/a"


# Topology: bigPod -> miniPod -> tor -> node. A domain is its path of values from the top,
# so n4's tor t1 (under mp-1) is not n1's tor t1 (under mp-0), and n5's mp-0 is not n1's.
BIGPOD = "network.example.com/bigpod"
MINIPOD = "network.example.com/minipod"
TOR = "network.example.com/tor"
HOSTNAME = "kubernetes.io/hostname"
LEVELS = (BIGPOD, MINIPOD, TOR)


def topo_node(name: str, bigpod: str, minipod: str, tor: str, **labels: str) -> Node:
    return node(name, labels={BIGPOD: bigpod, MINIPOD: minipod, TOR: tor, **labels})


TOPO_NODES = [
    topo_node("n1", "bp-0", "mp-0", "t1", zone="a"),
    topo_node("n2", "bp-0", "mp-0", "t1", zone="a"),
    topo_node("n3", "bp-0", "mp-0", "t2", zone="a"),
    topo_node("n4", "bp-0", "mp-1", "t1", zone="b"),
    topo_node("n5", "bp-1", "mp-0", "t1", zone="a"),
    node("out", labels={MINIPOD: "mp-0", TOR: "t1"}),  # no bigpod label: outside at every level
]


def godel(name: str, min_member: int, **kwargs: Unpack[PodGroupFields]) -> PodGroup:
    return group(name, min_member, api=PodGroupAPI.GODEL_BYTEDANCE, **kwargs)


def topo_check(
    pods: list[Pod],
    placements: list[Placement],
    *groups: PodGroup,
    levels: tuple[str, ...] = LEVELS,
) -> Verification:
    return check(TOPO_NODES, pods, placements, groups, levels)


def test_required_term_satisfied_passes() -> None:
    pg = godel("g", 3, required_topology=(TOR,))
    pods = [member("r", "g", on="n1"), member("a", "g"), member("b", "g")]
    result = topo_check(pods, place(("a", "n1"), ("b", "n2")), pg)
    assert result.ok, format_verification(result)


def test_members_in_two_tors_under_one_required_tor_are_caught() -> None:
    pg = godel("g", 4, required_topology=(TOR,))
    pods = [member(name, "g") for name in ("a", "b", "c", "d")]
    result = topo_check(pods, place(("a", "n1"), ("b", "n1"), ("c", "n2"), ("d", "n3")), pg)
    violation = only(result, "required-topology")
    assert violation.subject == "ns/g"
    assert violation.message == (
        f"required {TOR}: members span 2 domains (bp-0/mp-0/t1: 3 pods, bp-0/mp-0/t2: 1 pod)"
    )


def test_running_member_pins_the_required_domain() -> None:
    pg = godel("g", 3, required_topology=(TOR,))
    pods = [member("r", "g", on="n3"), member("a", "g"), member("b", "g")]
    violation = only(topo_check(pods, place(("a", "n1"), ("b", "n2")), pg), "required-topology")
    assert violation.message == (
        f"required {TOR}: members span 2 domains "
        "(bp-0/mp-0/t1: 2 pods, bp-0/mp-0/t2: 1 pod (1 running))"
    )
    assert topo_check(pods, place(("a", "n3"), ("b", "n3")), pg).ok


def test_finished_members_do_not_pin_a_domain() -> None:
    pg = godel("g", 2, required_topology=(TOR,))
    pods = [
        member("done", "g", on="n5", phase=PodPhase.SUCCEEDED),
        member("a", "g"),
        member("b", "g"),
    ]
    assert topo_check(pods, place(("a", "n1"), ("b", "n2")), pg).ok


def test_same_tor_value_under_two_minipods_is_two_domains() -> None:
    pg = godel("g", 2, required_topology=(TOR,))
    pods = [member("a", "g"), member("b", "g")]
    result = topo_check(pods, place(("a", "n1"), ("b", "n4")), pg)
    assert only(result, "required-topology").message == (
        f"required {TOR}: members span 2 domains (bp-0/mp-0/t1: 1 pod, bp-0/mp-1/t1: 1 pod)"
    )


def test_same_minipod_value_under_two_bigpods_is_two_domains() -> None:
    pg = godel("g", 2, required_topology=(MINIPOD,))
    pods = [member("a", "g"), member("b", "g")]
    assert topo_check(pods, place(("a", "n1"), ("b", "n3")), pg).ok  # t1 and t2 share mp-0
    result = topo_check(pods, place(("a", "n1"), ("b", "n5")), pg)
    message = only(result, "required-topology").message
    assert "2 domains (bp-0/mp-0: 1 pod, bp-1/mp-0: 1 pod)" in message


def test_a_term_that_names_no_level_is_ignored_as_the_planner_warns() -> None:
    """With levels given, a topologyKey that is not one of them binds nothing: the planner
    warns "is not a topology level; the term is ignored", and the verifier agrees (it once
    checked such a key by its own label values, and so refused the planner's own plans)."""
    pg = godel("g", 2, required_topology=("zone",))
    pods = [member("a", "g"), member("b", "g")]
    assert topo_check(pods, place(("a", "n1"), ("b", "n4")), pg).ok  # zone a and zone b
    both = godel("g", 2, required_topology=("zone", TOR))
    assert only(topo_check(pods, place(("a", "n1"), ("b", "n4")), both), "required-topology").message.startswith(
        f"required {TOR}: members span 2 domains"
    )


def test_without_levels_no_term_binds_as_the_planner_warns() -> None:
    """No levels (``--levels ''``: a flat cluster) means no term names a level: the planner
    ignores every one with a warning, so the verifier does too. It once checked the key by
    its own label values, and so refused the planner's plans of the gpu-cluster snapshot."""
    pg = godel("g", 2, required_topology=(TOR,))
    pods = [member("a", "g"), member("b", "g")]
    assert topo_check(pods, place(("a", "n1"), ("b", "n3")), pg, levels=()).ok  # t1 and t2
    assert rules(topo_check(pods, place(("a", "n1"), ("b", "n3")), pg)) == ["required-topology"]


@pytest.mark.parametrize("levels", [LEVELS, ()])
def test_a_hostname_term_keeps_every_member_on_one_node(levels: tuple[str, ...]) -> None:
    """kubernetes.io/hostname is the node itself, with or without levels above it, named by the
    node's name (n1 carries no hostname label here). Running members count, as at any level."""
    pg = godel("g", 3, required_topology=(HOSTNAME,))
    pods = [member("r", "g", on="n1"), member("a", "g"), member("b", "g")]
    assert topo_check(pods, place(("a", "n1"), ("b", "n1")), pg, levels=levels).ok
    result = topo_check(pods, place(("a", "n1"), ("b", "n2")), pg, levels=levels)
    assert only(result, "required-topology").message == (
        f"required {HOSTNAME}: members span 2 domains (n1: 2 pods (1 running), n2: 1 pod)"
    )


def test_a_running_member_on_a_node_the_snapshot_lacks_breaks_a_required_term() -> None:
    """Its domain cannot be named, so no placement can be shown to share it: the planner leaves
    such a group unplaced, and the verifier refuses a plan that places it. A group without a
    required term is not held to any domain, so the unknown node does not matter to it."""
    pods = [member("r", "g", on="gone"), member("a", "g")]
    required = godel("g", 2, required_topology=(TOR,))
    violation = only(topo_check(pods, place(("a", "n1")), required), "required-topology")
    assert violation.message == (
        f"required {TOR}: running member ns/r is on node gone, which is not in the snapshot, "
        "so its domain is unknown"
    )
    assert topo_check(pods, place(("a", "n1")), godel("g", 2)).ok


def test_a_lone_pod_with_a_kueue_topology_request_stays_inside_the_topology() -> None:
    """A plain pod of no group is a Kueue workload of one: its podset-required-topology keeps
    it on the Topology's nodes, though one pod always shares one domain with itself."""
    solo = pod("solo", annotations={"kueue.x-k8s.io/podset-required-topology": TOR})
    assert topo_check([solo], place(("solo", "n1"))).ok
    assert rules(topo_check([solo], place(("solo", "out")))) == ["required-topology", "outside-topology"]


def test_group_with_nothing_placed_is_not_checked() -> None:
    pg = godel("g", 2, required_topology=(TOR,))
    pods = [member("r1", "g", on="n1"), member("r2", "g", on="n3"), pod("x")]
    result = topo_check(pods, place(("x", "n5")), pg)
    assert result.ok and "ns/g" not in result.spans


def test_member_outside_the_topology_breaks_a_required_term_and_the_topology() -> None:
    pg = godel("g", 2, required_topology=(TOR,))
    pods = [member("a", "g"), member("b", "g")]
    result = topo_check(pods, place(("a", "n1"), ("b", "out")), pg)
    assert rules(result) == ["required-topology", "outside-topology"]
    required, outside = result.violations
    assert required.message == (
        f"required {TOR}: members span 1 domain and 1 pod lies outside the topology "
        f"(bp-0/mp-0/t1: 1 pod, outside (no {TOR} label): 1 pod)"
    )
    assert outside.subject == "ns/b"
    assert outside.message == (
        f"node out is outside the topology (no label {BIGPOD}) but group ns/g has "
        f"topology terms (required {TOR})"
    )


def test_a_node_lacking_only_a_lower_level_is_outside_the_topology_too() -> None:
    """DESIGN section 2: a node lacking the label of any level is outside the topology (as in
    Kueue), so sharing the required minipod with the others does not let a member use it."""
    short = node("short", labels={BIGPOD: "bp-0", MINIPOD: "mp-0"})
    pg = godel("g", 2, required_topology=(MINIPOD,))
    pods = [member("a", "g"), member("b", "g")]
    result = check([*TOPO_NODES, short], pods, place(("a", "n1"), ("b", "short")), (pg,), LEVELS)
    violation = only(result, "outside-topology")
    assert violation.subject == "ns/b" and f"(no label {TOR})" in violation.message


def test_preferred_term_keeps_the_group_inside_the_topology() -> None:
    pg = godel("g", 2, preferred_topology=(TOR,))
    pods = [member("a", "g"), member("b", "g")]
    assert topo_check(pods, place(("a", "n1"), ("b", "n5")), pg).ok  # preferred is not required
    violation = only(topo_check(pods, place(("a", "n1"), ("b", "out")), pg), "outside-topology")
    assert violation.subject == "ns/b" and f"preferred {TOR}" in violation.message


def test_group_without_terms_and_loners_may_use_nodes_outside_the_topology() -> None:
    pods = [member("a", "g"), member("b", "g"), pod("loner")]
    placements = place(("a", "n1"), ("b", "out"), ("loner", "out"))
    assert topo_check(pods, placements, godel("g", 2)).ok


def test_running_member_outside_is_not_the_plans_outside_topology() -> None:
    pg = godel("g", 2, preferred_topology=(TOR,))
    pods = [member("r", "g", on="out"), member("a", "g")]
    assert topo_check(pods, place(("a", "n1")), pg).ok


def kueue_pod(name: str, total: int = 2, annotations: Mapping[str, str] | None = None) -> Pod:
    return pod(
        name,
        labels={"kueue.x-k8s.io/pod-group-name": "train"},
        annotations={"kueue.x-k8s.io/pod-group-total-count": str(total), **(annotations or {})},
    )


def test_kueue_podset_required_topology_is_a_required_term() -> None:
    pods = [kueue_pod(n, annotations={"kueue.x-k8s.io/podset-required-topology": MINIPOD}) for n in "ab"]
    assert topo_check(pods, place(("a", "n1"), ("b", "n3"))).ok
    violation = only(topo_check(pods, place(("a", "n1"), ("b", "n4"))), "required-topology")
    assert violation.subject == "ns/train"
    assert violation.message == (
        f"required {MINIPOD}: members span 2 domains (bp-0/mp-0: 1 pod, bp-0/mp-1: 1 pod)"
    )


def test_kueue_podset_preferred_topology_keeps_the_group_inside() -> None:
    pods = [kueue_pod(n, annotations={"kueue.x-k8s.io/podset-preferred-topology": TOR}) for n in "ab"]
    assert topo_check(pods, place(("a", "n1"), ("b", "n5"))).ok
    assert only(topo_check(pods, place(("a", "n1"), ("b", "out"))), "outside-topology").subject == (
        "ns/b"
    )


@pytest.mark.parametrize("value", ["true", "1", "T", "TRUE"])
def test_kueue_unconstrained_topology_keeps_the_group_inside(value: str) -> None:
    """Kueue's TAS keeps an unconstrained PodSet on its Topology's nodes, with no level to share."""
    pods = [kueue_pod(n, annotations={"kueue.x-k8s.io/podset-unconstrained-topology": value}) for n in "ab"]
    assert topo_check(pods, place(("a", "n1"), ("b", "n5"))).ok
    violation = only(topo_check(pods, place(("a", "n1"), ("b", "out"))), "outside-topology")
    assert violation.subject == "ns/b" and violation.message.endswith("(Kueue's unconstrained topology)")


@pytest.mark.parametrize("value", ["false", "0", "yes", "", " true"])
def test_a_kueue_unconstrained_value_go_reads_as_false_binds_nothing(value: str) -> None:
    pods = [kueue_pod(n, annotations={"kueue.x-k8s.io/podset-unconstrained-topology": value}) for n in "ab"]
    assert topo_check(pods, place(("a", "n1"), ("b", "out"))).ok


def test_a_kueue_unconstrained_request_read_as_false_is_no_admissible_workload() -> None:
    """With a Topology object (Kueue's TAS in use), an unconstrained request that is not true
    asks for TAS at no level: Kueue admits it on no flavor, so placing it breaks a rule. A
    group already running was admitted."""
    from gangplan.model import Topology

    pods = [kueue_pod(n, annotations={"kueue.x-k8s.io/podset-unconstrained-topology": "false"}) for n in "ab"]
    snapshot = Snapshot(nodes=tuple(TOPO_NODES), pods=tuple(pods), topologies=(Topology("net", LEVELS),))
    violation = only(verify(snapshot, place(("a", "n1"), ("b", "n2")), LEVELS), "required-topology")
    assert violation.subject == "ns/train" and "Kueue admits no such workload" in violation.message
    first = kueue_pod("r", annotations={"kueue.x-k8s.io/podset-unconstrained-topology": "false"})
    running = [replace(first, phase=PodPhase.RUNNING, node_name="n1"), pods[0]]
    assert verify(replace(snapshot, pods=tuple(running)), place(("a", "n2")), LEVELS).ok


@pytest.mark.parametrize(
    "annotation, key",
    [
        ("kueue.x-k8s.io/podset-preferred-topology", "example.com/zone"),
        ("kueue.x-k8s.io/podset-preferred-topology", "kubernetes.io/hostname"),
        ("kueue.x-k8s.io/podset-required-topology", "kubernetes.io/hostname"),
    ],
)
def test_a_kueue_request_for_a_level_no_topology_lists_is_no_admissible_workload(annotation: str, key: str) -> None:
    """The planner leaves such a group unplaced (Kueue's TAS admits no workload asking for a
    level no Topology lists, preferred or required, the node level included); verify accepted a
    plan placing it (session 22's semantics review F5). A group already running was admitted,
    and a level another Topology lists is one Kueue can find."""
    from gangplan.model import Topology

    pods = [kueue_pod(n, annotations={annotation: key}) for n in "ab"]
    snapshot = Snapshot(nodes=tuple(TOPO_NODES), pods=tuple(pods), topologies=(Topology("net", LEVELS),))
    violation = only(verify(snapshot, place(("a", "n1"), ("b", "n1")), LEVELS), "required-topology")
    assert violation.subject == "ns/train"
    assert violation.message == f"Kueue admits no workload asking for {key!r}: not a level of any Topology"
    running = [replace(pods[0], phase=PodPhase.RUNNING, node_name="n1"), pods[1]]
    assert verify(replace(snapshot, pods=tuple(running)), place(("b", "n1")), LEVELS).ok
    listed = replace(snapshot, topologies=(Topology("net", LEVELS), Topology("other", (key,))))
    assert verify(listed, place(("a", "n1"), ("b", "n1")), LEVELS).ok


def test_a_kueue_term_no_node_can_hold_is_reported_once() -> None:
    """A label no node carries: the term cannot be held, which is also why Kueue finds no level
    for it; one cause, one violation, not a second for the same key."""
    from gangplan.model import Topology

    key = "example.com/rakc"
    asked = {"kueue.x-k8s.io/podset-required-topology": key}
    pods = tuple(replace(p, annotations={**p.annotations, **asked}) for p in map(kueue_pod, "ab"))
    snapshot = Snapshot(nodes=tuple(TOPO_NODES), pods=pods, topologies=(Topology("net", LEVELS),))
    violation = only(verify(snapshot, place(("a", "n1"), ("b", "n1")), LEVELS), "required-topology")
    assert violation.message == (
        f"required {key}: no node carries that label, so the term cannot be held"
    )


def test_a_finished_member_asks_for_its_group_too() -> None:
    """Kueue's request is its PodSet's: a Succeeded member carrying it holds the others to it."""
    done = kueue_pod("d", total=3, annotations={"kueue.x-k8s.io/podset-unconstrained-topology": "true"})
    pods = [replace(done, phase=PodPhase.SUCCEEDED, node_name="n1"), kueue_pod("a", total=3), kueue_pod("b", total=3)]
    assert topo_check(pods, place(("a", "n1"), ("b", "n2"))).ok
    assert only(topo_check(pods, place(("a", "n1"), ("b", "out"))), "outside-topology").subject == "ns/b"


def test_kueue_annotation_on_a_podgroup_member_adds_a_required_term() -> None:
    required = {"kueue.x-k8s.io/podset-required-topology": TOR}
    pods = [member("a", "g", annotations=required), member("b", "g")]
    result = topo_check(pods, place(("a", "n1"), ("b", "n3")), godel("g", 2))
    assert only(result, "required-topology").subject == "ns/g"


# ---------------------------------------------------------------- required pod affinity

ZONE = "topology.kubernetes.io/zone"
TO_DB = PodAffinityTerm({"app": "db"}, (), ("ns",), ZONE)
ZONED = [node("a-0", labels={ZONE: "a"}), node("a-1", labels={ZONE: "a"}), node("b-0", labels={ZONE: "b"}), node("bare")]


def affine(name: str, labels: Mapping[str, str] | None = None) -> Pod:
    """A pending pod whose one required pod affinity term asks for app=db in its zone."""
    return pod(name, labels=labels, affinity=(TO_DB,))


def affinity_messages(pods: list[Pod], placements: list[Placement]) -> list[str]:
    return [f"{v.subject}: {v.message}" for v in check(ZONED, pods, placements).violations if v.rule == "pod-affinity"]


def test_a_pod_whose_affinity_selects_no_pod_at_all_is_never_scheduled() -> None:
    """No pod runs or is placed that the term selects, and the pod does not match it:
    satisfyPodAffinity fails on every node, so kube-scheduler leaves it pending."""
    assert affinity_messages([affine("w")], place(("w", "a-0"))) == [
        "ns/w: its pod affinity selects no pod running on a node with its topologyKey, none placed, and not itself: "
        "kube-scheduler never schedules it",
    ]


def test_running_pods_on_nodes_without_the_key_count_in_no_domain() -> None:
    """kube-scheduler's affinityCounts holds topology pairs of nodes that have the key, so a
    db on the bare node leaves them empty: a pod not matching its own term is never scheduled,
    and one that matches it is the first of its group, free to go to zone b."""
    db = pod("db", labels={"app": "db"}, on="bare")
    assert affinity_messages([db, affine("w")], place(("w", "a-0"))) == [
        "ns/w: its pod affinity selects no pod running on a node with its topologyKey, none placed, and not itself: "
        "kube-scheduler never schedules it",
    ]
    assert affinity_messages([db, affine("w", labels={"app": "db"})], place(("w", "b-0"))) == []


def test_a_pod_affine_to_itself_alone_still_needs_a_node_with_the_key() -> None:
    """satisfyPodAffinity refuses a node without a term's topologyKey before it counts anything."""
    assert affinity_messages([affine("w", labels={"app": "db"})], place(("w", "bare"))) == [
        f"ns/w: its pod affinity at {ZONE} selects no pod running on a node with {ZONE}, and node bare has no {ZONE} label",
    ]


def test_a_group_affine_to_itself_alone_shares_one_zone() -> None:
    """No pod counts yet and the pods match their own term: the first bound may go to any
    zone (podMatchesAllAffinityTerms), each next only beside one bound before, so the three
    share one zone. A pod in zone b apart from a pair in zone a breaks it, the pair all in zone
    a does not. A placed db in zone b, matching without the term, lets w be bound after it there."""
    pods = [affine(name, labels={"app": "db"}) for name in ("w", "x", "y")]
    assert affinity_messages(pods, place(("w", "b-0"), ("x", "a-0"), ("y", "a-1"))) == [
        f"ns/w: its pod affinity at {ZONE} selects no running pod, only the 3 placed pods carrying its terms, which "
        f"kube-scheduler binds into one {ZONE} (each next joins one bound before), not 2 (a (2), b (1)): "
        f"node b-0 has {ZONE}=b, not a",
    ]
    assert affinity_messages(pods, place(("w", "a-0"), ("x", "a-0"), ("y", "a-1"))) == []
    db = pod("db", labels={"app": "db"})
    assert affinity_messages([*pods, db], place(("w", "b-0"), ("x", "a-0"), ("y", "a-1"), ("db", "b-0"))) == []


def test_a_group_affine_to_itself_alone_in_any_order_of_its_terms_shares_one_zone() -> None:
    """Pods listing the same two terms in either order ask the same (podMatchesAllAffinityTerms
    reads them all): split over two zones, the one apart breaks the rule all the same."""
    also = PodAffinityTerm({"tier": "x"}, (), ("ns",), ZONE)
    labels = {"app": "db", "tier": "x"}
    pods = [pod("w", labels=labels, affinity=(TO_DB, also)), *(pod(n, labels=labels, affinity=(also, TO_DB)) for n in ("x", "y"))]
    assert [m.split(":")[0] for m in affinity_messages(pods, place(("w", "b-0"), ("x", "a-0"), ("y", "a-1")))] == ["ns/w"]
    assert affinity_messages(pods, place(("w", "a-0"), ("x", "a-0"), ("y", "a-1"))) == []


def test_a_pod_may_join_a_placed_pod_it_selects_in_its_zone() -> None:
    """No pod it selects runs, but the plan places a db in zone a: bound after it, the pod
    placed in zone a passes."""
    pods = [pod("db", labels={"app": "db"}), affine("w")]
    assert affinity_messages(pods, place(("db", "a-0"), ("w", "a-1"))) == []


def test_a_pod_placed_away_from_the_only_placed_pod_it_selects_is_caught() -> None:
    """The db is placed in zone a, the pod in zone b, and it does not match its own term: in
    no order of binding does it pass."""
    pods = [pod("db", labels={"app": "db"}), affine("w")]
    assert affinity_messages(pods, place(("db", "a-0"), ("w", "b-0"))) == [
        f"ns/w: its pod affinity at {ZONE} selects no pod running on a node with {ZONE}, "
        f"but no pod it selects runs or is placed where node b-0 is ({ZONE}=b), and it does not match its own terms",
    ]


def test_spans_worked_by_hand() -> None:
    # g: r on n1 (running), a on n2, b on n3, c on n4, d outside; no terms, so "out" is allowed.
    #   bigpod: bp-0 -> 1; minipod: bp-0/mp-0, bp-0/mp-1 -> 2;
    #   tor: bp-0/mp-0/t1 (n1, n2), bp-0/mp-0/t2 (n3), bp-0/mp-1/t1 (n4) -> 3; nodes: 5.
    # h: e on n4, f on n5: tor value t1 on both, but two paths -> 2 at every level.
    # k has nothing placed and the loner is a group of one: neither has a spans entry.
    pods = [
        member("r", "g", on="n1"),
        member("a", "g"),
        member("b", "g"),
        member("c", "g"),
        member("d", "g"),
        member("e", "h"),
        member("f", "h"),
        member("k1", "k", on="n5"),
        pod("loner"),
    ]
    placements = place(
        ("a", "n2"), ("b", "n3"), ("c", "n4"), ("d", "out"), ("e", "n4"), ("f", "n5")
    ) + place(("loner", "n1"))
    result = topo_check(pods, placements, godel("g", 5), godel("h", 2), godel("k", 1))
    assert result.ok, format_verification(result)
    assert result.spans == {
        "ns/g": {BIGPOD: 1, MINIPOD: 2, TOR: 3, "node": 5},
        "ns/h": {BIGPOD: 2, MINIPOD: 2, TOR: 2, "node": 2},
    }
    assert format_spans(result) == [
        f"ns/g spans {BIGPOD} 1, {MINIPOD} 2, {TOR} 3, node 5",
        f"ns/h spans {BIGPOD} 2, {MINIPOD} 2, {TOR} 2, node 2",
    ]


def test_spans_without_levels_count_nodes_only() -> None:
    pods = [member("a", "g"), member("b", "g"), member("c", "g")]
    placements = place(("a", "n1"), ("b", "n1"), ("c", "n2"))
    result = check([node("n1"), node("n2")], pods, placements, (group("g", 3),))
    assert result.spans == {"ns/g": {"node": 2}}
    assert format_spans(result) == ["ns/g spans node 2"]
    assert format_spans(Verification()) == []


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(["zone", "block", "rack", "other"]), st.sampled_from(["x", "y", "z"])),
        max_size=8,
    )
)
def test_spans_count_the_domain_paths_of_the_members_nodes(label_sets: list[dict[str, str]]) -> None:
    """Spans are counted by numbering each path from its parent's number: the same count as
    building every path whole, a missing key putting a node outside from there down, and a
    value under two parents two domains."""
    from gangplan.verify import _domain, _domain_counts

    levels = ("zone", "block", "rack")
    nodes = [node(f"n{i}", labels=labels) for i, labels in enumerate(label_sets)]
    whole = {key: len({_domain(n, key, levels) for n in nodes} - {None}) for key in levels}
    assert _domain_counts(nodes, levels) == whole
