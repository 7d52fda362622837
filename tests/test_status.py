"""``-o status``: PodGroups as given, with ``status`` filled as seed 001 defines after the plan."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

import pytest

from gangplan.model import Container, Node, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.planner import Options, plan
from gangplan.render import to_json, to_yaml
from gangplan.plan import claims_of
from gangplan.status import status_list
from gangplan.verify import verify

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
NOW = "2024-05-01T12:00:00Z"


def node(name: str, cpu: int = 4000) -> Node:
    return Node(name, {"kubernetes.io/hostname": name}, {"cpu": cpu})


def pod(
    name: str,
    group: str | None = None,
    *,
    cpu: int = 1000,
    node_name: str | None = None,
    phase: PodPhase | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Pod:
    all_labels = dict(labels or {})
    if group:
        all_labels[GROUP_LABEL] = group
    if phase is None:
        phase = PodPhase.RUNNING if node_name else PodPhase.PENDING
    return Pod(
        namespace="ns",
        name=name,
        uid=f"uid-{name}",
        labels=all_labels,
        annotations=dict(annotations or {}),
        containers=(Container("c", {"cpu": cpu}),),
        node_name=node_name,
        phase=phase,
    )


def raw_pg(name: str, min_member: int, status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"pg-{name}",
            "labels": {"team": "ml"},
            "annotations": {"note": "kept as given"},
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {
            "minMember": min_member,
            "scheduleTimeoutSeconds": 60,
            "extra": {"unknown": [1, 2]},
        },
    }
    if status is not None:
        obj["status"] = status
    return obj


def podgroup(name: str, min_member: int, status: dict[str, Any] | None = None) -> PodGroup:
    return PodGroup(
        namespace="ns",
        name=name,
        api=PodGroupAPI.SCHEDULER_PLUGINS,
        min_member=min_member,
        creation_timestamp="2024-01-01T00:00:00Z",
        uid=f"pg-{name}",
        raw=raw_pg(name, min_member, status),
    )


def run(snapshot: Snapshot, now: str | None = NOW) -> dict[str, Any]:
    result = plan(snapshot, Options(solver="greedy"))
    return status_list(result, snapshot, now=now)


def items_by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["metadata"]["name"]: item for item in result["items"]}


def test_placeable_group_is_scheduling_with_its_count() -> None:
    """Bound, not running yet: scheduler-plugins' current controller says Scheduling (its API
    has no Scheduled since it dropped the scheduled count)."""
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=tuple(pod(f"a-{i}", "a") for i in range(3)),
        pod_groups=(podgroup("a", 3),),
    )
    result = run(snapshot)
    assert result["apiVersion"] == "v1" and result["kind"] == "List"
    [item] = result["items"]
    assert item["status"] == {
        "phase": "Scheduling",
        "scheduled": 3,
        "running": 0,
        "succeeded": 0,
        "failed": 0,
    }


def test_a_gang_whose_pods_all_exist_but_one_is_gated_is_scheduling() -> None:
    """helper-51: scheduler-plugins' controller moves a group on from Pending (to Scheduling)
    once the pods carrying its label reach minMember, gated ones included (len(pods) >=
    minMember); gangplan said Pending. Too few pods is still Pending; either way the gated pod
    cannot be placed."""
    gated = replace(pod("g-0", "g", cpu=1000), scheduling_gates=("example.com/hold",))
    for pods, phase in (((gated, pod("g-1", "g", cpu=1000)), "Scheduling"), ((gated,), "Pending")):
        snapshot = Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(podgroup("g", 2),))
        [item] = run(snapshot)["items"]
        assert item["status"]["phase"] == phase
        assert [c["reason"] for c in item["status"]["conditions"]] == ["NotEnoughTasks"]


@pytest.mark.parametrize("first", [True, False])
def test_a_pod_named_like_a_podgroup_does_not_lend_it_its_outcome(first: bool) -> None:
    """A bare pod (a group of one) ns/g beside the PodGroup ns/g: the PodGroup cannot fit, the
    pod can. -o status wrote the pod's outcome (Scheduled, no condition) for the PodGroup, to be
    applied to the cluster (session 22's semantics review F3)."""
    lone = replace(pod("g", cpu=1000), creation_timestamp="2023-01-01T00:00:00Z")  # queued first
    members = [pod(f"g-{i}", "g", cpu=3000) for i in range(2)]
    pods = (lone, *members) if first else (*members, lone)
    snapshot = Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(podgroup("g", 2),))
    [item] = run(snapshot)["items"]
    assert item["status"]["phase"] == "Scheduling" and item["status"].get("scheduled", 0) == 0
    assert [c["reason"] for c in item["status"]["conditions"]] == ["NotEnoughResources"]


def test_group_whose_quorum_runs_is_running() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(pod("a-0", "a", node_name="n1"), pod("a-1", "a", node_name="n1"), pod("a-2", "a")),
        pod_groups=(podgroup("a", 2),),
    )
    [item] = run(snapshot)["items"]
    status = item["status"]
    assert status["phase"] == "Running"
    assert status["running"] == 2
    assert status["scheduled"] == 3  # two bound + the extra the plan places
    assert "conditions" not in status


def test_partly_running_group_without_room_is_unknown_not_enough_resources() -> None:
    # 2 of 4 run on a full node; no room anywhere for the other two.
    snapshot = Snapshot(
        nodes=(node("n1", cpu=2000),),
        pods=(
            pod("b-0", "b", node_name="n1"),
            pod("b-1", "b", node_name="n1"),
            pod("b-2", "b"),
            pod("b-3", "b"),
        ),
        pod_groups=(podgroup("b", 4),),
    )
    result = plan(snapshot, Options(solver="greedy"))
    [outcome] = result.groups
    assert not outcome.placed and outcome.reason
    [item] = status_list(result, snapshot, now=NOW)["items"]
    status = item["status"]
    assert status["phase"] == "Unknown"
    assert (status["scheduled"], status["running"]) == (2, 2)
    assert status["conditions"] == [
        {
            "type": "Unschedulable",
            "status": "True",
            "reason": "NotEnoughResources",
            "message": outcome.reason,
            "lastTransitionTime": NOW,
        }
    ]
    assert "cpu" in status["conditions"][0]["message"]


def test_too_few_pods_is_pending_not_enough_tasks() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(pod("c-0", "c"), pod("c-1", "c")),
        pod_groups=(podgroup("c", 3),),
    )
    [item] = run(snapshot)["items"]
    status = item["status"]
    assert status["phase"] == "Pending"
    assert status["scheduled"] == 0
    [condition] = status["conditions"]
    assert condition["reason"] == "NotEnoughTasks"
    assert "2 pods exist" in condition["message"] and "minMember is 3" in condition["message"]


