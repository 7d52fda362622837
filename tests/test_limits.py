"""Input bounds: YAML aliases, documents, file size, objects (expanded pods included), nesting
and quantities each end in one clear error line, exit 2, instead of exhausted memory or a
solver overflow; the limits that a real dump could reach are raised from the command line;
and a 20,000-node dump loads with the defaults."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from gangplan.cli import app
from gangplan.errors import InputError
from gangplan.generate import generate
from gangplan.loader import _ALIAS, _ANCHOR, MAX_TOTAL_AMOUNT, Limits, load_snapshot
from gangplan.planner import Options, plan
from gangplan.verify import verify

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8"}}}


def pod(name: str, requests: dict[str, str], **meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", **meta},
        "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
    }


def listed(*items: dict) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(items)})


def one_error(result: Result, *phrases: str) -> str:
    """Exit 2, nothing on stdout, and exactly one line on stderr: the error."""
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def invoke(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None) -> Result:
    return runner.invoke(app, list(args), input=input, env=env)


# ---------------------------------------------------------------- YAML aliases and nesting


BILLION_LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
)


def test_a_billion_laughs_is_refused_before_it_expands(tmp_path: Path) -> None:
    path = tmp_path / "lol.yaml"
    path.write_text(BILLION_LAUGHS)
    line = one_error(invoke("plan", str(path)), "alias bomb")
    assert line.startswith(f"error: {path}:")


def test_a_plan_file_is_read_within_the_same_limits(tmp_path: Path) -> None:
    snapshot = tmp_path / "s.json"
    snapshot.write_text(listed(NODE))
    bomb = tmp_path / "plan.yaml"
    bomb.write_text(BILLION_LAUGHS)
    one_error(invoke("verify", str(snapshot), "--plan", str(bomb)), "alias bomb")
    big = tmp_path / "plan.json"
    big.write_text(json.dumps({"kind": "List", "items": []}) + " " * 4096)
    one_error(invoke("--max-file-size", "1Ki", "verify", str(snapshot), "--plan", str(big)), "--max-file-size")
    two = tmp_path / "two.yaml"
    two.write_text("kind: List\nitems: []\n---\nkind: List\nitems: []\n")
    one_error(invoke("verify", str(snapshot), "--plan", str(two)), "found 2 documents")


def _indicated(text: str, indicator: str) -> bool:
    """An anchor or alias as YAML reads it: the indicator at the start or after a space or a
    flow opener or comma, followed by a character a name may hold."""
    return any(
        c == indicator
        and (i == 0 or text[i - 1].isspace() or text[i - 1] in "[{,")
        and i + 1 < len(text)
        and not (text[i + 1].isspace() or text[i + 1] in "[]{},")
        for i, c in enumerate(text)
    )


# No deadline, as every other property test in the suite: an example takes microseconds, but
# Hypothesis's default 200 ms deadline turns one stall of the process (tests side by side,
# pytest-xdist) into a failure ("Unreliable test timings"); the properties are tested, not speed.
@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="&*a ,[]{}\n", max_size=8))
def test_the_alias_pre_pass_is_triggered_by_every_anchor_and_alias(text: str) -> None:
    assert bool(_ANCHOR.search(text)) == _indicated(text, "&")
    assert bool(_ALIAS.search(text)) == _indicated(text, "*")
@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "- " * 5_000 + "x\n",
        "".join("  " * i + "k:\n" for i in range(3_000)),
    ],
    ids=["json-lists", "json-objects", "yaml-sequences", "yaml-mappings"],
)
def test_deep_nesting_is_an_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    one_error(invoke("plan", str(path)))


# ---------------------------------------------------------------- documents, bytes, objects


def test_the_document_limit_is_configurable(tmp_path: Path) -> None:
    path = tmp_path / "docs.yaml"
    path.write_text("---\n".join(json.dumps({**NODE, "metadata": {"name": f"n{i}"}}) + "\n" for i in range(4)))
    one_error(invoke("--max-documents", "3", "topology", str(path)), "more than 3 YAML documents", "--max-documents")
    assert invoke("--max-documents", "4", "topology", str(path)).exit_code == 0
    env = {"GANGPLAN_MAX_DOCUMENTS": "2"}
    one_error(invoke("topology", str(path), env=env), "more than 2 YAML documents")


def test_the_file_size_limit_covers_files_and_stdin(tmp_path: Path) -> None:
    text = listed(NODE, pod("p", {"cpu": "1"}))
    path = tmp_path / "s.json"
    path.write_text(text)
    assert len(text) > 256
    one_error(invoke("--max-file-size", "256", "plan", str(path)), "larger than the limit of 256 bytes")
    one_error(invoke("--max-file-size", "256", "plan", "-", input=text), "<stdin>", "--max-file-size")
    assert invoke("--max-file-size", "1Mi", "plan", str(path), "-o", "name").stdout == "binding/p\n"
    for bad in ("0", "-1", "1.5", "lots", "1Qi"):
        one_error(invoke("--max-file-size", bad, "plan", str(path)), "--max-file-size")
    for option in ("--max-objects", "--max-documents"):
        one_error(invoke(option, "0", "plan", str(path)), option)


def test_a_file_size_that_is_not_a_whole_number_of_bytes_is_refused_not_rounded(tmp_path: Path) -> None:
    """--max-file-size is "a positive number of bytes": 1000.5 is none, and must be refused
    as bad usage rather than rounded down to a limit the user did not give (with "1.5" the
    test above passes either way, as a 1-byte limit refuses the file too)."""
    path = tmp_path / "s.json"
    path.write_text(listed(NODE, pod("p", {"cpu": "1"})))
    assert path.stat().st_size < 1000
    for bad in ("1000.5", "2000.25"):
        one_error(invoke("--max-file-size", bad, "plan", str(path)), "--max-file-size must be a positive number of bytes")


def test_a_bad_limit_from_the_environment_names_the_variable(tmp_path: Path) -> None:
    """GANGPLAN_MAX_DOCUMENTS=0 said '--max-documents must be at least 1', an option the user
    did not type; an option given wins over the variable, and is named."""
    path = tmp_path / "s.json"
    path.write_text(listed(NODE))
    for name, value, said in (
        ("GANGPLAN_MAX_DOCUMENTS", "0", "must be at least 1, got 0"),
        ("GANGPLAN_MAX_OBJECTS", "-1", "must be at least 1, got -1"),
        ("GANGPLAN_MAX_FILE_SIZE", "lots", "must be a positive number of bytes"),
    ):
        line = one_error(invoke("plan", str(path), env={name: value}))
        assert line.startswith(f"error: {name} {said}"), line
        option = "--" + name[len("GANGPLAN_"):].lower().replace("_", "-")
        line = one_error(invoke(option, "0", "plan", str(path), env={name: value}))
        assert line.startswith(f"error: {option} must be"), line
    line = one_error(invoke("generate", "--shape", "1x1x1x20", "--groups", "1", env={"GANGPLAN_MAX_OBJECTS": "10"}))
    assert "make more than GANGPLAN_MAX_OBJECTS 10 objects" in line


def test_the_object_limit_counts_list_items_one_by_one(tmp_path: Path) -> None:
    items = [NODE] + [pod(f"p{i}", {"cpu": "100m"}) for i in range(10)]
    path = tmp_path / "s.json"
    path.write_text(listed(*items))
    assert invoke("--max-objects", "11", "plan", str(path), "-o", "name").exit_code == 0
    line = one_error(invoke("--max-objects", "10", "plan", str(path)), "more than 10 Kubernetes objects", "--max-objects")
    assert f"{path}:1:" in line  # located at the eleventh object
    with pytest.raises(InputError, match="more than 10 Kubernetes objects"):
        load_snapshot([str(path)], limits=Limits(max_objects=10))


GANG = """\
apiVersion: extensions/v1beta1
kind: Gang
metadata: {{name: g}}
spec:
  replicationControllers:
  - name: rc
    replicas: {replicas}
    template:
      spec:
        containers: [{{name: c, resources: {{requests: {{cpu: 1m}}}}}}]
