"""Gangs whose pods do not exist yet: seed 002's Gang, Volcano Jobs and --gang workloads,
expanded into a PodGroup and pending Pods that carry the v1 Pod to create."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest

from gangplan.errors import InputError, UsageError
from gangplan.loader import load_snapshot, read_objects
from gangplan.manifests import gang_from_objects, with_gang
from gangplan.model import Pod, PodGroupAPI, PodPhase, Snapshot
from gangplan.planner import Options, plan
from gangplan.semantics import group_pods, pod_requests
from gangplan.verify import verify

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"

# Seed 002's example, exactly as the seed writes it.
SEED_GANG = """\
apiVersion: extensions/v1beta1 
kind: Gang
metadata:
  name: mygang
  labels:
    name: mygang
spec:
  replicationControllers:
    - name: myapp
      labels:
        name: myapp
      replicas: 2
      selector:
        name: myapp
      template:
        metadata:
          labels:
            name: myapp
        spec:
          containers:
          - name: myapp1
            image: myapp1
            ports:
            - containerPort: 6222
          - name: myapp2
            image: myapp2
            ports:
            - containerPort: 6223
  pods:
    - name: mydb
      labels:
        name: mydb
      containers:
        - name: mydb
          image: mydb
          ports:
            - containerPort: 6224
"""

VOLCANO_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata:
  name: tf
  namespace: ml
spec:
  schedulerName: volcano
  minAvailable: {min_available}
  queue: research
  priorityClassName: high
  tasks:
  - name: ps
    replicas: 1
    minAvailable: 1
    template:
      metadata:
        labels: {{app: tf}}
      spec:
        containers:
        - name: ps
          resources: {{requests: {{cpu: "1"}}}}
  - name: worker
    replicas: 4
    minAvailable: 2
    template:
      spec:
        containers:
        - name: worker
          resources: {{requests: {{cpu: "2", nvidia.com/gpu: "1"}}}}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: shop
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        resources: {requests: {cpu: 500m}}
"""

STATEFUL_SET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  replicas: 3
  serviceName: web
  template:
    metadata:
      labels: {app: web}
      annotations: {note: kept}
    spec:
      containers:
      - name: web
        resources: {requests: {cpu: "1", memory: 1Gi}}
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        resources: {limits: {nvidia.com/gpu: "1"}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: coordinator
  uid: not-created-yet
  labels: {role: coordinator, scheduling.x-k8s.io/pod-group: old}
spec:
  containers:
  - name: c
    resources: {requests: {cpu: 250m}}
status:
  phase: Pending
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Relative file names, so error messages show them exactly as given."""
    monkeypatch.chdir(tmp_path)


def manifest_of(pod: Pod) -> Mapping[str, Any]:
    """The Pod object to create, for a test to read field by field as the JSON it is."""
    assert pod.manifest is not None, pod.key
    return pod.manifest


def write(name: str, text: str) -> str:
    Path(name).write_text(text, encoding="utf-8")
    return name


def error(run: Callable[[], object]) -> str:
    with pytest.raises(InputError) as caught:
        run()
    return str(caught.value)


def node(name: str, cpu: str = "8", gpu: str = "0", **labels: str) -> str:
    return f"""\
---
apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {dict(labels) or {}}
status:
  allocatable: {{cpu: "{cpu}", memory: 32Gi, nvidia.com/gpu: "{gpu}", pods: "110"}}
"""


# ---------------------------------------------------------------- seed 002's Gang


def test_seed_gang_expands_to_its_pods() -> None:
    snapshot = load_snapshot([write("gang.yaml", SEED_GANG)])
    (group,) = snapshot.pod_groups
    assert (group.key, group.api, group.min_member) == ("default/mygang", PodGroupAPI.GANG, 3)
    assert group.raw["kind"] == "Gang"
    assert [p.name for p in snapshot.pods] == ["myapp-0", "myapp-1", "mydb"]
    for pod in snapshot.pods:
        assert (pod.namespace, pod.node_name, pod.phase) == ("default", None, PodPhase.PENDING)
        assert pod.labels[GROUP_LABEL] == "mygang"
        assert pod.manifest is not None
        assert pod.manifest["apiVersion"] == "v1" and pod.manifest["kind"] == "Pod"
        assert manifest_of(pod)["metadata"]["labels"] == pod.labels
    app, _, db = snapshot.pods
    assert app.labels == {"name": "myapp", GROUP_LABEL: "mygang"}
    assert [c.name for c in app.containers] == ["myapp1", "myapp2"]
    assert manifest_of(app)["metadata"] == {
        "name": "myapp-0",
        "namespace": "default",
        "labels": {"name": "myapp", GROUP_LABEL: "mygang"},
    }
    # The seed's pods[] item: name and labels go to metadata, the rest is the spec.
    assert manifest_of(db)["spec"] == {
        "containers": [{"name": "mydb", "image": "mydb", "ports": [{"containerPort": 6224}]}]
    }
    assert db.labels == {"name": "mydb", GROUP_LABEL: "mygang"}
    # Each pod's spec is its own mapping: the renderer sets nodeName on one at a time.
    assert manifest_of(app)["spec"] is not manifest_of(snapshot.pods[1])["spec"]
    (job_group,) = group_pods(snapshot).job_groups
    assert [p.name for p in job_group.top.pending] == ["myapp-0", "myapp-1", "mydb"]


def test_gang_items_may_be_full_objects() -> None:
    text = """\
apiVersion: extensions/v1beta1
kind: Gang
metadata: {name: g, namespace: ml}
spec:
  replicationControllers:
  - metadata: {name: rc}
    spec:
      template:
        spec:
          containers: [{name: c, resources: {requests: {cpu: "1"}}}]
  pods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: solo, labels: {a: b}}
    spec:
      containers: [{name: c, resources: {requests: {cpu: 2}}}]