def test_a_jobgroup_member_held_back_by_a_sibling_short_of_pods_says_not_enough_tasks() -> None:
    from dataclasses import replace

    whole, short = (replace(podgroup(name, size), sub_group="sg") for name, size in (("whole", 1), ("short", 3)))
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("w-0", "whole"), pod("s-0", "short")), pod_groups=(whole, short))
    items = items_by_name(run(snapshot))
    [condition] = items["whole"]["status"]["conditions"]
    assert condition["message"].startswith("JobGroup ns/sg cannot be placed: member ns/short: NotEnoughTasks:")
    assert condition["reason"] == "NotEnoughTasks"  # it was NotEnoughResources, against its own message


def test_a_jobgroup_member_short_of_pods_itself_says_so_first() -> None:
    """helper-63: members c (1 pod, minMember 2) and d (2 pods, minMember 3): d's reason was
    only c's shortage, hiding its own, which stops it whatever c does."""
    c, d = (replace(podgroup(name, size), sub_group="sg") for name, size in (("c", 2), ("d", 3)))
    pods = (pod("c-0", "c"), pod("d-0", "d"), pod("d-1", "d"))
    result = plan(Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(c, d)), Options(solver="greedy"))
    reasons = {g.key: g.reason for g in result.groups}
    assert reasons["ns/c"] == "NotEnoughTasks: 1 pod exists, minMember is 2"
    assert reasons["ns/d"] == (
        "NotEnoughTasks: 2 pods exist, minMember is 3; and JobGroup ns/sg cannot be placed: "
        "member ns/c: NotEnoughTasks: 1 pod exists, minMember is 2"
    )
    [condition] = items_by_name(status_list(result, Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(c, d)), now=NOW))["d"]["status"]["conditions"]
    assert condition["reason"] == "NotEnoughTasks"


def test_a_jobgroup_whose_subgroup_has_a_space_still_says_not_enough_tasks() -> None:
    """helper-60: subGroup is free text; the reason's pattern read the JobGroup's name as one
    word, so 'my job' gave NotEnoughResources against a NotEnoughTasks message."""
    whole, short = (replace(podgroup(name, size), sub_group="my job") for name, size in (("whole", 1), ("short", 3)))
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("w-0", "whole"), pod("s-0", "short")), pod_groups=(whole, short))
    [condition] = items_by_name(run(snapshot))["whole"]["status"]["conditions"]
    assert condition["message"].startswith("JobGroup ns/my job cannot be placed: member ns/short: NotEnoughTasks:")
    assert condition["reason"] == "NotEnoughTasks"


@pytest.mark.parametrize("phase", [PodPhase.SUCCEEDED, PodPhase.RUNNING])
def test_a_jobgroup_member_that_meets_minmember_stands_alone(phase: PodPhase) -> None:
    """helper-60: member done (its pod succeeded) or running to quorum, nothing pending, in a
    JobGroup whose other members cannot fit together: it was Unplaced with its JobGroup's
    reason, so check --group failed it and -o status gave it an Unschedulable condition. The
    same group with no subGroup was settled. A member with pods to place is still held back."""
    done = replace(_as(PodGroupAPI.VOLCANO, podgroup("done", 1)), sub_group="sg")
    b, c = (replace(_as(PodGroupAPI.VOLCANO, podgroup(name, 1)), sub_group="sg") for name in ("b", "c"))
    pods = (
        replace(pod("d-0", node_name="n1", phase=phase, cpu=500), annotations={"scheduling.k8s.io/group-name": "done"}),
        replace(pod("b-0", cpu=3000), annotations={"scheduling.k8s.io/group-name": "b"}),
        replace(pod("c-0", cpu=3000), annotations={"scheduling.k8s.io/group-name": "c"}),
    )
    snapshot = Snapshot(nodes=(node("n1", 5000),), pods=pods, pod_groups=(done, b, c))
    for options in (Options(solver="greedy"), Options()):
        result = plan(snapshot, options)
        outcome = result.by_key()
        assert (outcome["ns/done"].placed, outcome["ns/done"].reason) == (True, "")
        assert not outcome["ns/b"].placed and outcome["ns/b"].reason.startswith("JobGroup ns/sg cannot be placed")
        item = items_by_name(status_list(result, snapshot, now=NOW))["done"]
        assert item["status"]["phase"] == ("Completed" if phase is PodPhase.SUCCEEDED else "Running")
        assert "conditions" not in item["status"]
        assert verify(snapshot, result.placements, result.topology_levels(), claims=claims_of(result.groups)).ok
    # helper-62: a pod beyond minMember waiting, or one kube-scheduler leaves alone (gated), kept
    # it out; those wait with the JobGroup, and the member stands.
    for extra in (pod("d-1", cpu=500), replace(pod("d-1", cpu=500), scheduling_gates=("example.com/hold",))):
        more = replace(snapshot, pods=(*pods, replace(extra, annotations={"scheduling.k8s.io/group-name": "done"})))
        for options in (Options(solver="greedy"), Options()):
            result = plan(more, options)
            assert (result.by_key()["ns/done"].placed, result.by_key()["ns/done"].scheduled) == (True, 0)
            assert verify(more, result.placements, result.topology_levels(), claims=claims_of(result.groups)).ok


def test_group_with_no_pods_at_all_is_pending() -> None:
    snapshot = Snapshot(nodes=(node("n1"),), pod_groups=(podgroup("empty", 2),))
    [item] = run(snapshot)["items"]
    assert item["status"]["phase"] == "Pending"
    assert item["status"]["conditions"][0]["reason"] == "NotEnoughTasks"
    assert (item["status"]["scheduled"], item["status"]["running"]) == (0, 0)


def test_succeeded_and_failed_members_are_counted() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(
            pod("d-0", "d", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("d-1", "d", node_name="n1", phase=PodPhase.FAILED),
            pod("d-2", "d", node_name="n1", phase=PodPhase.FAILED),
            pod("d-3", "d", node_name="n1"),
            pod("d-4", "d"),
        ),
        pod_groups=(podgroup("d", 2),),
    )
    [item] = run(snapshot)["items"]
    status = item["status"]
    assert (status["succeeded"], status["failed"], status["running"]) == (1, 2, 1)
    # finished pods are not bound any more: one running + one placed by the plan
    assert status["scheduled"] == 2
    # 1 running + 1 succeeded reach minMember, but members failed: scheduler-plugins' controller
    # then writes its final Failed
    assert status["phase"] == "Failed"


