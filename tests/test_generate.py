"""The synthetic snapshot generator: deterministic, the right counts, loadable, well-formed
topology, running load that fits and matches the asked utilisation, and plannable."""

from __future__ import annotations

import json
import math
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


@pytest.mark.parametrize("args", [["--shape", "4x4x8"], ["--shape", "1x0x1x1"], ["--groups", "-1"], ["--utilisation", "1.5"]])
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
