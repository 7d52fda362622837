"""The synthetic snapshot generator: deterministic, the right counts, loadable, well-formed
topology, running load that fits and matches the asked utilisation, and plannable."""

from __future__ import annotations

import json
import math
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, TypedDict

import pytest
import yaml

from gangplan.errors import UsageError
from gangplan.generate import (
    BIGPOD,
    DEFAULT_FLAVOURS,
    INSTANCE_TYPE,
    MINIPOD,
    POOL,
    TOR,
    Flavour,
    NodeSpec,
    generate,
)
from gangplan.loader import load_snapshot
from gangplan.planner import Options, plan
from gangplan.quantity import to_amount
from gangplan.verify import verify

GPU = "nvidia.com/gpu"


class Sized(TypedDict):
    """Arguments of ``generate`` that tests share between calls."""

    shape: tuple[int, ...]
    groups: int
    max_gang: int


class Drawn(Sized):
    seed: int
    required_share: float


SMALL: Sized = dict(shape=(1, 2, 3, 4), groups=12, max_gang=16)
GROUP_KEYS = (
    ("labels", "scheduling.x-k8s.io/pod-group"),
    ("annotations", "scheduling.k8s.io/group-name"),
    ("annotations", "godel.bytedance.com/pod-group-name"),
)


def of_kind(doc: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [o for o in doc["items"] if o["kind"] == kind]


def group_of(pod: dict[str, Any]) -> tuple[str, str] | None:
    meta = pod["metadata"]
    for where, key in GROUP_KEYS:
        name = meta.get(where, {}).get(key)
        if name:
            return meta["namespace"], name
    return None


def requests(pod: dict[str, Any]) -> dict[str, int]:
    raw = pod["spec"]["containers"][0]["resources"]["requests"]
    return {k: to_amount(k, v) for k, v in raw.items()}


def running_usage(doc: dict[str, Any]) -> dict[str, Counter[str]]:
    used: dict[str, Counter[str]] = defaultdict(Counter)
    for pod in of_kind(doc, "Pod"):
        if pod["spec"].get("nodeName") and pod["status"]["phase"] == "Running":
            used[pod["spec"]["nodeName"]].update(requests(pod))
    return used


def allocatable(node: dict[str, Any]) -> dict[str, int]:
    return {k: to_amount(k, v) for k, v in node["status"]["allocatable"].items()}


# ---------------------------------------------------------------- determinism and counts


def test_same_seed_same_output_and_other_seed_other_output() -> None:
    first = json.dumps(generate(**SMALL, seed=7))
    assert json.dumps(generate(**SMALL, seed=7)) == first
    assert json.dumps(generate(**SMALL, seed=8)) != first


@pytest.mark.parametrize(
    "shape,groups", [((1, 2, 3, 4), 12), ((2, 2, 2, 8), 40), ((1, 1, 1, 1), 0)]
)
def test_counts(shape: tuple[int, ...], groups: int) -> None:
    doc = generate(shape=shape, groups=groups, seed=1)
    assert doc["apiVersion"] == "v1" and doc["kind"] == "List"
    assert len(of_kind(doc, "Node")) == math.prod(shape)
    pod_groups = of_kind(doc, "PodGroup")
    assert len(pod_groups) == groups
    assert len(of_kind(doc, "PriorityClass")) == 3
    members: Counter[tuple[str, str]] = Counter()
    for pod in of_kind(doc, "Pod"):
        if "nodeName" not in pod["spec"]:
            key = group_of(pod)
            assert key is not None, pod["metadata"]["name"]
            members[key] += 1
    for group in pod_groups:
        key = (group["metadata"]["namespace"], group["metadata"]["name"])
        assert 1 <= group["spec"]["minMember"] <= members[key]
    assert len(members) == groups
    names = [(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
             for o in doc["items"]]
    assert len(set(names)) == len(names)
    uids = [o["metadata"]["uid"] for o in doc["items"] if "uid" in o["metadata"]]
    assert len(set(uids)) == len(uids)


def test_gangs_are_uniform_and_created_in_order() -> None:
    doc = generate(shape=(2, 2, 4, 8), groups=200, seed=3, max_gang=64)
    shapes: dict[tuple[str, str] | None, set[str]] = defaultdict(set)
    for pod in of_kind(doc, "Pod"):
        if "nodeName" not in pod["spec"]:
            shapes[group_of(pod)].add(json.dumps(pod["spec"], sort_keys=True))
    assert all(len(specs) == 1 for specs in shapes.values())  # one request and selector per group
    sizes = Counter(
        sum(1 for p in of_kind(doc, "Pod") if "nodeName" not in p["spec"] and group_of(p) == key)
        for key in shapes
    )
    assert max(sizes) <= 64 and sizes[1] > sizes.get(64, 0)
    groups = of_kind(doc, "PodGroup")
    by_index = sorted(groups, key=lambda g: int(g["metadata"]["name"].split("-")[1]))
    stamps = [g["metadata"]["creationTimestamp"] for g in by_index]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    apis = Counter(g["apiVersion"] for g in groups)
    assert set(apis) == {
        "scheduling.x-k8s.io/v1alpha1",
        "scheduling.volcano.sh/v1beta1",
        "scheduling.orchestration.bytedance.com/v1alpha1",
    }
    affinities = [g["spec"].get("affinity", {}).get("podGroupAffinity", {}) for g in groups]
    required = {t["topologyKey"] for a in affinities for t in a.get("required", [])}
    preferred = {t["topologyKey"] for a in affinities for t in a.get("preferred", [])}
    assert {MINIPOD, TOR} <= required and preferred == {MINIPOD, TOR}
    assert any("sortRules" in a for a in affinities)
    for group in groups:
        if group["apiVersion"] == "scheduling.volcano.sh/v1beta1":
            assert group["spec"]["queue"]


# ---------------------------------------------------------------- loading


def test_loads_as_json_and_as_yaml(tmp_path: Path) -> None:
    doc = generate(**SMALL, seed=2)
    as_json = tmp_path / "snapshot.json"
    as_json.write_text(json.dumps(doc))
    as_yaml = tmp_path / "snapshot.yaml"
    text = yaml.safe_dump(doc, sort_keys=False)
    assert "&id" not in text  # no shared sub-objects, so no YAML anchors
    as_yaml.write_text(text)
    counts = (24, len(of_kind(doc, "Pod")), 12, 3)
    for path in (as_json, as_yaml):
        snapshot = load_snapshot([str(path)])
        loaded = (snapshot.nodes, snapshot.pods, snapshot.pod_groups, snapshot.priority_classes)
        assert tuple(len(objects) for objects in loaded) == counts
        assert not snapshot.skipped_kinds


def test_topology_object_is_optional(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generate(**SMALL, topology=True)))
    snapshot = load_snapshot([str(path)])
    assert snapshot.topologies[0].levels[:3] == (BIGPOD, MINIPOD, TOR)


# ---------------------------------------------------------------- nodes and topology


def test_topology_labels_nest_and_tors_are_homogeneous() -> None:
    shape = (2, 3, 4, 5)
    nodes = of_kind(generate(shape=shape, groups=0, seed=4), "Node")
    parent_of_tor: dict[str, set[tuple[str, str]]] = defaultdict(set)
    parent_of_minipod: dict[str, set[str]] = defaultdict(set)
    flavour_of_tor: dict[str, set[str]] = defaultdict(set)
    for node in nodes:
        labels = node["metadata"]["labels"]
        assert labels["kubernetes.io/hostname"] == node["metadata"]["name"]
        assert labels[POOL]
        parent_of_tor[labels[TOR]].add((labels[BIGPOD], labels[MINIPOD]))
        parent_of_minipod[labels[MINIPOD]].add(labels[BIGPOD])
        flavour_of_tor[labels[TOR]].add(labels[INSTANCE_TYPE])
    assert all(len(p) == 1 for p in parent_of_tor.values())
    assert all(len(p) == 1 for p in parent_of_minipod.values())
    assert all(len(f) == 1 for f in flavour_of_tor.values())
    assert len(parent_of_tor) == 2 * 3 * 4
    assert len(parent_of_minipod) == 2 * 3


def test_nodes_have_ready_conditions_taints_and_capacity() -> None:
    nodes = of_kind(generate(shape=(2, 4, 8, 16), groups=0, seed=5), "Node")
    tainted = cordoned = not_ready = 0
    for node in nodes:
        status = node["status"]
        assert [c["type"] for c in status["conditions"]] == ["Ready"]
        not_ready += status["conditions"][0]["status"] != "True"
        cordoned += bool(node["spec"].get("unschedulable"))
        tainted += any(
            t == {"key": GPU, "value": "present", "effect": "NoSchedule"}
            for t in node["spec"].get("taints", [])
        )
        alloc, cap = allocatable(node), {k: to_amount(k, v) for k, v in status["capacity"].items()}
        assert set(alloc) == set(cap)
        assert all(0 < alloc[k] <= cap[k] for k in cap)
    assert 0 < tainted < len(nodes) // 2
    assert cordoned + not_ready < len(nodes) // 50


# ---------------------------------------------------------------- running load


@pytest.mark.parametrize("utilisation", [0.0, 0.2, 0.5, 0.8, 1.0])
def test_running_pods_fit_and_hold_the_asked_share(utilisation: float) -> None:
    doc = generate(shape=(2, 2, 4, 8), groups=5, seed=6, utilisation=utilisation)
    nodes = {n["metadata"]["name"]: allocatable(n) for n in of_kind(doc, "Node")}
    used = running_usage(doc)
    for name, amounts in used.items():
        for resource, amount in amounts.items():
            assert amount <= nodes[name].get(resource, 0), (name, resource)
    total = sum(a.get(GPU, 0) for a in nodes.values())
    share = sum(a[GPU] for a in used.values()) / total
    assert abs(share - utilisation) <= 0.1 * utilisation + 1e-9
    pods = of_kind(doc, "Pod")
    if 0 < utilisation < 1:
        phases = Counter(p["status"]["phase"] for p in pods if "nodeName" in p["spec"])
        assert phases["Running"] > 0
        whole = [p for p in pods if "nodeName" in p["spec"] and requests(p).get(GPU) == 8]
        partial = [p for p in pods if "nodeName" in p["spec"] and requests(p).get(GPU, 0) < 8]
        assert whole and partial


def test_running_pods_on_tainted_nodes_tolerate_the_taint() -> None:
    doc = generate(shape=(2, 2, 4, 8), groups=0, seed=9, taint_share=0.5)
    tainted = {
        n["metadata"]["name"] for n in of_kind(doc, "Node")
        if any(t["key"] == GPU for t in n["spec"].get("taints", []))
    }
    assert tainted
    for pod in of_kind(doc, "Pod"):
        if pod["spec"].get("nodeName") in tainted:
            toleration = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
            assert toleration in pod["spec"]["tolerations"]


# ---------------------------------------------------------------- planning


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_snapshot_plans_and_verifies(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(generate(shape=(1, 2, 2, 6), groups=15, seed=seed, max_gang=16)))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy"))
    assert any(g.placed for g in result.groups)
    verification = verify(snapshot, result.placements, result.topology_levels())
    assert verification.ok, verification.violations


def test_hostname_share_moves_required_terms_of_one_node_gangs_and_nothing_else(tmp_path: Path) -> None:
    """--hostname-share draws from a stream of its own: the snapshot is the same but for the
    required terms it moves (and the preferred terms below them), each of a gang whose pods
    fit on one node of its flavour; the result plans and verifies."""
    common: Drawn = dict(shape=(1, 2, 2, 6), groups=40, seed=2, max_gang=16, required_share=0.9)
    plain, moved = generate(**common), generate(**common, hostname_share=1.0)
    assert of_kind(plain, "Node") == of_kind(moved, "Node") and of_kind(plain, "Pod") == of_kind(moved, "Pod")
    largest = max(allocatable(n)[GPU] for n in of_kind(plain, "Node"))
    gpus: Counter[tuple[str, str]] = Counter()
    for pod in of_kind(plain, "Pod"):
        if not pod["spec"].get("nodeName") and (key := group_of(pod)):
            gpus[key] += requests(pod).get(GPU, 0)
    changed = 0
    for before, after in zip(of_kind(plain, "PodGroup"), of_kind(moved, "PodGroup")):
        if before == after:
            continue
        changed += 1
        terms = after["spec"]["affinity"]["podGroupAffinity"]
        assert terms["required"] == [{"topologyKey": "kubernetes.io/hostname"}] and "preferred" not in terms
        assert gpus[before["metadata"]["namespace"], before["metadata"]["name"]] <= largest
        before["spec"]["affinity"]["podGroupAffinity"].pop("required")
        before["spec"]["affinity"]["podGroupAffinity"].pop("preferred", None)
        terms.pop("required")
        assert before == after  # sortRules and nodeSelector as they were
    assert changed >= 5
    path = tmp_path / "moved.json"
    path.write_text(json.dumps(moved))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options())
    assert any(g.placed for g in result.groups)
    assert verify(snapshot, result.placements, result.topology_levels()).ok