---
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "8"}}}}
"""

VOLCANO_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: tf}}
spec:
  tasks:
  - name: worker
    replicas: {replicas}
    template:
      spec:
        containers: [{{name: w, resources: {{requests: {{cpu: 1m}}}}}}]
---
apiVersion: v1
kind: Node
metadata: {{name: n1}}
status: {{allocatable: {{cpu: "8"}}}}
"""


@pytest.mark.parametrize("template,line", [(GANG, 7), (VOLCANO_JOB, 7)], ids=["gang", "volcano-job"])
def test_pods_a_workload_expands_into_count_as_objects(tmp_path: Path, template: str, line: int) -> None:
    """replicas: 10**100 must be refused before a single pod is made, not exhaust memory."""
    path = tmp_path / "w.yaml"
    path.write_text(template.format(replicas=10**100))
    error = one_error(invoke("plan", str(path)), "pods would make more than 1000000 objects", "--max-objects")
    assert f"{path}:{line}:" in error
    path.write_text(template.format(replicas=50))
    one_error(invoke("--max-objects", "40", "plan", str(path)), "50 pods")
    # the workload (1), its 50 pods, then the Node: the 52nd object is one too many for 51
    one_error(invoke("--max-objects", "51", "plan", str(path)), "counting the pods of workloads")
    assert invoke("--max-objects", "52", "plan", str(path), "-o", "name").exit_code == 0