"""
    snapshot = load_snapshot([write("gang.yaml", text)])
    assert [p.key for p in snapshot.pods] == ["ml/rc-0", "ml/solo"]  # replicas default to 1
    assert [pod_requests(p)["cpu"] for p in snapshot.pods] == [1000, 2000]
    assert snapshot.pod_groups[0].min_member == 2


# ---------------------------------------------------------------- Volcano Job


def test_volcano_job_expands_as_volcano_names_its_pods() -> None:
    snapshot = load_snapshot([write("job.yaml", VOLCANO_JOB.format(min_available=3))])
    (group,) = snapshot.pod_groups
    assert (group.key, group.api) == ("ml/tf", PodGroupAPI.VOLCANO_JOB)
    assert group.min_member == 3
    assert group.min_task_member == {"ps": 1, "worker": 2}
    assert (group.queue, group.priority_class_name) == ("research", "high")
    assert [p.name for p in snapshot.pods] == [
        "tf-ps-0",
        "tf-worker-0",
        "tf-worker-1",
        "tf-worker-2",
        "tf-worker-3",
    ]
    ps, worker = snapshot.pods[0], snapshot.pods[3]
    assert ps.labels["volcano.sh/task-spec"] == "ps" and ps.labels["app"] == "tf"
    assert worker.labels["volcano.sh/task-spec"] == "worker"
    assert worker.labels["volcano.sh/task-index"] == "2"
    assert worker.annotations["scheduling.k8s.io/group-name"] == "tf"
    assert worker.annotations["volcano.sh/task-spec"] == "worker"
    assert worker.priority_class_name == "high"  # the job's, as Volcano gives its pods
    assert manifest_of(worker)["spec"]["priorityClassName"] == "high"
    assert "schedulerName" not in manifest_of(worker)["spec"]
    assert pod_requests(worker) == {"cpu": 2000, "nvidia.com/gpu": 1, "pods": 1}
    (job_group,) = group_pods(snapshot).job_groups
    assert len(job_group.top.pending) == 5


def test_volcano_job_minimum_defaults_as_its_webhook() -> None:
    """Absent (or 0), the job's minAvailable is the sum of the tasks' (replicas without one),
    and a task without minAvailable has it at its replicas (the webhook's mutateSpec)."""
    text = VOLCANO_JOB.format(min_available=0)
    assert load_snapshot([write("a.yaml", text)]).pod_groups[0].min_member == 1 + 2
    text = text.replace("    minAvailable: 2\n", "")
    group = load_snapshot([write("b.yaml", text)]).pod_groups[0]
    assert (group.min_member, group.min_task_member) == (1 + 4, {"ps": 1, "worker": 4})


def test_batch_jobs_are_still_skipped_and_created_volcano_jobs_too() -> None:
    created = VOLCANO_JOB.format(min_available=3) + "status:\n  state: {phase: Running}\n"
    snapshot = load_snapshot([write("jobs.yaml", JOB + "---\n" + created)])
    assert not snapshot.pods and not snapshot.pod_groups
    assert snapshot.skipped_kinds == {
        "Job (batch/v1, its pod template names no pod group; --gang NAME=FILE plans it as one gang)": 1,
        "Job (batch.volcano.sh/v1alpha1, already created)": 1,
    }


# ---------------------------------------------------------------- --gang NAME=FILE,...


def test_gang_from_workloads_and_a_pod() -> None:
    files = [
        write("deploy.yaml", DEPLOYMENT),
        write("more.yaml", STATEFUL_SET + "---\n" + JOB + "---\n" + POD),
    ]
    group, pods = gang_from_objects("shop-gang", read_objects(files))
    assert (group.key, group.api, group.min_member) == ("shop/shop-gang", PodGroupAPI.MANIFESTS, 8)
    assert group.raw["kind"] == "PodGroup" and group.raw["spec"] == {"minMember": 8}
    assert [p.name for p in pods] == [
        "api-0",
        "api-1",
        "web-0",
        "web-1",
        "web-2",
        "train-0",
        "train-1",
        "coordinator",
    ]
    for pod in pods:
        assert pod.namespace == "shop"  # the one namespace the objects name
        assert pod.labels[GROUP_LABEL] == "shop-gang"
        assert manifest_of(pod)["metadata"]["labels"][GROUP_LABEL] == "shop-gang"
        assert manifest_of(pod)["metadata"]["namespace"] == "shop"
        assert (pod.node_name, pod.phase) == (None, PodPhase.PENDING)
    web = pods[2]
    assert web.labels == {"app": "web", GROUP_LABEL: "shop-gang"}
    assert web.annotations == {"note": "kept"}
    assert pod_requests(pods[5]) == {"nvidia.com/gpu": 1, "pods": 1}  # limits default requests
    coordinator = pods[-1]
    assert coordinator.labels == {"role": "coordinator", GROUP_LABEL: "shop-gang"}
    # The Pod to create: no uid, no status.
    manifest = coordinator.manifest or {}
    assert set(manifest) == {"apiVersion", "kind", "metadata", "spec"}
    assert "uid" not in manifest_of(coordinator)["metadata"]
    snapshot = with_gang(Snapshot(), group, pods)
    (job_group,) = group_pods(snapshot).job_groups
    assert len(job_group.top.pending) == 8


def test_gang_namespace_and_counts() -> None:
    text = STATEFUL_SET.replace("  replicas: 3\n", "  replicas: 2\n  ordinals: {start: 5}\n")
    text += "---\n" + JOB.replace("parallelism: 2", "parallelism: 4\n  completions: 3")
    group, pods = gang_from_objects("g", read_objects([write("w.yaml", text)]), namespace="team")
    assert group.key == "team/g"
    trains = [f"team/train-{i}" for i in range(3)]  # parallelism 4, but only 3 completions
    assert [p.key for p in pods] == ["team/web-5", "team/web-6", *trains]


# ---------------------------------------------------------------- errors


def test_bad_replicas_is_located() -> None:
    path = write("deploy.yaml", DEPLOYMENT.replace("replicas: 2", 'replicas: "2"'))
    assert error(lambda: gang_from_objects("g", read_objects([path]))) == (
        'deploy.yaml:7:13: spec.replicas: expected a non-negative integer, got "2"'
    )
    job = VOLCANO_JOB.format(min_available=3).replace("replicas: 4", "replicas: four")
    assert error(lambda: load_snapshot([write("job.yaml", job)])) == (
        'job.yaml:23:15: spec.tasks[1].replicas: expected a non-negative integer, got "four"'
    )
    gang = SEED_GANG.replace("replicas: 2", "replicas: -1")
    assert error(lambda: load_snapshot([write("gang.yaml", gang)])).startswith(
        "gang.yaml:12:17: spec.replicationControllers[0].replicas: expected a non-negative"
    )


def test_template_fields_are_located_where_written() -> None:
    bad = "image: myapp2\n            resources: {requests: {cpu: lots}}"
    gang = SEED_GANG.replace("image: myapp2", bad)
    found = error(lambda: load_snapshot([write("gang.yaml", gang)]))
    assert found.startswith("gang.yaml:27:41: spec.replicationControllers[0].template.spec.containers[1].resources.requests.cpu: "), found
    # A seed-shaped pods[] item: the built Pod's spec fields are the item's own (named as a Pod's).
    bad = "image: mydb\n          resources: {limits: {memory: [1]}}"
    gang = SEED_GANG.replace("image: mydb", bad)
    found = error(lambda: load_snapshot([write("gang.yaml", gang)]))
    assert found.startswith("gang.yaml:36:40: spec.containers[0].resources.limits.memory: "), found
    gang = SEED_GANG.replace("name: mydb\n", "name: mydb\n      nodeName: n1\n", 1)
    assert error(lambda: load_snapshot([write("gang.yaml", gang)])) == (
        'gang.yaml:31:17: spec.pods[0].nodeName: is "n1", but these pods do not exist yet '
        "and gangplan places them; remove nodeName"
    )
    path = write("pod.yaml", POD.replace("spec:\n", "spec:\n  nodeName: n1\n"))
    assert error(lambda: gang_from_objects("g", read_objects([path]))).startswith(
        "pod.yaml:8:13: spec.nodeName: "
    )


def test_mixed_namespaces_name_both() -> None:
    blog = STATEFUL_SET.replace("name: web\n", "name: web\n  namespace: blog\n", 1)
    files = [write("deploy.yaml", DEPLOYMENT), write("sts.yaml", blog)]
    assert error(lambda: gang_from_objects("g", read_objects(files))) == (
        'sts.yaml:5:14: metadata.namespace: --gang g is one gang in one namespace, but StatefulSet '
        'web is in "blog" and Deployment api is in "shop" (at deploy.yaml:5:14)'
    )
    assert error(lambda: gang_from_objects("g", read_objects(files[:1]), namespace="x")) == (
        'deploy.yaml:5:14: metadata.namespace: Deployment api is in namespace "shop", '
        'but --gang g is in "x"'
    )


def test_unsupported_kinds() -> None:
    service = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"
    assert error(lambda: gang_from_objects("g", read_objects([write("svc.yaml", service)]))) == (
        "svc.yaml:2:7: --gang takes Pods and workloads (ReplicationController, Deployment, "
        "ReplicaSet, StatefulSet, Job), got Service x"
    )
    volcano = write("job.yaml", VOLCANO_JOB.format(min_available=1))
    assert "a Volcano Job is a gang by itself" in error(
        lambda: gang_from_objects("g", read_objects([volcano]))
    )
    with pytest.raises(UsageError):
        gang_from_objects("Not_A_Name", [])
    assert "no Pods or workloads" in error(lambda: gang_from_objects("g", []))


def test_invalid_expanded_names() -> None:
    path = write("deploy.yaml", DEPLOYMENT.replace("name: api\n", "name: API\n", 1))
    assert error(lambda: gang_from_objects("g", read_objects([path]))) == (
        'deploy.yaml:4:9: metadata.name: Deployment API would make pod "API-0", not a valid '
        "name (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit)"
    )
    long = "a" * 252
    path = write("sts.yaml", STATEFUL_SET.replace("name: web\n", f"name: {long}\n", 1))
    assert error(lambda: gang_from_objects("g", read_objects([path]))).startswith(
        f'sts.yaml:4:9: metadata.name: StatefulSet {long} would make pod "{long}-0", '
        "not a valid name (254 characters, more than 253)"
    )
    gang = SEED_GANG.replace("- name: myapp\n", "- name: my_app\n")
    assert error(lambda: load_snapshot([write("gang.yaml", gang)])).startswith(
        'gang.yaml:9:13: spec.replicationControllers[0].name: replicationControllers[0] my_app '
        'would make pod "my_app-0"'
    )
    job = VOLCANO_JOB.format(min_available=3).replace("name: worker\n", "name: Worker\n", 1)
    assert error(lambda: load_snapshot([write("job.yaml", job)])).startswith(
        'job.yaml:22:11: spec.tasks[1].name: task name "Worker" is not valid'
    )


def test_volcano_minimums_are_checked() -> None:
    job = VOLCANO_JOB.format(min_available=3).replace("minAvailable: 2", "minAvailable: 5")
    assert error(lambda: load_snapshot([write("a.yaml", job)])) == (
        "a.yaml:24:19: spec.tasks[1].minAvailable: 5 is more than the task's 4 replicas"
    )
    job = VOLCANO_JOB.format(min_available=6)
    assert error(lambda: load_snapshot([write("b.yaml", job)])) == (
        "b.yaml:8:17: spec.minAvailable: 6 is more than the 5 replicas of the Job's tasks"
    )


def test_duplicate_pod_names_name_both() -> None:
    existing = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: mydb\n"
    files = [write("pods.yaml", existing), write("gang.yaml", SEED_GANG)]
    assert error(lambda: load_snapshot(files)) == (
        "gang.yaml:30:13: duplicate Pod default/mydb from Gang default/mygang "
        "(first at pods.yaml:4:9)"
    )
    pod_group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    pod_group += "metadata: {name: mygang}\nspec: {minMember: 1}\n"
    files = [write("gang.yaml", SEED_GANG), write("pg.yaml", pod_group)]
    assert error(lambda: load_snapshot(files)) == (
        "pg.yaml:3:18: duplicate PodGroup default/mygang (first from Gang default/mygang "
        "at gang.yaml:4:9)"
    )
    snapshot = load_snapshot([write("snap.yaml", POD.replace("name: coordinator", "name: web-1"))])
    group, pods = gang_from_objects("g", read_objects([write("sts.yaml", STATEFUL_SET)]))
    assert error(lambda: with_gang(snapshot, group, pods)) == (
        "sts.yaml:4:9: duplicate Pod default/web-1 from --gang g (first at snap.yaml:4:9)"
    )
    web_2 = POD.replace("name: coordinator", "name: web-2")
    two = write("two.yaml", STATEFUL_SET + "---\n" + web_2)
    assert error(lambda: gang_from_objects("g", read_objects([two]))) == (
        "two.yaml:20:9: metadata.name: Pod web-2 would make pod default/web-2, "
        "which StatefulSet web already makes"
    )


def test_a_template_may_not_name_another_group_first() -> None:
    job = VOLCANO_JOB.format(min_available=3).replace(
        "labels: {app: tf}", "labels: {app: tf, scheduling.x-k8s.io/pod-group: other}"
    )
    assert error(lambda: load_snapshot([write("job.yaml", job)])) == (
        'job.yaml:17:58: metadata.labels["scheduling.x-k8s.io/pod-group"]: names PodGroup '
        '"other", but these pods belong to "tf"; remove it'
    )


# ---------------------------------------------------------------- end to end


def test_an_expanded_gang_is_planned_and_verified() -> None:
    gang = SEED_GANG.replace(
        "image: myapp2", 'image: myapp2\n            resources: {requests: {cpu: "3"}}'
    ).replace("image: mydb\n", 'image: mydb\n          resources: {requests: {cpu: "1"}}\n')
    text = gang + node("n1", cpu="4") + node("n2", cpu="4")
    snapshot = load_snapshot([write("cluster.yaml", text)])
    result = plan(snapshot, Options(time_limit=5))
    assert sorted(p.name for p in result.placements) == ["myapp-0", "myapp-1", "mydb"]
    assert {p.group for p in result.placements} == {"default/mygang"}
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    # The verifier sees the expanded pods as one gang: two of three break minMember.
    partial = verify(snapshot, result.placements[:2], result.topology_levels())
    assert not partial.ok
    assert [v.rule for v in partial.violations] == ["min-member"]
    # One node more than the cluster holds: all or nothing, so nothing.
    tight = load_snapshot([write("tight.yaml", gang + node("n1", cpu="4") + node("n2", cpu="2"))])
    result = plan(tight, Options(time_limit=5))
    assert result.placements == ()
    assert verify(tight, result.placements, result.topology_levels()).ok


def test_a_volcano_job_and_a_gang_flag_are_planned_and_verified() -> None:
    text = VOLCANO_JOB.format(min_available=3) + node("g1", gpu="2") + node("g2", gpu="1")
    snapshot = load_snapshot([write("cluster.yaml", text)])
    group, pods = gang_from_objects("web", read_objects([write("sts.yaml", STATEFUL_SET)]))
    snapshot = with_gang(snapshot, group, pods)
    result = plan(snapshot, Options(time_limit=5))
    placed = sorted(p.name for p in result.placements)
    # 3 GPUs: ps and 3 of the 4 workers, beyond minAvailable 3; and the three web pods.
    workers = ["tf-worker-0", "tf-worker-1", "tf-worker-2"]
    assert placed == ["tf-ps-0", *workers, "web-0", "web-1", "web-2"]
    assert verify(snapshot, result.placements, result.topology_levels()).ok


@pytest.mark.parametrize("form", ["github", "junit"])
def test_a_gang_name_clash_is_bad_input_in_every_check_format(form: str) -> None:
    """A --gang whose pods clash with the snapshot's is located bad input (exit 2) in the CI
    formats too; the position was handed on as text and check -o github crashed with an
    internal error, exit 3 (review 19 T F2)."""
    from typer.testing import CliRunner

    from gangplan.cli import app

    snapshot = write("snap.yaml", POD.replace("name: coordinator", "name: web-1"))
    sts = write("sts.yaml", STATEFUL_SET)
    result = CliRunner().invoke(app, ["check", snapshot, "--gang", f"g={sts}", "--format", form])
    assert result.exit_code == 2, result.output
    assert "duplicate Pod default/web-1 from --gang g (first at snap.yaml:4:9)" in result.stdout
    if form == "github":
        assert result.stdout.startswith("::error file=sts.yaml,line=4,col=9,")


STATEFUL_SET_WITH_CLAIMS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: t}
spec:
  replicas: 2
  template:
    spec:
      volumes: [{name: data, emptyDir: {}}, {name: cfg, configMap: {name: c}}]
      containers: [{name: c, resources: {requests: {cpu: "1"}}, volumeMounts: [{name: data, mountPath: /d}]}]
  volumeClaimTemplates: [{metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}]