def test_bound_but_not_yet_running_members_count_as_scheduled_not_running() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(
            pod("e-0", "e", node_name="n1", phase=PodPhase.PENDING),
            pod("e-1", "e", node_name="n1"),
        ),
        pod_groups=(podgroup("e", 2),),
    )
    [item] = run(snapshot)["items"]
    assert item["status"]["phase"] == "Scheduling"
    assert (item["status"]["scheduled"], item["status"]["running"]) == (2, 1)


def test_input_other_than_status_is_preserved_exactly_and_not_mutated() -> None:
    old_status = {
        "phase": "Pending",
        "scheduled": 7,
        "occupiedBy": "ns/deploy-x",
        "scheduleStartTime": "2024-01-01T00:00:00Z",
        "conditions": [
            {
                "type": "Unschedulable",
                "status": "True",
                "reason": "NotEnoughResources",
                "message": "stale",
            },
            {"type": "Custom", "status": "True", "reason": "Other"},
        ],
    }
    group = podgroup("f", 1, old_status)
    before = copy.deepcopy(group.raw)
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("f-0", "f"),), pod_groups=(group,))
    [item] = run(snapshot)["items"]
    assert group.raw == before  # input untouched
    without_status = {k: v for k, v in before.items() if k != "status"}
    assert {k: v for k, v in item.items() if k != "status"} == without_status
    status = item["status"]
    assert status["phase"] == "Scheduling"
    assert status["occupiedBy"] == "ns/deploy-x"
    # the stale Unschedulable condition goes; the foreign one stays
    assert status["conditions"] == [{"type": "Custom", "status": "True", "reason": "Other"}]
    # output shares nothing with the input
    item["metadata"]["labels"]["team"] = "changed"
    metadata = group.raw["metadata"]
    assert isinstance(metadata, dict) and metadata["labels"]["team"] == "ml"


def test_implicit_groups_are_left_out_and_plan_order_is_kept() -> None:
    kueue = {"kueue.x-k8s.io/pod-group-name": "kq"}
    total = {"kueue.x-k8s.io/pod-group-total-count": "1"}
    snapshot = Snapshot(
        nodes=(node("n1", cpu=16000),),
        pods=(
            pod("lone", None),
            pod("kq-0", None, labels=kueue, annotations=total),
            pod("z-0", "z"),
            pod("a-0", "a"),
        ),
        pod_groups=(podgroup("z", 1), podgroup("a", 1)),
    )
    result = plan(snapshot, Options(solver="greedy"))
    assert len(result.groups) == 4
    listed = status_list(result, snapshot)
    expected_order = [g.key.split("/")[1] for g in result.groups if g.key in ("ns/a", "ns/z")]
    assert [item["metadata"]["name"] for item in listed["items"]] == expected_order
    assert all(item["kind"] == "PodGroup" for item in listed["items"])


def test_now_none_omits_last_transition_time() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),), pods=(pod("g-0", "g"),), pod_groups=(podgroup("g", 2),)
    )
    [item] = run(snapshot, now=None)["items"]
    assert "lastTransitionTime" not in item["status"]["conditions"][0]


def test_output_is_deterministic() -> None:
    def build() -> Snapshot:
        return Snapshot(
            nodes=(node("n1", cpu=3000), node("n2", cpu=3000)),
            pods=(
                *(pod(f"a-{i}", "a") for i in range(4)),
                *(pod(f"b-{i}", "b", node_name="n1") for i in range(2)),
                *(pod(f"b-{i}", "b") for i in range(2, 6)),
                pod("c-0", "c"),
            ),
            pod_groups=(podgroup("a", 4), podgroup("b", 6), podgroup("c", 2)),
        )

    first, second = run(build()), run(build())
    assert first == second
    assert to_json(first) == to_json(second)
    assert to_yaml(first) == to_yaml(second)


def test_plan_from_another_snapshot_is_refused() -> None:
    snapshot = Snapshot(
        nodes=(node("n1"),), pods=(pod("a-0", "a"),), pod_groups=(podgroup("a", 1),)
    )
    other = Snapshot(nodes=(node("n1"),), pod_groups=(podgroup("a", 1), podgroup("new", 1)))
    with pytest.raises(ValueError, match="ns/new"):
        status_list(plan(snapshot, Options(solver="greedy")), other)