def test_gang_workloads_are_bounded_too(tmp_path: Path) -> None:
    snapshot = tmp_path / "s.json"
    snapshot.write_text(listed(NODE))
    deployment = tmp_path / "d.yaml"
    deployment.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api}\nspec:\n  replicas: 1000000000000\n"
        "  template:\n    spec:\n      containers: [{name: c}]\n"
    )
    one_error(invoke("plan", str(snapshot), "--gang", f"web={deployment}"), "spec.replicas", "--max-objects")


def _workload(kind: str, spec: dict, where: str = "labels", key: str = "scheduling.x-k8s.io/pod-group", **top: object) -> dict:
    """A workload whose pod template names group g (by ``where``'s ``key``)."""
    template = {"metadata": {where: {key: "g"}}, "spec": {"containers": [{"name": "c"}]}}
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "w"}, "spec": {**spec, "template": template}, **top}


def _loads_within(tmp_path: Path, workload: dict, max_objects: int) -> str | None:
    """None when the workload (and a Node) load within ``max_objects``; else the error."""
    path = tmp_path / "w.json"
    path.write_text(listed(NODE, workload))
    try:
        load_snapshot([str(path)], limits=Limits(max_objects=max_objects))
    except InputError as exc:
        return str(exc)
    return None


def test_only_the_pods_a_workload_manifest_would_make_are_counted(tmp_path: Path) -> None:
    """A workload manifest whose template names a group by a label or an annotation (Volcano's
    group-name) is expanded into pods (manifests.expand_workloads), so its replicas count;
    one with a status comes from a cluster, whose pods are in the dump already: not counted."""
    manifest = _workload("Deployment", {"replicas": 50})
    assert "spec.replicas: 50 pods would make more than 40 objects" in (_loads_within(tmp_path, manifest, 40) or "")
    annotated = _workload("Deployment", {"replicas": 50}, where="annotations", key="scheduling.volcano.sh/group-name")
    assert "spec.replicas: 50 pods would make more than 40 objects" in (_loads_within(tmp_path, annotated, 40) or "")
    live = _workload("Deployment", {"replicas": 50}, status={"replicas": 50, "readyReplicas": 50})
    assert _loads_within(tmp_path, live, 40) is None