def test_other_gpu_resource_and_cpu_only_flavours(tmp_path: Path) -> None:
    cpu = Flavour("cpu-64c-256g", 64_000, 256 * 2**30)
    doc = generate(shape=(2, 2, 2, 4), groups=6, seed=0, gpu_resource="amd.com/gpu",
                   flavours=(cpu, DEFAULT_FLAVOURS[0]))
    kinds = Counter(n["metadata"]["labels"][INSTANCE_TYPE] for n in of_kind(doc, "Node"))
    assert kinds == {"cpu-64c-256g": 16, "gpu-h100x8-192c-2t": 16}  # both, for seed 0
    text = json.dumps(doc)
    assert '"nvidia.com/gpu"' not in text and '"amd.com/gpu"' in text
    path = tmp_path / "s.json"
    path.write_text(text)
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver="greedy", gpu_resource="amd.com/gpu"))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    only_cpu = generate(shape=(1, 1, 2, 4), groups=4, seed=3, flavours=(cpu,))
    assert all(GPU not in json.dumps(p) for p in of_kind(only_cpu, "Pod"))
    assert len(of_kind(only_cpu, "PodGroup")) == 4


# ---------------------------------------------------------------- arguments and scale


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(shape=(1, 2, 3)),
        dict(shape=(1, 0, 2, 2)),
        dict(groups=-1),
        dict(utilisation=1.5),
        dict(required_share=-0.1),
        dict(priorities=()),
        dict(priorities=(("a", 1), ("a", 2))),
        dict(max_gang=0),
        dict(flavours=()),
        dict(nodes_from=[]),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        generate(**kwargs)