def test_a_scheduler_plugins_group_whose_members_all_succeeded_is_finished() -> None:
    """scheduler-plugins' controller writes Finished once succeeded >= minMember; one still
    running keeps it Running (nothing is pending in either)."""
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(
            pod("d-0", "d", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("d-1", "d", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("r-0", "r", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("r-1", "r", node_name="n1", phase=PodPhase.RUNNING),
        ),
        pod_groups=(podgroup("d", 2), podgroup("r", 2)),
    )
    status = {item["metadata"]["name"]: item["status"] for item in run(snapshot)["items"]}
    assert (status["d"]["phase"], status["d"]["succeeded"], status["d"]["scheduled"]) == ("Finished", 2, 0)
    assert status["r"]["phase"] == "Running" and "conditions" not in status["r"]


def test_succeeded_members_alone_are_not_unknown_and_finish_a_scheduler_plugins_group() -> None:
    """Unknown is for a group of which some run (seed 001, Volcano's jobStatus): members that
    only succeeded, beside pending ones that cannot be placed, had made it Unknown, and took a
    Volcano gang out of Inqueue. scheduler-plugins' controller writes Finished once minMember
    succeeded, whatever still runs (review 19 Q F2, F4)."""
    from dataclasses import replace

    enqueued = replace(_as(PodGroupAPI.VOLCANO, podgroup("v", 3, {"phase": "Inqueue"})), min_member=3)
    snapshot = Snapshot(
        nodes=(node("n1", cpu=2000),),
        pods=(
            pod("v-0", "v", node_name="n1", phase=PodPhase.SUCCEEDED), pod("v-1", "v", cpu=4000), pod("v-2", "v", cpu=4000),
            pod("u-0", "u", node_name="n1", phase=PodPhase.SUCCEEDED), pod("u-1", "u", cpu=4000), pod("u-2", "u", cpu=4000),
            pod("f-0", "f", node_name="n1", phase=PodPhase.SUCCEEDED), pod("f-1", "f", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("f-2", "f", node_name="n1", cpu=500),
        ),
        pod_groups=(enqueued, podgroup("u", 3), podgroup("f", 2)),
    )
    status = {item["metadata"]["name"]: item["status"] for item in run(snapshot)["items"]}
    assert (status["v"]["phase"], status["v"]["succeeded"]) == ("Inqueue", 1)
    assert status["u"]["phase"] == "Scheduling"
    assert (status["f"]["phase"], status["f"]["running"], status["f"]["succeeded"]) == ("Finished", 1, 2)


GODEL_APIS = (PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE)


def _as(api: PodGroupAPI, group: PodGroup) -> PodGroup:
    from dataclasses import replace

    return replace(group, api=api, raw={**group.raw, "apiVersion": api.value})


@pytest.mark.parametrize(
    "api", [PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.VOLCANO, PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE]
)
def test_each_api_gets_the_phase_and_fields_its_controller_writes(api: PodGroupAPI) -> None:
    """Godel's status (under both its API groups) has pending but no scheduled, and keys its
    conditions by phase; all of minMember's pods waiting is Scheduling for scheduler-plugins,
    PreScheduling for Godel and Pending for Volcano; a group whose member succeeded is Finished,
    Completed in Volcano, and Scheduled in Godel, whose controller has no later phase;
    scheduleStartTime, which scheduleTimeoutSeconds counts from, is kept."""
    started = {"scheduleStartTime": "2024-01-01T00:05:00Z"}
    big = _as(api, podgroup("big", 2, started))
    done = _as(api, podgroup("done", 1))
    snapshot = Snapshot(
        nodes=(node("n1", cpu=1000),),
        pods=(pod("big-0", "big", cpu=800), pod("big-1", "big", cpu=800),
              pod("done-0", "done", node_name="n1", phase=PodPhase.SUCCEEDED)),
        pod_groups=(big, done),
    )
    if api in GODEL_APIS:  # Godel's pods name their group by an annotation
        snapshot = replace_pods(snapshot, {"godel.bytedance.com/pod-group-name": None})
    items = items_by_name(run(snapshot))
    status = items["big"]["status"]
    assert status["scheduleStartTime"] == "2024-01-01T00:05:00Z"
    assert status["phase"] == {PodGroupAPI.VOLCANO: "Pending", PodGroupAPI.SCHEDULER_PLUGINS: "Scheduling"}.get(
        api, "PreScheduling"
    )
    [condition] = status["conditions"]
    assert condition["reason"] == "NotEnoughResources" and condition["status"] == "True"
    if api in GODEL_APIS:
        assert condition["phase"] == "PreScheduling" and "type" not in condition
        assert status["pending"] == 2 and "scheduled" not in status
        assert items["done"]["status"]["phase"] == "Scheduled"
    else:
        assert condition["type"] == "Unschedulable" and "pending" not in status
        assert ("scheduled" in status) is (api is PodGroupAPI.SCHEDULER_PLUGINS)
        assert items["done"]["status"]["phase"] == ("Completed" if api is PodGroupAPI.VOLCANO else "Finished")


def replace_pods(snapshot: Snapshot, annotation: dict[str, None]) -> Snapshot:
    from dataclasses import replace

    key = next(iter(annotation))
    pods = tuple(
        replace(p, labels={k: v for k, v in p.labels.items() if k != GROUP_LABEL},
                annotations={**p.annotations, key: p.labels[GROUP_LABEL]})
        for p in snapshot.pods
    )
    return replace(snapshot, pods=pods)



def test_volcano_keeps_an_enqueued_gang_it_cannot_allocate_inqueue() -> None:
    """Volcano's scheduler leaves Inqueue alone for a gang it cannot allocate yet; written back,
    Pending would take it out of allocate and release its queue's reservation (user review G)."""
    big = _as(PodGroupAPI.VOLCANO, podgroup("big", 2, {"phase": "Inqueue"}))
    fresh = _as(PodGroupAPI.VOLCANO, podgroup("fresh", 2))
    snapshot = Snapshot(
        nodes=(node("n1", cpu=1000),),
        pods=tuple(pod(f"{g}-{i}", g, cpu=800) for g in ("big", "fresh") for i in range(2)),
        pod_groups=(big, fresh),
    )
    items = items_by_name(run(snapshot))
    assert items["big"]["status"]["phase"] == "Inqueue"
    assert items["fresh"]["status"]["phase"] == "Pending"


def test_a_godel_group_in_phase_timeout_is_not_planned_and_its_status_is_kept() -> None:
    """Timeout is final in Godel: its pods are rejected from then on, so gangplan neither
    places them nor rewrites the status (user review G)."""
    old = {"phase": "Timeout", "conditions": [{"phase": "Timeout", "status": "True", "reason": "Timeout"}]}
    from dataclasses import replace

    late = replace(_as(PodGroupAPI.GODEL, podgroup("late", 2, old)), timed_out=True)  # as the loader reads it
    snapshot = replace_pods(Snapshot(nodes=(node("n1"),), pods=(pod("late-0", "late"), pod("late-1", "late")),
                                     pod_groups=(late,)), {"godel.bytedance.com/pod-group-name": None})
    result = plan(snapshot, Options(solver="greedy"))
    (outcome,) = result.groups
    assert not outcome.placed and not result.placements
    assert "its PodGroup is in phase Timeout, which Godel does not schedule again" in outcome.reason
    assert items_by_name(status_list(result, snapshot, now=NOW))["late"]["status"] == old
    from gangplan.plan import Placement
    from gangplan.verify import verify

    check = verify(snapshot, [Placement("ns", "late-0", "n1")], ())
    assert [v.rule for v in check.violations] == ["not-schedulable"]


def test_a_condition_still_true_keeps_when_it_became_so() -> None:
    """review 18 K F5: a group unschedulable before and still now had its Unschedulable
    condition replaced, losing lastTransitionTime (and Volcano's transitionID); the reason
    and message are the plan's. A condition that was False becomes True now."""
    earlier = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources", "message": "old",
               "lastTransitionTime": "2024-06-13T08:50:00Z", "transitionID": "abc"}
    for old, expected in (
        (earlier, {"lastTransitionTime": "2024-06-13T08:50:00Z", "transitionID": "abc"}),
        (dict(earlier, status="False"), {"lastTransitionTime": NOW}),
    ):
        snapshot = Snapshot(
            nodes=(node("n1"),), pods=(pod("g-0", "g"),),
            pod_groups=(podgroup("g", 2, status={"phase": "Pending", "conditions": [old]}),),
        )
        [item] = run(snapshot)["items"]
        [condition] = item["status"]["conditions"]
        assert condition == {"type": "Unschedulable", "status": "True", "reason": "NotEnoughTasks",
                             "message": "NotEnoughTasks: 1 pod exists, minMember is 2", **expected}


def test_a_scheduler_plugins_group_with_a_failed_member_is_failed() -> None:
    """review 18 I F2: its controller writes Failed once a member failed and the failed,
    running and succeeded ones reach minMember (seed 000: "Once a pod in a group failed, the
    Group Status is marked Failed"); gangplan wrote Unknown, or Scheduled with a replacement.
    Too few pods for minMember stays Pending."""
    cases = [
        ((pod("a-0", "a", node_name="n1"), pod("a-1", "a", node_name="n1", phase=PodPhase.FAILED)), 2, "Failed"),
        ((pod("a-0", "a", node_name="n1"), pod("a-1", "a", node_name="n1", phase=PodPhase.FAILED), pod("a-2", "a")), 2, "Failed"),
        ((pod("a-0", "a", node_name="n1", phase=PodPhase.FAILED),), 2, "Pending"),
        ((pod("a-0", "a", node_name="n1"), pod("a-1", "a", node_name="n1")), 2, "Running"),
    ]
    for pods, min_member, phase in cases:
        snapshot = Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(podgroup("a", min_member),))
        [item] = run(snapshot)["items"]
        assert item["status"]["phase"] == phase, pods


def test_a_gang_of_workloads_has_no_podgroup_to_write_status_to() -> None:
    """Session 22's workload review F6: -o status printed a PodGroup for a --gang, an object the
    cluster does not have (kubectl replace --subresource=status gets NotFound)."""
    from gangplan.manifests import gang_from_objects, with_gang
    from gangplan.model import NOWHERE

    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ns"},
                  "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}}
    group, pods = gang_from_objects("x", [(deployment, NOWHERE)])
    snapshot = with_gang(Snapshot(nodes=(node("n1"),), pod_groups=(podgroup("a", 1),), pods=(pod("a-0", "a"),)), group, pods)
    assert [item["metadata"]["name"] for item in run(snapshot)["items"]] == ["a"]


@pytest.mark.parametrize("first", [True, False])
def test_a_pod_named_like_a_podgroup_queued_after_it_lends_it_neither_outcome_nor_members(first: bool) -> None:
    """The bare pod ns/g queued after the PodGroup ns/g (created later) comes after it in the
    plan and among the groups: the PodGroup's status must still be its own. Of its 3 members one
    runs and the other two cannot both fit, so it is Unknown (seed 001: some run, the rest cannot
    be scheduled), running 1, scheduled 1 (the bound one), NotEnoughResources; the pod fits."""
    lone = replace(pod("g", cpu=1000), creation_timestamp="2025-01-01T00:00:00Z")
    members = [pod("g-0", "g", node_name="n1"), *(pod(f"g-{i}", "g", cpu=3000) for i in (1, 2))]
    pods = (lone, *members) if first else (*members, lone)
    snapshot = Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(podgroup("g", 3),))
    result = plan(snapshot, Options(solver="greedy"))
    assert [g.api for g in result.groups][-1] == "v1/Pod"  # the pod is planned after the PodGroup
    [item] = status_list(result, snapshot, now=NOW)["items"]
    status = item["status"]
    assert (status["phase"], status["running"], status["scheduled"]) == ("Unknown", 1, 1)
    assert [c["reason"] for c in status["conditions"]] == ["NotEnoughResources"]