def test_a_job_counts_the_pods_it_runs_at_once_never_more_than_its_completions(tmp_path: Path) -> None:
    """A Job runs min(parallelism, completions) pods at once (the Job controller's wantActive);
    completions: 0 runs none."""
    assert _loads_within(tmp_path, _workload("Job", {"parallelism": 50, "completions": 20}), 30) is None
    found = _loads_within(tmp_path, _workload("Job", {"parallelism": 50, "completions": 40}), 30) or ""
    assert "spec.completions: 40 pods would make more than 30 objects" in found, found
    assert _loads_within(tmp_path, _workload("Job", {"parallelism": 50, "completions": 0}), 30) is None
    found = _loads_within(tmp_path, _workload("Job", {"parallelism": 50}), 30) or ""
    assert "spec.parallelism: 50 pods would make more than 30 objects" in found, found


# ---------------------------------------------------------------- quantities


@pytest.mark.parametrize(
    "items,phrase",
    [
        ([{**NODE, "status": {"allocatable": {"cpu": "1e30"}}}, pod("p", {"cpu": "1"})], "nodes' allocatable"),
        ([NODE, pod("p", {"cpu": "99999999999999999999"})], "pods' requests"),
        ([NODE, pod("p", {"nvidia.com/gpu": "9Ei"})], "pods' requests"),
        ([NODE] + [pod(f"p{i}", {"memory": str(2**58)}) for i in range(5)], "add up to more than 2^60"),
        (
            [NODE, {**NODE, "metadata": {"name": "n2"}, "status": {"allocatable": {"memory": str(2**59 + 1)}}},
             {**NODE, "metadata": {"name": "n3"}, "status": {"allocatable": {"memory": str(2**59)}}},
             pod("p", {"memory": "1"})],
            "nodes' allocatable",
        ),
        (
            [{**NODE, "status": {"allocatable": {"cpu": "4", "memory": "99999999999999999999"}}},
             {**pod("p", {"cpu": "1"}), "spec": {**pod("p", {"cpu": "1"})["spec"], "resources": {"limits": {"memory": "1Gi"}}}}],
            "nodes' allocatable",
        ),
    ],
    ids=["node-1e30", "pod-1e20", "pod-9Ei", "pods-sum", "nodes-sum", "pod-level-memory"],
)
def test_absurd_quantities_are_refused(tmp_path: Path, items: list[dict], phrase: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(listed(*items))
    one_error(invoke("plan", str(path)), "quantities this large cannot be planned", phrase)


@pytest.mark.parametrize("replicas,amount", [(1, "1e30"), (8, str(2**58))], ids=["one-pod", "pods-sum"])
def test_absurd_quantities_in_a_gangs_workload_are_refused_where_its_template_asks(
    tmp_path: Path, replicas: int, amount: str
) -> None:
    """A --gang's pods count toward the same totals as the snapshot's: a Deployment asking
    1e30 cores ended in an internal error (OverflowError), the snapshot having been checked
    before the gang joined it. The error names the field where the template writes it."""
    snapshot = tmp_path / "s.json"
    snapshot.write_text(listed(NODE))
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "namespace": "default"},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": amount}}}]}}},
    }
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps(deployment, indent=1))
    line = one_error(
        invoke("plan", str(snapshot), "--gang", f"t={workload}", "--solver", "greedy"),
        "spec.template.spec.containers[0].resources.requests.cpu: cpu quantities this large cannot be planned",
        "the pods' requests add up to more than 2^60 millicores",
    )
    row = next(n for n, text in enumerate(workload.read_text().splitlines(), 1) if '"cpu"' in text)
    assert f"w.json:{row}:" in line


@pytest.mark.parametrize("nested", [False, True], ids=["list", "list-in-a-list"])
def test_an_absurd_quantity_in_a_volcano_jobs_task_is_named_where_the_task_writes_it(tmp_path: Path, nested: bool) -> None:
    """The pods a Volcano Job in the snapshot makes are checked with the snapshot's; the error
    named the field as if the task's template were the whole object ('spec.containers[0]...').
    In a List inside a List (kubectl flattens it) the path starts at the object too."""
    job = {
        "apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "tf", "namespace": "default"},
        "spec": {"minAvailable": 1, "tasks": [{"name": "ps", "replicas": 1, "template": {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "1e30"}}}]}}}]},
    }
    bare = pod("p", {"cpu": "1e30"})
    path = tmp_path / "s.json"
    for item, field in ((job, "spec.tasks[0].template.spec.containers[0]"), (bare, "spec.containers[0]")):
        path.write_text(listed(NODE, json.loads(listed(item)) if nested else item))
        one_error(
            invoke("plan", str(path), "--solver", "greedy"),
            f": {field}.resources.requests.cpu: cpu quantities this large cannot be planned",
        )