"""


def test_a_statefulsets_pods_get_its_claim_templates_volumes() -> None:
    """Session 22's workload review F1: the pods made for a StatefulSet with volumeClaimTemplates
    mounted a volume they did not have, which the API server refuses, and no warning said that
    volume binding is not modelled. Each pod gets the volume its controller adds, the claim
    <template>-<pod>, in place of a template volume of that name."""
    objects = read_objects([write("sts.yaml", STATEFUL_SET_WITH_CLAIMS)])
    _, pods = gang_from_objects("x", objects)
    assert [manifest_of(p)["spec"]["volumes"] for p in pods] == [
        [{"name": "cfg", "configMap": {"name": "c"}}, {"name": "data", "persistentVolumeClaim": {"claimName": f"data-db-{i}"}}]
        for i in range(2)
    ]
    assert all(p.unmodelled and "VolumeBinding" in p.unmodelled[0] for p in pods)


def test_a_volcano_jobs_volumes_are_mounted_in_its_pods() -> None:
    """Session 22's workload review F2: spec.volumes was dropped. Volcano's controller mounts a
    named claim in every container; a claim it makes for a volumeClaim is named at random, so
    only the group says volume binding is not modelled."""
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vv, namespace: ml}
spec:
  volumes: [{mountPath: /data, volumeClaimName: shared}, {mountPath: /scratch, volumeClaim: {accessModes: [ReadWriteOnce]}}]
  tasks:
  - {name: w, replicas: 2, template: {spec: {containers: [{name: a, volumeMounts: [{name: x, mountPath: /x}]}, {name: b}]}}}
"""
    snapshot = load_snapshot([write("vv.yaml", job)])
    (group,) = snapshot.pod_groups
    assert group.unmodelled and "VolumeBinding" in group.unmodelled[0]
    names = set()
    for pod in snapshot.pods:
        spec = manifest_of(pod)["spec"]
        (volume,) = spec["volumes"]
        assert volume["persistentVolumeClaim"] == {"claimName": "shared"}
        # createJobPod names it <job>-<12 random characters>; gangplan's are drawn from the claim
        assert re.fullmatch(r"vv-[0-9a-z]{12}", volume["name"]), volume
        names.add(volume["name"])
        assert [c["volumeMounts"] for c in spec["containers"]] == [
            [{"name": "x", "mountPath": "/x"}, {"name": volume["name"], "mountPath": "/data"}],
            [{"name": volume["name"], "mountPath": "/data"}],
        ]
    assert len(names) == 1  # the same in every pod: a plan's output is reproducible