@pytest.mark.parametrize("count", [3, 4])
def test_a_plan_from_another_snapshot_names_up_to_three_missing_podgroups(count: int) -> None:
    """The refusal names the PodGroups the plan lacks, three at most, and says when there are
    more: all three of three, and 'and more' only past three."""
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("a-0", "a"),), pod_groups=(podgroup("a", 1),))
    new = tuple(podgroup(f"new{i}", 1) for i in range(count))
    other = Snapshot(nodes=(node("n1"),), pod_groups=(podgroup("a", 1), *new))
    with pytest.raises(ValueError) as refused:
        status_list(plan(snapshot, Options(solver="greedy")), other)
    message = str(refused.value)
    assert all(f"ns/new{i}" in message for i in range(3))
    assert ("and more" in message) is (count > 3)


def test_a_completed_volcano_group_whose_pods_are_still_listed_counts_them() -> None:
    """A Completed group is done, but its pods are still in the snapshot: the counts are of
    those pods by phase (seed 001's running and succeeded), not the ones its status carried
    while they ran. The status is kept as given only when its pods are gone."""
    given = {"phase": "Completed", "running": 2}
    done = replace(_as(PodGroupAPI.VOLCANO, podgroup("v", 2, given)), finished=True)  # as the loader reads Completed
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=tuple(pod(f"v-{i}", "v", node_name="n1", phase=PodPhase.SUCCEEDED) for i in range(2)),
        pod_groups=(done,),
    )
    [item] = run(snapshot)["items"]
    assert item["status"] == {"phase": "Completed", "running": 0, "succeeded": 2, "failed": 0}


@pytest.mark.parametrize("given", ["Running", "Completed"])
def test_a_volcano_group_with_a_member_still_running_is_running_not_completed(given: str) -> None:
    """Volcano's getPodGroupPhase (scheduler/framework/session.go): with minMember pods
    scheduled, Completed only when every scheduled one (Running, Bound, Succeeded, Failed) has
    completed, else Running. Two succeeded and one running of minMember 2 is Running, whatever
    phase the group had."""
    group = replace(_as(PodGroupAPI.VOLCANO, podgroup("v", 2, {"phase": given})), finished=given == "Completed")
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(
            pod("v-0", "v", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("v-1", "v", node_name="n1", phase=PodPhase.SUCCEEDED),
            pod("v-2", "v", node_name="n1"),
        ),
        pod_groups=(group,),
    )
    [item] = run(snapshot)["items"]
    assert item["status"] == {"phase": "Running", "running": 1, "succeeded": 2, "failed": 0}


SUCCEEDED, FAILED, RUNNING = PodPhase.SUCCEEDED, PodPhase.FAILED, PodPhase.RUNNING


@pytest.mark.parametrize("api", [PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY])
@pytest.mark.parametrize(
    ("phases", "min_member", "expected"),
    [
        ((SUCCEEDED, FAILED, RUNNING), 3, "Failed"),  # a member failed; failed + running + succeeded reach 3
        ((SUCCEEDED, SUCCEEDED, FAILED), 2, "Finished"),  # Finished is checked last: it wins over Failed
        ((SUCCEEDED, SUCCEEDED, RUNNING), 2, "Finished"),  # succeeded >= minMember, whatever still runs
    ],
)
def test_scheduler_plugins_final_phases_follow_its_controller(
    api: PodGroupAPI, phases: tuple[PodPhase, ...], min_member: int, expected: str
) -> None:
    """scheduler-plugins' PodGroupReconciler (pkg/controllers/podgroup_controller.go), for both
    API groups it has used: Failed once failed != 0 and failed + running + succeeded >=
    minMember; then Finished once succeeded >= minMember, which overrides Failed. Its status
    keeps seed 001's scheduled count."""
    group = _as(api, podgroup("a", min_member))
    pods = tuple(pod(f"a-{i}", "a", node_name="n1", phase=phase) for i, phase in enumerate(phases))
    snapshot = Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(group,))
    [item] = run(snapshot)["items"]
    status = item["status"]
    assert status["phase"] == expected
    counts = tuple(phases.count(p) for p in (RUNNING, SUCCEEDED, FAILED))
    assert (status["running"], status["succeeded"], status["failed"]) == counts
    assert status["scheduled"] == phases.count(RUNNING)  # bound, unfinished members; the plan places none