@pytest.mark.slow
def test_twenty_thousand_nodes() -> None:
    doc = generate(shape=(4, 8, 20, 32), groups=4000, seed=0)
    assert len(of_kind(doc, "Node")) == 20_480
    assert len(of_kind(doc, "PodGroup")) == 4000
    assert json.loads(json.dumps(doc))["kind"] == "List"


def test_generate_command_writes_what_generate_returns(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gangplan.cli import app

    runner = CliRunner()
    out = tmp_path / "s.json"
    args = ["generate", "--shape", "1x2x2x4", "--groups", "6", "--seed", "3", "--utilisation", "0.4",
            "--max-gang", "8", "--topology-object"]
    result = runner.invoke(app, [*args, "--output-file", str(out)])
    assert result.exit_code == 0, result.stderr
    expected = generate(shape=(1, 2, 2, 4), groups=6, seed=3, utilisation=0.4, max_gang=8, topology=True)
    assert json.loads(out.read_text()) == expected
    as_yaml = runner.invoke(app, [*args, "-o", "yaml"])
    assert yaml.safe_load(as_yaml.stdout) == expected
    planned = runner.invoke(app, ["plan", str(out), "-o", "json", "--output-file", str(tmp_path / "b.json")])
    assert planned.exit_code == 0, planned.stderr
    checked = runner.invoke(app, ["verify", str(out), "--plan", str(tmp_path / "b.json")])
    assert checked.exit_code == 0, checked.stdout + checked.stderr


# "²" is a digit to str.isdigit but not to int(): the shape was an internal error (exit 3).
@pytest.mark.parametrize("args", [["--shape", "4x4x8"], ["--shape", "1x0x1x1"], ["--shape", "1x1x1x\u00b2"], ["--groups", "-1"],
                                  ["--utilisation", "1.5"]])
def test_generate_command_bad_options(tmp_path: Path, args: list[str]) -> None:
    from typer.testing import CliRunner

    from gangplan.cli import app

    result = CliRunner().invoke(app, ["generate", *args, "--output-file", str(tmp_path / "s.json")])
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "s.json").exists()