def _volumes_job(volumes: str, template_spec: str) -> str:
    return (
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: vv, namespace: ml}\n"
        f"spec:\n  volumes: {volumes}\n  tasks:\n  - {{name: w, replicas: 1, template: {{spec: {template_spec}}}}}\n"
    )


def test_a_claim_named_twice_in_a_volcano_jobs_volumes_is_mounted_once() -> None:
    """Volcano's createJobPod adds one volume per claim and skips, mount and all, an entry whose
    claim it has added already ("duplicate volumes, should be prevented"); its webhook refuses
    only a repeated mountPath. gangplan wrote the volume twice under one name, which the API
    server refuses (spec.volumes[1].name: Duplicate value)."""
    job = _volumes_job(
        "[{mountPath: /a, volumeClaimName: shared}, {mountPath: /b, volumeClaimName: shared}, {mountPath: /c, volumeClaimName: other}]",
        "{containers: [{name: c}]}",
    )
    (pod,) = load_snapshot([write("vv.yaml", job)]).pods
    spec = manifest_of(pod)["spec"]
    claims = {v["persistentVolumeClaim"]["claimName"]: v["name"] for v in spec["volumes"]}
    assert list(claims) == ["shared", "other"] and len(set(claims.values())) == 2
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": claims["shared"], "mountPath": "/a"}, {"name": claims["other"], "mountPath": "/c"},
    ]