def test_godels_pending_count_is_of_members_in_phase_pending_bound_or_not() -> None:
    """Godel's status counts pending pods beside running, succeeded and failed ones: counts of
    members by pod phase, as scheduler-plugins' getCurrentPodStats counts by status.phase. A
    member bound to a node but not started yet is still in phase Pending."""
    group = _as(PodGroupAPI.GODEL, podgroup("g", 3))
    snapshot = replace_pods(
        Snapshot(
            nodes=(node("n1"),),
            pods=(
                pod("g-0", "g", node_name="n1", phase=PodPhase.PENDING),
                pod("g-1", "g", node_name="n1"),
                pod("g-2", "g"),
            ),
            pod_groups=(group,),
        ),
        {"godel.bytedance.com/pod-group-name": None},
    )
    [item] = run(snapshot)["items"]
    assert (item["status"]["pending"], item["status"]["running"]) == (2, 1)


def test_a_godel_condition_of_another_phase_does_not_lend_its_transition_time() -> None:
    """Godel keys its conditions by phase, and lastTransitionTime is when the group moved to
    that phase: a group Pending (too few pods) before and PreScheduling now (all exist, no room)
    gets a PreScheduling condition from now, not the Pending one's time."""
    earlier = {"phase": "Pending", "status": "True", "reason": "NotEnoughTasks", "message": "old",
               "lastTransitionTime": "2024-06-13T08:50:00Z"}
    group = _as(PodGroupAPI.GODEL, podgroup("g", 2, {"phase": "Pending", "conditions": [earlier]}))
    snapshot = replace_pods(
        Snapshot(
            nodes=(node("n1", cpu=1000),),
            pods=(pod("g-0", "g", cpu=800), pod("g-1", "g", cpu=800)),
            pod_groups=(group,),
        ),
        {"godel.bytedance.com/pod-group-name": None},
    )
    [item] = run(snapshot)["items"]
    [condition] = item["status"]["conditions"]
    assert (condition["phase"], condition["reason"]) == ("PreScheduling", "NotEnoughResources")
    assert condition["lastTransitionTime"] == NOW


@pytest.mark.parametrize(
    ("api", "stale"),
    [
        (
            PodGroupAPI.VOLCANO,
            {"type": "Unschedulable", "status": "True", "reason": "NotEnoughPodsOfTask", "message": "old"},
        ),
        (PodGroupAPI.GODEL, {"phase": "Pending", "status": "True", "reason": "NotEnoughTasks", "message": "old"}),
    ],
)
def test_a_placed_group_drops_every_unschedulable_condition_gangplan_writes(
    api: PodGroupAPI, stale: dict[str, Any]
) -> None:
    """Each reason the status writes for a group it cannot place (Volcano's NotEnoughPodsOfTask,
    Godel's phase-keyed NotEnoughTasks) is stale once the plan places the group, and goes; a
    condition of another kind stays."""
    other = {"type": "Custom", "status": "True", "reason": "Other"}
    group = _as(api, podgroup("g", 1, {"phase": "Pending", "conditions": [stale, other]}))
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("g-0", "g"),), pod_groups=(group,))
    if api is PodGroupAPI.GODEL:
        snapshot = replace_pods(snapshot, {"godel.bytedance.com/pod-group-name": None})
    [item] = run(snapshot)["items"]
    assert item["status"]["conditions"] == [other]


def test_a_volcano_jobgroup_member_held_back_by_a_sibling_short_of_a_task_says_not_enough_pods_of_task() -> None:
    """The sibling's reason is the member's, as with NotEnoughTasks: a task short of its
    minTaskMember is Volcano's NotEnoughPodsOfTask (its gang plugin's CheckTaskValid), so the
    member it holds back says so too, in agreement with its message."""
    whole = replace(_as(PodGroupAPI.VOLCANO, podgroup("whole", 1)), sub_group="sg")
    short = replace(_as(PodGroupAPI.VOLCANO, podgroup("short", 2)), sub_group="sg", min_task_member={"worker": 2})
    snapshot = Snapshot(
        nodes=(node("n1"),),
        pods=(
            pod("w-0", "whole"),
            pod("s-0", "short", annotations={"volcano.sh/task-spec": "worker"}),
            pod("s-1", "short", annotations={"volcano.sh/task-spec": "ps"}),
        ),
        pod_groups=(whole, short),
    )
    snapshot = replace_pods(snapshot, {"scheduling.k8s.io/group-name": None})
    items = items_by_name(run(snapshot))
    [condition] = items["whole"]["status"]["conditions"]
    member_short = "JobGroup ns/sg cannot be placed: member ns/short: NotEnoughTasks: task worker:"
    assert condition["message"].startswith(member_short)
    assert condition["reason"] == "NotEnoughPodsOfTask"
    assert [c["reason"] for c in items["short"]["status"]["conditions"]] == ["NotEnoughPodsOfTask"]


def test_a_condition_that_is_not_a_mapping_is_not_read_as_one() -> None:
    """The loader reads a PodGroup's status.phase only, so status.conditions may hold anything
    YAML does: a string there is no condition to keep or replace, and -o status still writes
    the group's status rather than fail."""
    group = podgroup("g", 2, {"phase": "Pending", "conditions": ["Unschedulable"]})
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("g-0", "g"),), pod_groups=(group,))
    [item] = run(snapshot)["items"]
    assert [c.get("reason") for c in item["status"]["conditions"] if isinstance(c, dict)] == ["NotEnoughTasks"]


def test_a_podgroup_whose_raw_holds_tuples_shares_nothing_with_the_output() -> None:
    """A PodGroup built in Python may hold tuples where YAML gives lists: the output is still a
    copy (status_list never hands out a part of its input)."""
    raw = raw_pg("g", 1)
    raw["spec"]["extra"] = ({"unknown": [1, 2]},)
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("g-0", "g"),), pod_groups=(replace(podgroup("g", 1), raw=raw),))
    [item] = run(snapshot)["items"]
    item["spec"]["extra"][0]["unknown"].append(3)
    assert raw["spec"]["extra"][0]["unknown"] == [1, 2]