def test_generate_command_node_flavours(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gangplan.cli import app

    out = tmp_path / "s.json"
    result = CliRunner().invoke(app, ["generate", "--shape", "1x4x2x2", "--groups", "3", "--flavour", "big:8:96:1Ti",
                                      "--flavour", "cpu:0:64:256Gi:0.5", "--output-file", str(out)])
    assert result.exit_code == 0, result.stderr
    nodes = [item for item in json.loads(out.read_text())["items"] if item["kind"] == "Node"]
    capacity = {(n["metadata"]["labels"][INSTANCE_TYPE], n["status"]["capacity"]["cpu"], n["status"]["capacity"]["memory"],
                 n["status"]["capacity"].get("nvidia.com/gpu")) for n in nodes}
    assert capacity == {("big", "96", "1073741824Ki", "8"), ("cpu", "64", "268435456Ki", None)}
    bad = CliRunner().invoke(app, ["generate", "--flavour", "big:8:-1:1Ti"])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --flavour must be")


def test_generate_refuses_more_objects_than_gangplan_would_read() -> None:
    """A typo'd shape (1e11 nodes) ran until killed; --max-objects bounds what is written."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    runner = CliRunner()
    for args in (["generate", "--shape", "100000x100x100x100"], ["--max-objects", "10", "generate"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.startswith("error: --shape ") and "--max-objects" in result.stderr
    assert runner.invoke(app, ["--max-objects", "43", "generate", "--shape", "1x1x2x4", "--groups", "4"]).exit_code == 0  # 43 objects with its pods: at the limit


@pytest.mark.parametrize(
    "args, message",
    [
        (["--max-gang", "0"], "error: --max-gang must be a positive integer, got 0"),
        (["--required-share", "2"], "error: --required-share must be a number between 0 and 1, got 2.0"),
        (["--gpu-resource", ""], "error: --gpu-resource must not be empty"),
    ],
)
def test_generate_names_the_option_not_the_parameter(args: list[str], message: str) -> None:
    """Was 'max_gang must be ...': the core's parameter, not what the user typed."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    result = CliRunner().invoke(app, ["generate", *args])
    assert result.exit_code == 2 and result.stderr.strip() == message


def test_generated_volcano_pods_name_their_task_where_volcano_reads_it() -> None:
    """Volcano reads a pod's task from the volcano.sh/task-spec annotation; the generator wrote
    only the label, so Volcano would have refused every generated Volcano gang's minTaskMember
    (review 18 M F7)."""
    doc = generate(shape=(1, 2, 3, 4), groups=40, seed=2, max_gang=16)
    volcano = [p for p in of_kind(doc, "Pod") if "scheduling.k8s.io/group-name" in (p["metadata"].get("annotations") or {})]
    assert volcano and all(p["metadata"]["annotations"]["volcano.sh/task-spec"] == "worker" for p in volcano)


# ---------------------------------------------------------------- review of issue 6 point 1


def test_benchmark_snapshot_has_every_mix_the_issue_asks_for() -> None:
    """Issue 6 point 1, on the benchmark's M case: gangs of 1 to 256 pods, 1 to 8 GPUs a pod,
    required and preferred terms, several priorities whose classes exist, and a share of
    groups with nodeSelectors (each matching some node) and tolerations (of a taint some node has)."""
    doc = generate(shape=(4, 4, 8, 16), groups=400, seed=1)
    pending = [p for p in of_kind(doc, "Pod") if "nodeName" not in p["spec"]]
    sizes = Counter(group_of(p) for p in pending)
    assert min(sizes.values()) == 1 and max(sizes.values()) == 256
    gpus = Counter(requests(p).get(GPU, 0) for p in pending)
    assert set(gpus) <= set(range(1, 9)) and {1, 2, 4, 8} <= set(gpus)
    classes = {c["metadata"]["name"]: c["value"] for c in of_kind(doc, "PriorityClass")}
    assert all(classes[p["spec"]["priorityClassName"]] == p["spec"]["priority"] for p in of_kind(doc, "Pod"))
    assert {p["spec"]["priorityClassName"] for p in pending} == set(classes) and len(classes) >= 3
    affinities = [g["spec"].get("affinity", {}).get("podGroupAffinity", {}) for g in of_kind(doc, "PodGroup")]
    assert sum("required" in a for a in affinities) and sum("preferred" in a for a in affinities)
    labels = [n["metadata"]["labels"] for n in of_kind(doc, "Node")]
    taints = [t for n in of_kind(doc, "Node") for t in n["spec"].get("taints", [])]
    selecting = {group_of(p) for p in pending if p["spec"].get("nodeSelector")}
    selecting |= {(g["metadata"]["namespace"], g["metadata"]["name"])
                  for g, a in zip(of_kind(doc, "PodGroup"), affinities) if "nodeSelector" in a}
    tolerating = {group_of(p) for p in pending if p["spec"].get("tolerations")}
    assert 0 < len(selecting) < 400 and 0 < len(tolerating) < 400
    for pod in pending:
        selector = pod["spec"].get("nodeSelector", {})
        assert any(all(node.get(k) == v for k, v in selector.items()) for node in labels)
        for toleration in pod["spec"].get("tolerations", []):
            assert any(t["key"] == toleration["key"] and t["effect"] == toleration["effect"] for t in taints)


def test_generated_kubernetes_objects_validate_strictly() -> None:
    """What kubectl would dump: every Node, Pod and PriorityClass passes the API's OpenAPI
    schema (strict: no unknown fields) at the oldest and newest versions kubernetes-validate knows."""
    kubernetes_validate = pytest.importorskip("kubernetes_validate")
    from kubernetes_validate.utils import all_versions

    versions = sorted(set(all_versions()), key=lambda v: tuple(int(x) for x in v.split(".")))
    doc = generate(shape=(1, 2, 2, 4), groups=20, seed=5, max_gang=8, selector_share=1.0,
                   toleration_share=1.0, required_share=0.5, preferred_share=0.5)
    kinds: Counter[str] = Counter()
    for item in doc["items"]:
        if item["kind"] in ("Node", "Pod", "PriorityClass"):
            kinds[item["kind"]] += 1
            for version in (versions[0], versions[-1]):
                kubernetes_validate.validate(item, version, strict=True)
    assert kinds["Node"] == 16 and kinds["Pod"] > 20 and kinds["PriorityClass"] == 3
    bound = [p for p in of_kind(doc, "Pod") if p["spec"].get("nodeName")]
    assert bound and {p["status"]["phase"] for p in bound} == {"Running", "Succeeded"}
    assert all(p["status"]["phase"] == "Pending" for p in of_kind(doc, "Pod") if not p["spec"].get("nodeName"))


def _cli(*args: str) -> Any:
    from typer.testing import CliRunner

    from gangplan.cli import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.parametrize(
    "flavour",
    [
        Flavour("tiny-gpu", 1_000, 2 * 2**30, 8),  # 940m and 1.4Gi allocatable: not 8 slots of 100m and 256Mi
        Flavour("tiny-cpu", 100, 100 * 2**20),  # allocatable memory below zero
        Flavour("huge-gpu", 96_000, 2**40, 100_000),  # 100,000 GPUs on 96 cores
        Flavour("bad^name", 96_000, 2**40, 8),  # not a label value
        Flavour("gpu-a", 96_000, 2**40, 8, weight=math.inf),
    ],
)
def test_flavours_it_cannot_write_are_refused(flavour: Flavour) -> None:
    """A flavour too small to cut into its slots got running pods that over-committed its nodes
    (up to 104 times a node's CPU at 100,000 GPUs) or a negative allocatable; a bad instance type wrote Nodes
    gangplan refuses to load; an infinite weight was an internal error."""
    with pytest.raises(UsageError):
        generate(shape=(1, 1, 2, 2), groups=2, flavours=(flavour,))


def test_two_flavours_with_one_instance_type_are_refused() -> None:
    """The Godel groups' nodeSelector picks a flavour by instance type: two shapes under one
    name would let it pick nodes the group's requests were not sized for."""
    with pytest.raises(UsageError):
        generate(flavours=(Flavour("gpu-a", 96_000, 2**40, 8), Flavour("gpu-a", 64_000, 2**39, 4)))


@pytest.mark.parametrize(
    "flavour", ["a:8:96:1Ti:inf", "a:8:1:2Gi", "bad^name:8:96:1Ti", "a:100000:96:1Ti"]
)
def test_generate_command_refuses_flavours_in_one_line(tmp_path: Path, flavour: str) -> None:
    """An infinite weight was exit 3 (internal error); the others wrote snapshots."""
    out = tmp_path / "s.json"
    out.write_text("previous")
    result = _cli("generate", "--shape", "1x1x2x2", "--groups", "2", "--flavour", flavour, "--output-file", str(out))
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    assert out.read_text() == "previous"


def test_generate_refuses_a_flavour_beside_a_trace_whose_inventory_gives_the_nodes(tmp_path: Path) -> None:
    """--flavour was dropped without a word when --from-trace gave the nodes."""
    inventory = tmp_path / "nodes.csv"
    inventory.write_text("sn,cpu_milli,memory_mib,gpu,model\n" + "".join(f"n{i},96000,393216,8,G2\n" for i in range(4)))
    out = tmp_path / "s.json"
    args = ["generate", "--shape", "1x1x2x2", "--groups", "2", "--from-trace", str(inventory), "--output-file", str(out)]
    result = _cli(*args, "--flavour", "a:8:96:1Ti")
    assert result.exit_code == 2 and not out.exists()
    assert result.stderr == "error: --flavour and --from-trace do not go together: the trace's inventory gives the nodes\n"
    assert _cli(*args).exit_code == 0 and out.exists()


@pytest.mark.parametrize("resource", ["memory", "cpu", "gpu", "kubernetes.io/gpu", "bad/na/me"])
def test_gpu_resource_must_be_an_extended_resource(resource: str) -> None:
    """--gpu-resource memory overwrote each Node's memory with its GPU count; 'gpu' wrote pods
    the API server (and gangplan) refuse."""
    with pytest.raises(UsageError):
        generate(shape=(1, 1, 1, 2), groups=1, gpu_resource=resource)


def test_generate_command_counts_pods_against_max_objects(tmp_path: Path) -> None:
    """--max-objects counted nodes and groups but not the pods: a snapshot of 174 objects was
    written under --max-objects 100, and gangplan then refused to read it back."""
    out = tmp_path / "s.json"
    result = _cli("--max-objects", "100", "generate", "--shape", "1x1x2x4", "--groups", "20", "--seed", "1",
                  "--output-file", str(out))
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("error: --shape ") and "--max-objects" in result.stderr
    assert not out.exists()
    assert _cli("--max-objects", "200", "generate", "--shape", "1x1x2x4", "--groups", "20", "--seed", "1",
                "--output-file", str(out)).exit_code == 0
    assert _cli("--max-objects", "200", "plan", str(out), "-o", "name").exit_code == 0


# ---------------------------------------------------------------- hand-made mutation audit: what the docstrings promise


BIG: Sized = dict(shape=(4, 4, 8, 16), groups=0, max_gang=256)  # 2,048 nodes: the tiny shares show up
UNSCHEDULABLE = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
UNREACHABLE = [{"key": "node.kubernetes.io/unreachable", "effect": e} for e in ("NoSchedule", "NoExecute")]


def pending_groups(doc: dict[str, Any]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The pending pods of each PodGroup, by (namespace, name)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for pod in of_kind(doc, "Pod"):
        if not pod["spec"].get("nodeName") and (key := group_of(pod)):
            out[key].append(pod)
    return out


def by_key(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(g["metadata"]["namespace"], g["metadata"]["name"]): g for g in of_kind(doc, "PodGroup")}


def tolerated(toleration: dict[str, Any], taint: dict[str, Any]) -> bool:
    """Kubernetes' rule: effects match (or none given), and Exists matches any value of the key
    while Equal (the default) needs the same value."""
    if toleration.get("effect") and toleration["effect"] != taint["effect"]:
        return False
    if toleration.get("operator", "Equal") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint["key"]
    return bool(toleration.get("key") == taint["key"] and toleration.get("value", "") == taint.get("value", ""))


def test_tors_mostly_take_their_minipods_flavour() -> None:
    """Flavours are drawn per tor, sticky per miniPod: in each miniPod most tors share one flavour
    (three tors in four take the miniPod's, the rest draw again), where a draw per tor alone
    would give the most common flavour of 8 tors about 60% of them."""
    same = total = 0
    for seed in range(3):
        flavours: dict[str, Counter[str]] = defaultdict(Counter)
        for node in of_kind(generate(shape=(4, 4, 8, 1), groups=0, seed=seed), "Node"):
            labels = node["metadata"]["labels"]
            flavours[labels[MINIPOD]][labels[INSTANCE_TYPE]] += 1
        same += sum(c.most_common(1)[0][1] for c in flavours.values())
        total += sum(sum(c.values()) for c in flavours.values())
    assert same / total > 0.75


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_taint_share_taints_whole_gpu_tors_only(share: float) -> None:
    """taint_share is the share of GPU tors tainted <gpu>=present:NoSchedule: all of a tor or
    none of it, never a CPU-only tor (it has no GPU to keep free), none at 0 and all at 1."""
    cpu = Flavour("cpu-64c-256g", 64_000, 256 * 2**30)
    doc = generate(shape=(2, 2, 4, 4), groups=0, seed=3, taint_share=share, flavours=(cpu, DEFAULT_FLAVOURS[0]))
    taint = {"key": GPU, "value": "present", "effect": "NoSchedule"}
    tainted: dict[str, set[bool]] = defaultdict(set)
    for node in of_kind(doc, "Node"):
        has = taint in node["spec"].get("taints", [])
        tainted[node["metadata"]["labels"][TOR]].add(has)
        if GPU not in node["status"]["capacity"]:
            assert not has
        elif share in (0.0, 1.0):
            assert has == bool(share)
    assert all(len(flags) == 1 for flags in tainted.values())
    if share == 0.5:
        assert {True, False} <= {f for flags in tainted.values() for f in flags}


def test_cordoned_not_ready_and_lost_gpu_nodes_look_as_kubernetes_writes_them() -> None:
    """A tiny share of nodes is cordoned (spec.unschedulable, and the node controller's
    node.kubernetes.io/unschedulable:NoSchedule taint) or NotReady (Ready Unknown, which the node
    controller taints node.kubernetes.io/unreachable NoSchedule and NoExecute), and a few have
    lost one GPU: allocatable one below capacity, never more."""
    nodes = of_kind(generate(**BIG, seed=5), "Node")
    cordoned = not_ready = lost = 0
    for node in nodes:
        spec, status = node["spec"], node["status"]
        taints = spec.get("taints", [])
        ready = status["conditions"][0]
        if spec.get("unschedulable"):
            cordoned += 1
            assert UNSCHEDULABLE in taints
        else:
            assert UNSCHEDULABLE not in taints
        if ready["status"] != "True":
            not_ready += 1
            assert ready["status"] == "Unknown" and all(t in taints for t in UNREACHABLE)
        else:
            assert not any(t in taints for t in UNREACHABLE)
        gone = int(status["capacity"][GPU]) - int(status["allocatable"][GPU])
        assert gone in (0, 1)
        lost += gone
    assert 0 < cordoned < len(nodes) // 50 and 0 < not_ready < len(nodes) // 50 and 0 < lost < len(nodes) // 50


def test_a_one_gpu_node_never_loses_its_only_gpu() -> None:
    """A node that lost a GPU keeps allocatable one below capacity; a 1-GPU node down to no GPU
    would be a node that is not a GPU node at all (its flavour says it is)."""
    one = Flavour("gpu-a10x1-32c-128g", 32_000, 128 * 2**30, 1, "NVIDIA-A10")
    nodes = of_kind(generate(**BIG, seed=5, flavours=(one,)), "Node")
    assert all(int(n["status"]["allocatable"][GPU]) == 1 for n in nodes)


@pytest.mark.parametrize("utilisation", [0.13, 0.5, 0.77, "a third and three quarters of a GPU"])
def test_running_gpus_are_round_u_times_the_gpus_exactly(utilisation: float | str) -> None:
    """'the cluster total is round(u * GPUs) exactly' (of the allocatable GPUs; a third and three
    quarters of a GPU rounds up): the Succeeded pods hold nothing, and the running pods fit their nodes,
    degraded ones too."""
    if isinstance(utilisation, str):  # the nodes are drawn before the load: the same at every u
        total = sum(allocatable(n)[GPU] for n in of_kind(generate(**BIG, seed=7), "Node"))
        utilisation = (total // 3 + 0.75) / total
    doc = generate(**BIG, seed=7, utilisation=utilisation)
    nodes = {n["metadata"]["name"]: allocatable(n) for n in of_kind(doc, "Node")}
    total = sum(a[GPU] for a in nodes.values())
    used = running_usage(doc)
    assert sum(u[GPU] for u in used.values()) == round(utilisation * total)
    for name, amounts in used.items():
        assert all(amount <= nodes[name].get(r, 0) for r, amount in amounts.items()), name
    assert any(p["status"]["phase"] == "Succeeded" for p in of_kind(doc, "Pod"))


def test_cpu_only_nodes_are_filled_in_eighths() -> None:
    """A CPU-only cluster gets running pods too: utilisation counts eighths of its nodes, so at
    0.5 they hold about half the allocatable CPU (less only by the 100m rounding of an eighth)."""
    cpu = Flavour("cpu-64c-256g", 64_000, 256 * 2**30)
    doc = generate(shape=(1, 2, 4, 8), groups=0, seed=2, utilisation=0.5, flavours=(cpu,))
    total = sum(allocatable(n)["cpu"] for n in of_kind(doc, "Node"))
    used = sum(u["cpu"] for u in running_usage(doc).values())
    assert 0.45 * total <= used <= 0.5 * total


def test_whole_node_jobs_hold_half_or_more_of_each_tors_load() -> None:
    """Within a tor 50-100% of its load is whole-node jobs (pods asking all of a node's GPUs,
    one per node), the rest smaller pods: at least half, give or take the last node and the
    nodes that lost a GPU."""
    doc = generate(**BIG, seed=8, utilisation=0.6)
    nodes = {n["metadata"]["name"]: n for n in of_kind(doc, "Node")}
    fill: Counter[str] = Counter()
    whole: Counter[str] = Counter()
    for pod in of_kind(doc, "Pod"):
        name = pod["spec"].get("nodeName")
        if not name or pod["status"]["phase"] != "Running":
            continue
        tor = nodes[name]["metadata"]["labels"][TOR]
        gpus = requests(pod)[GPU]
        fill[tor] += gpus
        if "job-name" in pod["metadata"].get("labels", {}):
            assert gpus == int(nodes[name]["status"]["capacity"][GPU])  # a whole node
            whole[tor] += gpus
    size_of = {n["metadata"]["labels"][TOR]: int(n["status"]["capacity"][GPU]) for n in nodes.values()}
    assert whole
    for tor, load in fill.items():
        size = size_of[tor]
        assert whole[tor] >= (load // 2) // size * size - size, tor


@pytest.mark.parametrize("flavour", [DEFAULT_FLAVOURS[0], Flavour("gpu-x8-96c-100g", 96_000, 100 * 2**30, 8)])
def test_pending_requests_are_a_share_of_the_flavours_per_gpu_slice(flavour: Flavour) -> None:
    """CPU and memory are 100%, 75% or 50% of the flavour's per-GPU share (its allocatable over
    its GPUs, rounded down to 100m and 256Mi), times the pod's GPUs, rounded down the same way."""
    doc = generate(shape=(1, 2, 4, 8), groups=300, seed=4, max_gang=16, flavours=(flavour,))
    slice_ = 256 * 2**20
    per_cpu = flavour.allocatable_cpu // 8 // 100 * 100
    per_memory = flavour.allocatable_memory // 8 // slice_ * slice_
    seen: set[float] = set()
    for pods in pending_groups(doc).values():
        asked = requests(pods[0])
        gpus = asked[GPU]
        assert asked["cpu"] % 100 == 0 and asked["memory"] % slice_ == 0
        shares = [s for s in (1.0, 0.75, 0.5) if asked["cpu"] == int(gpus * per_cpu * s) // 100 * 100
                  and asked["memory"] == int(gpus * per_memory * s) // slice_ * slice_]
        assert shares, asked
        seen.add(shares[0])
    assert seen == {1.0, 0.75, 0.5}


def test_allocatable_follows_the_kubelet_reservations_gke_documents() -> None:
    """GKE's table: CPU 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4
    (a 4-core node has 3920m allocatable, GKE's own example); memory 25% of the first 4 GiB,
    20% of the next 4, 10% of the next 8, 6% of the next 112, 2% above 128, plus the 100Mi
    eviction threshold (150 GiB leaves 140.1423 GiB)."""
    gib = 2**30
    assert Flavour("a", 4_000, 16 * gib).allocatable_cpu == 3920
    assert Flavour("a", 192_000, 16 * gib).allocatable_cpu == 192_000 - 60 - 10 - 10 - 470
    reserved = 0.25 * 4 + 0.2 * 4 + 0.1 * 8 + 0.06 * 112 + 0.02 * 22  # GiB of 150
    memory = Flavour("a", 4_000, 150 * gib).allocatable_memory
    assert memory % 1024 == 0 and abs(memory - (150 - reserved) * gib + 100 * 2**20) < 1024
    assert abs(memory / gib - 140.1423) < 1e-4
    for size in (2, 6, 12, 100):  # each band of the table
        bands = min(size, 4) * 0.25 + min(max(size - 4, 0), 4) * 0.2 + min(max(size - 8, 0), 8) * 0.1
        bands += min(max(size - 16, 0), 112) * 0.06
        assert abs(Flavour("a", 4_000, size * gib).allocatable_memory - ((size - bands) * gib - 100 * 2**20)) < 1024


def test_gang_sizes_follow_the_documented_distribution() -> None:
    """About 40% single pods, a median of 2 and a mean of about 8 (max_gang 256), never above
    max_gang; one in five sizes of 4 and above moved to a non-power of two between the
    neighbouring powers (so 3s, moved from 4)."""
    doc = generate(shape=(1, 2, 2, 8), groups=3000, seed=11)
    sizes = sorted(len(pods) for pods in pending_groups(doc).values())
    assert len(sizes) == 3000 and sizes[0] == 1 and sizes[-1] <= 256
    assert 0.35 <= sizes.count(1) / len(sizes) <= 0.45
    assert sizes[len(sizes) // 2] == 2 and 6 <= sum(sizes) / len(sizes) <= 11
    from_four = [s for s in sizes if s >= 3]
    moved = [s for s in from_four if s & (s - 1)]
    assert 0.16 <= len(moved) / len(from_four) <= 0.24 and 3 in moved
    capped = [len(pods) for pods in pending_groups(generate(shape=(1, 1, 2, 4), groups=300, seed=1, max_gang=6)).values()]
    assert max(capped) <= 6 and 4 in capped


def test_gpus_per_pod_are_mostly_one_for_singles_and_eight_for_big_gangs() -> None:
    """1 for most single pods, 8 (a whole node) for most gangs above 8 pods; always one of 1, 2,
    3, 4, 6, 8 and never more than a node of the group's flavour has."""
    doc = generate(shape=(1, 2, 2, 8), groups=1500, seed=12, flavours=(DEFAULT_FLAVOURS[0],))
    singles: Counter[int] = Counter()
    large: Counter[int] = Counter()
    for pods in pending_groups(doc).values():
        gpus = requests(pods[0])[GPU]
        assert gpus in (1, 2, 3, 4, 6, 8)
        if len(pods) == 1:
            singles[gpus] += 1
        elif len(pods) > 8:
            large[gpus] += 1
    assert singles.most_common(1)[0][0] == 1 and large[8] > sum(large.values()) / 2
    l40s = generate(shape=(1, 1, 2, 4), groups=200, seed=12, flavours=(DEFAULT_FLAVOURS[2],))
    assert max(requests(p)[GPU] for pods in pending_groups(l40s).values() for p in pods) == 4


def test_min_member_is_the_size_or_an_elastic_quorum_from_half() -> None:
    """minMember = size, except one group in ten of size 2+ that is elastic: quorum between half
    and size - 1."""
    doc = generate(shape=(1, 2, 2, 8), groups=800, seed=13, max_gang=64)
    groups = by_key(doc)
    elastic = multi = 0
    for key, pods in pending_groups(doc).items():
        size, quorum = len(pods), groups[key]["spec"]["minMember"]
        assert size // 2 <= quorum <= size
        multi += size >= 2
        elastic += quorum < size
    assert 0.05 <= elastic / multi <= 0.15


def test_the_first_priority_class_takes_one_group_in_five_and_groups_agree_with_their_pods() -> None:
    """The first (highest) class for about one group in five, the rest evenly; every pod of a
    gang has one class, and a PodGroup that names a class names its pods'."""
    doc = generate(shape=(1, 2, 2, 8), groups=1500, seed=14, max_gang=16)
    groups = by_key(doc)
    classes: Counter[str] = Counter()
    for key, pods in pending_groups(doc).items():
        names = {p["spec"]["priorityClassName"] for p in pods}
        assert len(names) == 1
        classes[names.pop()] += 1
        if "priorityClassName" in groups[key]["spec"] or groups[key]["apiVersion"] != "scheduling.x-k8s.io/v1alpha1":
            assert groups[key]["spec"]["priorityClassName"] == pods[0]["spec"]["priorityClassName"]
    assert 0.15 <= classes["high"] / 1500 <= 0.25
    assert abs(classes["normal"] - classes["low"]) < 0.1 * 1500


def test_topology_terms_are_godels_and_at_the_documented_levels() -> None:
    """Only Godel expresses topology; the required term is at the tor only for gangs that need
    at most half a tor, at the bigPod exactly for gangs needing more than half a miniPod, else
    at the miniPod; the preferred term lists the levels below the required one, largest first:
    [minipod, tor] or [tor] alone, nothing below a tor."""
    h100 = DEFAULT_FLAVOURS[0]
    shape = (1, 2, 4, 4)
    doc = generate(shape=shape, groups=600, seed=15, max_gang=64, flavours=(h100,),
                   required_share=0.5, preferred_share=0.5)
    groups = by_key(doc)
    levels: Counter[str] = Counter()
    for key, pods in pending_groups(doc).items():
        group = groups[key]
        terms = group["spec"].get("affinity", {}).get("podGroupAffinity", {})
        required = [t["topologyKey"] for t in terms.get("required", [])]
        preferred = [t["topologyKey"] for t in terms.get("preferred", [])]
        assert terms.get("preferred", True)  # no empty term: a tor has no level below it
        if not (required or preferred):
            continue
        assert group["apiVersion"] == "scheduling.orchestration.bytedance.com/v1alpha1"
        needed = -(-len(pods) // (8 // requests(pods[0])[GPU]))  # nodes the gang needs
        if required:
            (level,) = required
            levels[level] += 1
            assert (level == BIGPOD) == (needed > shape[2] * shape[3] / 2), (needed, level)
            assert level != TOR or needed <= shape[3] / 2
        below: list[list[str]] = {BIGPOD: [[MINIPOD, TOR], [TOR]], MINIPOD: [[TOR]], TOR: []}[required[0]] if required else [[MINIPOD, TOR], [TOR]]
        assert preferred in below + ([[]] if required else []), (required, preferred)
    assert levels[TOR] and levels[MINIPOD] and levels[BIGPOD]
    everyone = generate(shape=shape, groups=40, seed=15, max_gang=64, required_share=1.0)
    assert all(g["apiVersion"] == "scheduling.orchestration.bytedance.com/v1alpha1"
               and g["spec"]["affinity"]["podGroupAffinity"]["required"] for g in of_kind(everyone, "PodGroup"))
    nobody = generate(shape=shape, groups=200, seed=15, max_gang=64, required_share=0.0, preferred_share=1.0)
    terms = [g["spec"].get("affinity", {}).get("podGroupAffinity", {}) for g in of_kind(nobody, "PodGroup")]
    assert all("required" not in t and t["preferred"] for t in terms)
    nothing = generate(shape=shape, groups=200, seed=15, max_gang=64, required_share=0.0, preferred_share=0.0)
    assert not any("required" in t or "preferred" in t
                   for g in of_kind(nothing, "PodGroup") for t in [g["spec"].get("affinity", {}).get("podGroupAffinity", {})])


def matches(node: dict[str, Any], group: dict[str, Any], pod: dict[str, Any]) -> bool:
    """The node satisfies the pod's nodeSelector and the Godel group's nodeSelector (In and
    NotIn only: what the generator writes), and can hold one pod."""
    labels = node["metadata"]["labels"]
    if any(labels.get(k) != v for k, v in pod["spec"].get("nodeSelector", {}).items()):
        return False
    selector = group["spec"].get("affinity", {}).get("podGroupAffinity", {}).get("nodeSelector")
    for term in (selector or {}).get("nodeSelectorTerms", [{}])[:1]:
        for expr in term.get("matchExpressions", []):
            inside = labels.get(expr["key"]) in expr["values"]
            if inside != (expr["operator"] == "In"):
                return False
    free = allocatable(node)
    return all(amount <= free.get(r, 0) for r, amount in requests(pod).items())


def test_every_selector_selects_nodes_that_can_hold_its_pods() -> None:
    """With selector_share 1 every group selects nodes: half of the Godel groups through the
    group's nodeSelector (instance type), every other group through its pods' nodeSelector on
    pool; and each selects some node of its flavour (one that can hold a pod). With 0 none does."""
    doc = generate(shape=(2, 3, 4, 4), groups=200, seed=16, max_gang=16, selector_share=1.0, required_share=0.3)
    nodes = of_kind(doc, "Node")
    groups = by_key(doc)
    godel_by_type = 0
    for key, pods in pending_groups(doc).items():
        group, pod = groups[key], pods[0]
        pool = pod["spec"].get("nodeSelector")
        by_type = group["spec"].get("affinity", {}).get("podGroupAffinity", {}).get("nodeSelector")
        assert bool(pool) != bool(by_type)
        if by_type:
            assert group["apiVersion"] == "scheduling.orchestration.bytedance.com/v1alpha1"
            godel_by_type += 1
        else:
            assert set(pool) == {POOL}
        assert any(matches(node, group, pod) for node in nodes), key
    assert godel_by_type
    none = generate(shape=(2, 3, 4, 4), groups=200, seed=16, max_gang=16, selector_share=0.0)
    assert not any(p["spec"].get("nodeSelector") for p in of_kind(none, "Pod"))
    assert not any("nodeSelector" in g["spec"].get("affinity", {}).get("podGroupAffinity", {}) for g in of_kind(none, "PodGroup"))


def test_toleration_share_makes_gpu_pods_tolerate_the_gpu_taint() -> None:
    """With toleration_share 1 every pending GPU pod tolerates <gpu>=present:NoSchedule (by
    Kubernetes' matching rule), with 0 none tolerates anything, and pods of a CPU-only cluster,
    where no node has that taint, tolerate nothing."""
    taint = {"key": GPU, "value": "present", "effect": "NoSchedule"}
    every = generate(shape=(1, 2, 2, 4), groups=60, seed=17, max_gang=8, toleration_share=1.0)
    for pods in pending_groups(every).values():
        assert all(any(tolerated(t, taint) for t in p["spec"].get("tolerations", [])) for p in pods)
    nobody = generate(shape=(1, 2, 2, 4), groups=60, seed=17, max_gang=8, toleration_share=0.0)
    assert not any(p["spec"].get("tolerations") for pods in pending_groups(nobody).values() for p in pods)
    cpu = Flavour("cpu-64c-256g", 64_000, 256 * 2**30)
    only_cpu = generate(shape=(1, 1, 2, 4), groups=30, seed=17, toleration_share=1.0, flavours=(cpu,))
    assert not any(p["spec"].get("tolerations") for p in of_kind(only_cpu, "Pod"))


def test_volcano_groups_ask_min_member_pods_worth_of_their_tasks() -> None:
    """A Volcano PodGroup's minTaskMember names its pods' task (volcano.sh/task-spec) with
    minMember, and its minResources are minMember pods' requests, as are a scheduler-plugins
    group's when it has them."""
    doc = generate(shape=(1, 2, 3, 4), groups=300, seed=18, max_gang=16)
    groups = by_key(doc)
    checked = elastic = 0
    for key, pods in pending_groups(doc).items():
        spec = groups[key]["spec"]
        if groups[key]["apiVersion"] == "scheduling.volcano.sh/v1beta1":
            tasks = {p["metadata"]["annotations"]["volcano.sh/task-spec"] for p in pods}
            assert set(spec["minTaskMember"]) <= tasks and sum(spec["minTaskMember"].values()) == spec["minMember"]
        if "minResources" in spec:
            checked += 1
            want = {r: a * spec["minMember"] for r, a in requests(pods[0]).items()}
            assert {r: to_amount(r, v) for r, v in spec["minResources"].items()} == want
            elastic += spec["minMember"] < len(pods)
    assert checked and elastic  # elastic ones too, where minMember pods are fewer than the gang


def test_uids_are_version_5_uuids() -> None:
    """Every uid is uuid.uuid5 of the object's identity: an RFC 4122 UUID of version 5."""
    for item in generate(**SMALL, seed=3)["items"]:
        if "uid" in item["metadata"]:
            parsed = uuid.UUID(item["metadata"]["uid"])
            assert parsed.version == 5 and parsed.variant == uuid.RFC_4122


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(shape=(1, 1, 1, 1, 1)),
        dict(shape=(1, 1, 2.0, 2)),
        dict(taint_share=1.5),
        dict(hostname_share=-0.1),
        dict(priorities=(("", 1),)),
        dict(priorities=(("a", 1.5),)),
        dict(gpu_resource="node.kubernetes.io/gpu"),
        dict(gpu_resource="requests.example.com/gpu"),
        dict(flavours=(Flavour("gpu-x", 96_000, 2**40, 8, "bad^product"),)),
        dict(flavours=(Flavour("thin-cpu", 600, 64 * 2**30, 8),)),  # 564m allocatable: not 8 slots of 100m
        dict(flavours=(Flavour("gpu-x", 96_000, 2**40, -1),)),
        dict(flavours=(Flavour("gpu-x", 96_000, 2**40, 8.0),)),  # type: ignore[arg-type]
        dict(flavours=(Flavour("gpu-x", 96_000, 2**40, 8, weight=0),)),
        dict(flavours=(Flavour("a", 96_000, 2**40, 8, weight=1e308), Flavour("b", 96_000, 2**40, 8, weight=1e308))),
        dict(flavours=(Flavour("gpu-x", 96_000, 2**40, 8, "A"), Flavour("gpu-x", 96_000, 2**40, 8, "B"))),
        dict(nodes_from=[NodeSpec("n1", DEFAULT_FLAVOURS[0]), NodeSpec("n1", DEFAULT_FLAVOURS[0])]),
    ],
)
def test_more_bad_arguments(kwargs: dict[str, Any]) -> None:
    """Each argument rule of generate() (its docstring, _check_flavours, and the API server's rule
    that an extended resource is outside kubernetes.io and not requests.*): a UsageError, not a
    snapshot or another exception."""
    with pytest.raises(UsageError):
        generate(**{"shape": (1, 1, 2, 2), "groups": 2, **kwargs})


def test_group_flavours_are_weighted_by_the_gpus_each_flavour_has() -> None:
    """A group's flavour is drawn weighted by the GPUs each flavour has in the cluster (not by
    its nodes, nor evenly): 8-GPU and 2-GPU nodes of 96 cores, told apart by the CPU a pod asks
    per GPU (at most 11.9 cores on the first, at least 23.9 on the second)."""
    wide, narrow = Flavour("gpu-x8-96c-1t", 96_000, 2**40, 8), Flavour("gpu-x2-96c-1t", 96_000, 2**40, 2)
    doc = generate(shape=(2, 2, 4, 4), groups=600, seed=19, max_gang=8, flavours=(wide, narrow))
    gpus: Counter[str] = Counter()
    for node in of_kind(doc, "Node"):
        gpus[node["metadata"]["labels"][INSTANCE_TYPE]] += allocatable(node)[GPU]
    on_wide = 0
    for pods in pending_groups(doc).values():
        asked = requests(pods[0])
        per_gpu = asked["cpu"] / asked[GPU]
        assert per_gpu <= 11_900 or per_gpu >= 23_900
        on_wide += per_gpu <= 11_900
    expected = gpus[wide.instance_type] / sum(gpus.values())
    assert abs(on_wide / 600 - expected) < 0.06, (on_wide, expected, gpus)


def test_max_gang_help_says_the_largest_gang_is_a_power_of_two() -> None:
    """Gang sizes are 2**k with k up to log2(max_gang), so --max-gang 6 gives gangs of at most 4
    pods and 300 at most 256; the help said only 'Largest gang, in pods'."""
    doc = generate(shape=(1, 2, 4, 8), groups=300, seed=1, max_gang=6, utilisation=0)
    assert max(g["spec"]["minMember"] for g in of_kind(doc, "PodGroup")) == 4
    result = _cli("generate", "--help")
    assert "rounded down to a power of two" in " ".join(result.stdout.split())