def test_a_volcano_claim_leaves_a_template_volume_of_the_same_name_alone() -> None:
    """createJobPod names a claim's volume after the Job, not the claim, so the template's own
    volume that happens to share the claim's name stays as written, and so do its mounts.
    gangplan named the volume after the claim and dropped the template's: the emptyDir mount
    at /x became a mount of the claim."""
    job = _volumes_job(
        "[{mountPath: /data, volumeClaimName: shared}]",
        "{volumes: [{name: shared, emptyDir: {}}], containers: [{name: c, volumeMounts: [{name: shared, mountPath: /x}]}]}",
    )
    (pod,) = load_snapshot([write("vv.yaml", job)]).pods
    spec = manifest_of(pod)["spec"]
    own, claim = spec["volumes"]
    assert own == {"name": "shared", "emptyDir": {}} and claim["persistentVolumeClaim"] == {"claimName": "shared"}
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "shared", "mountPath": "/x"}, {"name": claim["name"], "mountPath": "/data"},
    ]


def test_a_gang_workload_may_be_named_by_generate_name() -> None:
    """Session 22's workload review F7: --gang refused a Job named by generateName ('metadata.name:
    required field is missing') that the same Job given as an input expands, with the prefix."""
    job = """\
apiVersion: batch/v1
kind: Job
metadata: {generateName: train-, namespace: ml}
spec:
  parallelism: 2
  template: {spec: {restartPolicy: Never, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
"""
    _, pods = gang_from_objects("x", read_objects([write("job.yaml", job)]))
    assert [p.name for p in pods] == ["train-0", "train-1"]
    nameless = job.replace("generateName: train-, ", "")
    assert "a workload names its pods with name or generateName" in error(
        lambda: gang_from_objects("x", read_objects([write("nameless.yaml", nameless)]))
    )