def test_big_quantities_no_pod_asks_for_are_not_counted(tmp_path: Path) -> None:
    """ephemeral-storage of 20,000 nodes with large disks passes 2^60 bytes: only resources
    that something requests are bounded."""
    nodes = [
        {**NODE, "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"cpu": "8", "ephemeral-storage": str(2**59)}}}
        for i in range(3)
    ]
    path = tmp_path / "s.json"
    path.write_text(listed(*nodes, pod("p", {"cpu": "1"})))
    assert invoke("plan", str(path), "-o", "name").stdout == "binding/p\n"


@pytest.mark.parametrize("resource,rule", [("cpu", None), ("memory", "MEM"), ("nvidia.com/gpu", "GPU")])
def test_big_quantities_no_pod_asks_for_still_rank_the_domains(tmp_path: Path, resource: str, rule: str | None) -> None:
    """Sort rules rank domains on resources no pod may ask for (cpu by default): a node with
    1e30 of one, unbounded since nothing requests it, overflowed numpy in the ranking (an
    internal error found by the CLI fuzzer). Now it ranks as the most there can be: with the
    rule Descending on Capacity the one-pod group goes to its rack, not the other's 8."""
    def racked(name: str, rack: str, amount: str) -> dict:
        return {**NODE, "metadata": {"name": name, "labels": {"rack": rack}},
                "status": {"allocatable": {resource: amount, "example.com/x": "1"}}}

    sort = [{"resource": rule or "CPU", "dimension": "Capacity", "order": "Descending"}]
    group = {
        "apiVersion": "scheduling.godel.kubewharf.io/v1alpha1", "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 1, "affinity": {"podGroupAffinity": {"required": [{"topologyKey": "rack"}], "sortRules": sort}}},
    }
    member = pod("p", {"example.com/x": "1"}, annotations={"godel.bytedance.com/pod-group-name": "g"})
    path = tmp_path / "s.json"
    path.write_text(listed(racked("a", "r1", "8"), racked("b", "r2", "1e30"), group, member))
    result = invoke("plan", str(path), "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"][0]["target"]["name"] == "b"


@pytest.mark.parametrize("solver,policy", [("cp-sat", "optimal"), ("greedy", "optimal"), ("cp-sat", "ordered")])
def test_quantities_up_to_the_bound_plan_and_verify(tmp_path: Path, solver: str, policy: str) -> None:
    """Near the bound, neither CP-SAT (which refuses possible overflows) nor numpy overflows."""
    big = MAX_TOTAL_AMOUNT // 2
    nodes = [
        {**NODE, "metadata": {"name": f"n{i}"}, "status": {"allocatable": {"memory": str(big), "example.com/x": str(big)}}}
        for i in range(2)
    ]
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 3, "minResources": {"memory": str(big // 4)}},
    }
    member = {"labels": {"scheduling.x-k8s.io/pod-group": "g"}}
    pods = [pod(f"p{i}", {"memory": str(big // 8), "example.com/x": str(big // 8)}, **member) for i in range(4)]
    path = tmp_path / "s.json"
    path.write_text(listed(*nodes, group, *pods, pod("solo", {"memory": str(big // 4)})))
    snapshot = load_snapshot([str(path)])
    result = plan(snapshot, Options(solver=solver, policy=policy, time_limit=2))
    assert all(g.placed for g in result.groups)
    assert verify(snapshot, result.placements, result.topology_levels()).ok


def test_counts_beyond_int32_are_refused(tmp_path: Path) -> None:
    """minMember is an int32 in every PodGroup API; 2^63 used to overflow the solver's objective."""
    spec = {"minMember": 2**63}
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": spec,
    }
    member = pod("p", {"cpu": "1"}, labels={"scheduling.x-k8s.io/pod-group": "g"})
    path = tmp_path / "s.json"
    path.write_text(listed(NODE, group, member))
    one_error(invoke("check", str(path)), "spec.minMember: 9223372036854775808 is more than 2147483647")
    spec["minMember"] = 2**31  # the edge (review 19 Q F5: one more was not caught)
    path.write_text(listed(NODE, group, member))
    one_error(invoke("check", str(path)), "spec.minMember: 2147483648 is more than 2147483647")
    kueue = pod("k", {"cpu": "1"}, labels={"kueue.x-k8s.io/pod-group-name": "job"},
                annotations={"kueue.x-k8s.io/pod-group-total-count": "99999999999999999999"})
    path.write_text(listed(NODE, kueue))
    one_error(invoke("plan", str(path)), "pod-group-total-count", "is more than 2147483647")


def test_int32_counts_are_read_up_to_their_edge(tmp_path: Path) -> None:
    """2147483647 is the largest int32, so it is read; one more is refused, in minTaskMember
    (map[string]int32 in Volcano's PodGroup) and in Kueue's total count (an int32) too."""
    path = tmp_path / "s.json"
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 2**31 - 1, "minTaskMember": {"worker": 2**31 - 1}},
    }
    path.write_text(listed(NODE, group))
    (read,) = load_snapshot([str(path)]).pod_groups
    assert (read.min_member, read.min_task_member) == (2**31 - 1, {"worker": 2**31 - 1})
    group["spec"] = {"minMember": 1, "minTaskMember": {"worker": 2**31}}
    path.write_text(listed(NODE, group))
    with pytest.raises(InputError, match=r"spec\.minTaskMember\.worker: 2147483648 is more than 2147483647"):
        load_snapshot([str(path)])
    labels = {"kueue.x-k8s.io/pod-group-name": "job"}
    for count, refused in ((2**31 - 1, False), (2**31, True)):
        path.write_text(listed(NODE, pod("k", {"cpu": "1"}, labels=labels, annotations={"kueue.x-k8s.io/pod-group-total-count": str(count)})))
        if refused:
            with pytest.raises(InputError, match="is more than 2147483647"):
                load_snapshot([str(path)])
        else:
            assert [p.name for p in load_snapshot([str(path)]).pods] == ["k"]


def test_a_pod_group_nested_exactly_one_hundred_levels_deep_is_read(tmp_path: Path) -> None:
    """README: 100 levels inside the PodGroups gangplan writes back out. Counted as JSON nests:
    the PodGroup itself is the first level, its spec the second."""
    def group(levels: int) -> dict:
        extra: object = "x"
        for _ in range(levels - 2):  # the PodGroup and its spec are two
            extra = [extra]
        return {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1",
            "kind": "PodGroup",
            "metadata": {"name": "g", "namespace": "default"},
            "spec": {"minMember": 1, "extra": extra},
        }

    path = tmp_path / "s.json"
    path.write_text(listed(NODE, group(100)))
    assert [g.name for g in load_snapshot([str(path)]).pod_groups] == ["g"]
    path.write_text(listed(NODE, group(101)))
    with pytest.raises(InputError, match="PodGroup default/g is nested more than 100 levels deep"):
        load_snapshot([str(path)])


def _nested(depth: int) -> object:
    inner: object = "x"
    for _ in range(depth):
        inner = {"k": [inner]}
    return inner


@pytest.mark.parametrize("output", ["status", "json"])
def test_what_is_written_back_out_is_not_nested_too_deeply(tmp_path: Path, output: str) -> None:
    """PodGroups (-o status) and pods to create (-o json) are written as given: 450 levels
    would overflow the YAML dumper or deepcopy (exit 3); more than 100 is refused up front."""
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 1, "extra": _nested(225)},
    }
    member = pod("p", {"cpu": "1"}, labels={"scheduling.x-k8s.io/pod-group": "g"})
    gang = {
        "apiVersion": "extensions/v1beta1",
        "kind": "Gang",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"pods": [{"name": "w-0", "containers": [{"name": "c", "extra": _nested(225)}]}]},
    }
    path = tmp_path / "s.json"
    path.write_text(listed(NODE, group, member) if output == "status" else listed(NODE, gang))
    one_error(invoke("plan", str(path), "-o", output), "nested more than 100 levels deep")
    shallow = json.loads(path.read_text())
    for item in shallow["items"]:
        if item["kind"] in ("PodGroup", "Gang"):
            item["spec"].pop("extra", None)
            for spec in item["spec"].get("pods", []):
                spec["containers"][0]["extra"] = _nested(40)
    path.write_text(json.dumps(shallow))
    assert invoke("plan", str(path), "-o", output).exit_code == 0


@pytest.mark.parametrize(
    "document",
    [
        {"kind": "List", "items": 7},
        {"kind": "List", "items": [{"kind": "Binding", "metadata": {"name": "p"}, "target": "n1"}]},
        {"kind": "Plan", "schemaVersion": 1, "placements": [], "groups": [{"name": "g", "domains": 3}]},
        {"kind": "Plan", "schemaVersion": 1, "placements": [], "groups": [{"name": "g", "priority": "high"}]},
        {"kind": "Plan", "schemaVersion": 1, "placements": [], "solver": {"objective": [{"name": "x", "value": "v", "sense": "max"}]}},
    ],
    ids=["items-int", "target-string", "domains-int", "priority-string", "objective-value"],
)
def test_a_plan_file_with_wrong_types_is_an_input_error(tmp_path: Path, document: dict) -> None:
    snapshot = tmp_path / "s.json"
    snapshot.write_text(listed(NODE))
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    one_error(invoke("verify", str(snapshot), "--plan", str(path)), str(path))
    one_error(invoke("diff", "--plan", str(path), "--plan", str(path)), str(path))


# ---------------------------------------------------------------- the defaults


def test_the_defaults_are_the_documented_ones() -> None:
    limits = Limits()
    assert (limits.max_file_bytes, limits.max_documents, limits.max_objects) == (2 * 1024**3, 1_000_000, 1_000_000)
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Security and limits") : readme.index("## Python API")]
    for option in ("--max-file-size", "--max-documents", "--max-objects", "2Gi", "1,000,000"):
        assert option in section, option


def test_the_alias_limit_is_the_documented_ten_thousand(tmp_path: Path) -> None:
    """README, Security and limits: "10,000 aliases" by default. A ConfigMap (a kind gangplan
    counts, not reads) with that many aliases of a one-character string loads; one more is
    refused, at the alias that passes the limit."""
    def config_map(aliases: int) -> str:
        return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: &a x\n  b: [" + ", ".join(["*a"] * aliases) + "]\n"

    path = tmp_path / "aliases.yaml"
    path.write_text(config_map(10_000))
    assert load_snapshot([str(path)]).skipped_kinds
    path.write_text(config_map(10_001))
    with pytest.raises(InputError) as caught:
        load_snapshot([str(path)])
    column = len("  b: [") + 4 * 10_000 + 1  # the 10,001st "*a", each alias before it taking "*a, "
    assert str(caught.value) == f"{path}:6:{column}: more than 10000 YAML aliases (alias bomb?)"


@pytest.mark.slow
def test_a_twenty_thousand_node_dump_loads_with_the_default_limits(tmp_path: Path) -> None:
    doc = generate(shape=(4, 8, 20, 32), groups=4000, seed=0)
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    size = path.stat().st_size
    start = time.perf_counter()
    snapshot = load_snapshot([str(path)])
    seconds = time.perf_counter() - start
    assert len(snapshot.nodes) == 20_480
    assert len(snapshot.pod_groups) == 4000
    print(f"\n20,480 nodes, {len(snapshot.pods)} pods, {size / 2**20:.0f} MiB of JSON: loaded in {seconds:.1f}s")