def test_a_volcano_group_whose_min_member_succeeded_and_whose_extra_pods_fit_nowhere_is_completed() -> None:
    """Volcano's getPodGroupPhase (scheduler framework, session.go): scheduled = tasks Running,
    Bound, Failed or Succeeded; with scheduled >= minMember the group is Completed when every
    scheduled task has finished, else Running; pending tasks it cannot allocate are not
    scheduled. Two succeeded of minMember 2 and two more pods with room nowhere: Completed, and
    no Unschedulable condition (the job is ready: succeeded tasks count). It was Running. Once
    the plan places the extra pods, they are bound, and the group is Running."""
    group = _as(PodGroupAPI.VOLCANO, podgroup("v", 2, {"phase": "Running"}))
    members = (pod("v-0", "v", node_name="n1", phase=PodPhase.SUCCEEDED), pod("v-1", "v", node_name="n1", phase=PodPhase.SUCCEEDED))
    extra = (pod("v-2", "v", cpu=3000), pod("v-3", "v", cpu=3000))
    snapshot = Snapshot(nodes=(node("n1", cpu=2000),), pods=(*members, *extra), pod_groups=(group,))
    [item] = run(snapshot)["items"]
    assert item["status"] == {"phase": "Completed", "running": 0, "succeeded": 2, "failed": 0}
    [item] = run(replace(snapshot, nodes=(node("n1", cpu=8000),)))["items"]
    assert item["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("api", "placed", "waiting"),
    [
        (PodGroupAPI.SCHEDULER_PLUGINS, "Scheduling", "Scheduling"),
        (PodGroupAPI.SCHEDULER_PLUGINS_LEGACY, "Scheduled", "PreScheduling"),
    ],
)
def test_scheduler_plugins_phases_are_those_of_its_api_group(api: PodGroupAPI, placed: str, waiting: str) -> None:
    """helper-71 F1: scheduling.x-k8s.io's PodGroupPhase has Pending, Running, Scheduling,
    Unknown, Finished and Failed, and its reconciler writes Scheduling from Pending on, until
    minMember run; gangplan wrote the Scheduled and PreScheduling of the older
    scheduling.sigs.k8s.io API there too, phases no client of the current one switches on."""
    fits, full = _as(api, podgroup("fits", 2)), _as(api, podgroup("full", 2))
    snapshot = Snapshot(
        nodes=(node("n1", cpu=2000),),
        pods=(*(pod(f"fits-{i}", "fits") for i in range(2)), *(pod(f"full-{i}", "full", cpu=3000) for i in range(2))),
        pod_groups=(fits, full),
    )
    status = {name: item["status"] for name, item in items_by_name(run(snapshot)).items()}
    assert (status["fits"]["phase"], status["full"]["phase"]) == (placed, waiting)
    assert [c["reason"] for c in status["full"]["conditions"]] == ["NotEnoughResources"]


@pytest.mark.parametrize("api", [PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY])
@pytest.mark.parametrize(("given", "phases"), [("Failed", (RUNNING, RUNNING)), ("Finished", (PodPhase.PENDING,) * 2)])
def test_a_scheduler_plugins_group_already_failed_or_finished_keeps_that_phase(
    api: PodGroupAPI, given: str, phases: tuple[PodPhase, ...]
) -> None:
    """helper-71 F4: scheduler-plugins' reconciler returns at once for a group in Failed or
    Finished, in both API groups, so the phase stays whatever its pods do after; gangplan wrote
    Running for a Failed group whose pods run again, a status its controller never would."""
    group = _as(api, podgroup("g", 2, {"phase": given, "failed": 1}))
    pods = tuple(
        pod(f"g-{i}", "g", node_name="n1" if phase is RUNNING else None, phase=phase) for i, phase in enumerate(phases)
    )
    [item] = run(Snapshot(nodes=(node("n1"),), pods=pods, pod_groups=(group,)))["items"]
    assert item["status"]["phase"] == given
    assert item["status"]["running"] == phases.count(RUNNING)


def _godel(name: str, min_member: int, phases: tuple[PodPhase | None, ...], given: str | None = None,
           cpu: int = 1000) -> Snapshot:
    """One Godel PodGroup; None is a pending pod, any other phase a member bound to n1."""
    group = _as(PodGroupAPI.GODEL, podgroup(name, min_member, {"phase": given} if given else None))
    pods = tuple(
        pod(f"{name}-{i}", name, cpu=cpu, node_name=None if phase is None else "n1", phase=phase)
        for i, phase in enumerate(phases)
    )
    return replace_pods(
        Snapshot(nodes=(node("n1", cpu=2000),), pods=pods, pod_groups=(group,)),
        {"godel.bytedance.com/pod-group-name": None},
    )


@pytest.mark.parametrize(
    ("phases", "given", "cpu", "expected"),
    [
        ((None, None), None, 1000, "Scheduled"),  # minMember placed, so bound
        ((None, None), None, 3000, "PreScheduling"),  # all exist, none fits
        ((None,), None, 1000, "Pending"),  # fewer than minMember exist
        ((None,), "PreScheduling", 1000, "Pending"),  # back to Pending, as the controller steps it
        ((SUCCEEDED, SUCCEEDED, None), None, 3000, "Scheduled"),  # a member started: not Running with none running
        ((RUNNING, FAILED), None, 1000, "Scheduled"),
        ((FAILED, FAILED), None, 1000, "Scheduled"),
        ((None, None), "Running", 3000, "Scheduled"),  # Running, Finished, Failed are read as Scheduled
        ((None, None), "Scheduled", 3000, "Scheduled"),  # final: restarted pods that do not fit change nothing
        ((None, None), "Unknown", 3000, "Unknown"),  # a phase the controller does not know is kept
    ],
)
def test_godel_phases_are_those_its_podgroup_controller_steps_to(
    phases: tuple[PodPhase | None, ...], given: str | None, cpu: int, expected: str
) -> None:
    """helper-71 F2: Godel's PodGroup controller (godel-scheduler's binder) writes Pending,
    PreScheduling, Scheduled and Timeout only, Scheduled and Timeout final, and any member
    running, succeeded or failed makes a group Scheduled. gangplan wrote Running (with none
    running once members had succeeded), Finished, and PreScheduling for a group whose
    members had run and failed."""
    [item] = run(_godel("g", 2, phases, given, cpu))["items"]
    assert item["status"]["phase"] == expected