def test_an_error_in_a_template_names_its_path_in_the_workload() -> None:
    """A bad field of a Job's or a Volcano Job task's pod template was named as a Pod's
    (spec.containers[0]...), though the line and column were the template's."""
    bad = VOLCANO_JOB.format(min_available=3).replace('cpu: "2", nvidia.com/gpu', 'cpu: "2x", nvidia.com/gpu')
    assert error(lambda: load_snapshot([write("vj.yaml", bad)])) == (
        "vj.yaml:29:39: spec.tasks[1].template.spec.containers[0].resources.requests.cpu: '2x' is not a quantity "
        "(expected a number with an optional suffix: n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like 1e3)"
    )
    group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: train}\nspec: {minMember: 2}\n---\n"
    job = group + JOB.replace('nvidia.com/gpu: "1"', 'nvidia.com/gpu: "1.5"').replace(
        "    spec:\n      restartPolicy", "    metadata: {labels: {scheduling.x-k8s.io/pod-group: train}}\n    spec:\n      restartPolicy"
    )
    assert error(lambda: load_snapshot([write("job.yaml", job)])).split(": ")[1] == (
        'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]'
    )


def test_only_unbound_pod_manifests_of_an_expanded_group_are_pods_to_create() -> None:
    """A Pod manifest beside its group's workload manifests (an MPI launcher beside its workers'
    Job) does not exist yet: it is created with them. A pod with a nodeName is bound, so it
    exists (kubectl-neat strips uid and status), and a Pod manifest of a group with no
    workload beside it is a pod of the snapshot: neither is one to create."""
    group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: mpi}\nspec: {minMember: 4}\n"
    job = JOB.replace("name: train\nspec:", "name: mpi\nspec:").replace("  template:\n", f"  template:\n    metadata: {{labels: {{{GROUP_LABEL}: mpi}}}}\n")

    def pod(name: str, group: str, extra: str = "") -> str:
        return f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, labels: {{{GROUP_LABEL}: {group}}}}}\nspec: {{containers: [{{name: c}}]{extra}}}\n"

    text = "---\n".join([group, job, pod("launcher", "mpi"), pod("bound", "mpi", ", nodeName: n1"), pod("solo", "other")])
    made = {p.name: p.manifest is not None for p in load_snapshot([write("mpi.yaml", text)]).pods}
    assert made == {"launcher": True, "bound": False, "solo": False, "mpi-0": True, "mpi-1": True}