def test_a_godel_condition_replaces_its_phases_own_and_keeps_when_the_group_entered_it() -> None:
    """Godel keeps one condition per phase, with the time the group moved to it: a group still
    PreScheduling gets the condition gangplan writes in place of the controller's PreScheduling
    one, dated from then, not a second condition of the same phase."""
    given = {
        "phase": "PreScheduling",
        "conditions": [
            {"phase": "Pending", "status": "True", "reason": "Pending", "lastTransitionTime": "2024-06-13T08:00:00Z"},
            {"phase": "PreScheduling", "status": "True", "reason": "PreScheduling",
             "lastTransitionTime": "2024-06-13T08:50:00Z", "message": "More than 2 pods has been created"},
        ],
    }
    snapshot = _godel("g", 2, (None, None), None, 3000)
    group = replace(snapshot.pod_groups[0], raw={**snapshot.pod_groups[0].raw, "status": given})
    [item] = run(replace(snapshot, pod_groups=(group,)))["items"]
    conditions = item["status"]["conditions"]
    assert [(c["phase"], c["reason"]) for c in conditions] == [("Pending", "Pending"), ("PreScheduling", "NotEnoughResources")]
    assert conditions[1]["lastTransitionTime"] == "2024-06-13T08:50:00Z"


@pytest.mark.parametrize(
    ("api", "make", "reason"),
    [
        (PodGroupAPI.SCHEDULER_PLUGINS, lambda: pod("g-1", "g", node_name="n1", phase=FAILED), "PodFailed"),
        (PodGroupAPI.VOLCANO, lambda: pod("g-1", "g", node_name="n1", phase=FAILED), "PodFailed"),
        (PodGroupAPI.SCHEDULER_PLUGINS, lambda: replace(pod("g-1", "g"), deleting=True), "PodDeleted"),
        (PodGroupAPI.GODEL, lambda: replace(pod("g-1", "g"), deleting=True), "PodDeleted"),
        (PodGroupAPI.SCHEDULER_PLUGINS, lambda: None, "NotEnoughTasks"),  # never there: too few pods
    ],
)
def test_a_group_short_of_pods_because_one_failed_or_is_deleted_says_so(api: PodGroupAPI, make: Any, reason: str) -> None:
    """helper-71 F5: seed 001's PodFailed and PodDeleted reasons are for a group whose pod
    failed or was deleted; gangplan said NotEnoughTasks for all three, leaving the why to the
    message."""
    lost = make()
    group = _as(api, podgroup("g", 2))
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("g-0", "g"), *((lost,) if lost else ())), pod_groups=(group,))
    if api in GODEL_APIS:
        snapshot = replace_pods(snapshot, {"godel.bytedance.com/pod-group-name": None})
    [item] = run(snapshot)["items"]
    [condition] = item["status"]["conditions"]
    assert condition["reason"] == reason


def test_a_failed_pod_beside_enough_live_ones_one_gated_is_not_the_reason() -> None:
    """Review of helper-71 F5: a Failed pod of an earlier attempt beside minMember live pods,
    one of them held by a scheduling gate, is not what the group is short of (the gate is,
    as the message says): NotEnoughTasks as before, not PodFailed. With the gated pod gone
    the failed one is the reason."""
    gated = replace(pod("g-1", "g"), scheduling_gates=("example.com/hold",))
    old = pod("g-2", "g", node_name="n1", phase=FAILED)
    snapshot = Snapshot(nodes=(node("n1"),), pods=(pod("g-0", "g"), gated, old), pod_groups=(podgroup("g", 2),))
    [item] = run(snapshot)["items"]
    [condition] = item["status"]["conditions"]
    assert condition["reason"] == "NotEnoughTasks" and "scheduling gates" in condition["message"]
    [item] = run(replace(snapshot, pods=(pod("g-0", "g"), old)))["items"]
    [condition] = item["status"]["conditions"]
    assert condition["reason"] == "PodFailed"


def test_a_godel_group_finished_with_its_pods_gone_reads_scheduled_as_with_them() -> None:
    """Review of helper-71 F2: Godel's controller reads a Finished group as Scheduled (its final
    phase) whether or not its pods are still there; gangplan kept Finished for one whose pods
    were gone, and wrote Scheduled for the same group with its succeeded pods."""
    with_pods = _godel("g", 2, (SUCCEEDED, SUCCEEDED), "Finished")
    with_pods = replace(with_pods, pod_groups=(replace(with_pods.pod_groups[0], finished=True),))  # as the loader reads it
    [item] = run(with_pods)["items"]
    assert item["status"]["phase"] == "Scheduled"
    [item] = run(replace(with_pods, pods=()))["items"]
    assert item["status"]["phase"] == "Scheduled"


@pytest.mark.parametrize("given", [5, ["Unknown"], {"x": 1}])
def test_a_godel_phase_that_is_no_string_is_not_kept_as_its_python_repr(given: Any) -> None:
    """Review of helper-71 F2: a phase Godel's controller does not know is kept, but one that is
    no string at all was written back as Python's repr of it ('5', "['Unknown']"); it is read
    as no phase, as a CRD whose phase is a string would never hold it."""
    snapshot = _godel("g", 2, (None, None), None, 3000)
    group = replace(snapshot.pod_groups[0], raw={**snapshot.pod_groups[0].raw, "status": {"phase": given}})
    [item] = run(replace(snapshot, pod_groups=(group,)))["items"]
    assert item["status"]["phase"] == "PreScheduling"


def test_a_godel_group_in_its_final_scheduled_phase_keeps_the_controllers_own_condition() -> None:
    """helper-72 F4: Godel writes no condition once a group is Scheduled, its final phase, so
    gangplan's NotEnoughResources for pods that restarted and fit nowhere goes beside the
    controller's Scheduled record, not in its place: replaced, it was gone for good once the
    group was placed again."""
    own = {"phase": "Scheduled", "status": "True", "reason": "Scheduled", "message": "More than 2 pods has been scheduled",
           "lastTransitionTime": "2024-06-13T08:50:00Z"}
    snapshot = _godel("g", 2, (None, None), "Scheduled", 3000)
    group = replace(snapshot.pod_groups[0], raw={**snapshot.pod_groups[0].raw, "status": {"phase": "Scheduled", "conditions": [own]}})
    [item] = run(replace(snapshot, pod_groups=(group,)))["items"]
    status = item["status"]
    assert status["phase"] == "Scheduled"
    assert [(c["phase"], c["reason"]) for c in status["conditions"]] == [("Scheduled", "Scheduled"), ("Scheduled", "NotEnoughResources")]
    assert status["conditions"][0] == own and status["conditions"][1]["lastTransitionTime"] == NOW
    again = replace(group, raw={**group.raw, "status": status})
    fits = replace(_godel("g", 2, (None, None), "Scheduled", 1000), pod_groups=(again,))
    [item] = run(fits)["items"]
    assert item["status"]["conditions"] == [own]
