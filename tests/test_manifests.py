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
from gangplan.semantics import group_names_of, group_pods, pod_requests
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


def test_a_seed_shaped_pod_items_metadata_fields_are_not_spec_fields() -> None:
    """A seed-002 pods[] item writes metadata (name, namespace, labels, annotations) beside the
    pod spec's fields: those go to the Pod's metadata, and only the rest is its spec (the API
    server refuses a spec with unknown fields)."""
    item = "  - {name: p, namespace: ml, labels: {l: m}, annotations: {a: b}, containers: [{name: c}]}\n"
    text = "apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: g, namespace: ml}\nspec:\n  pods:\n" + item
    (pod,) = load_snapshot([write("g.yaml", text)]).pods
    assert manifest_of(pod)["spec"] == {"containers": [{"name": "c"}]}
    assert manifest_of(pod)["metadata"] == {
        "name": "p", "namespace": "ml", "labels": {"l": "m", GROUP_LABEL: "g"}, "annotations": {"a": "b"}
    }
    assert (dict(pod.labels), dict(pod.annotations)) == ({"l": "m", GROUP_LABEL: "g"}, {"a": "b"})


def test_a_gang_of_no_pods_is_refused() -> None:
    """Seed 002's Gang is its pods, all of them its minimum: one with none (no pods[], every
    RC at 0 replicas) is a mistake in the input, not a gang `check` would pass; so is a --gang
    whose workloads all have 0 replicas."""
    head = "apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: g}\nspec:\n"
    zero = "  replicationControllers:\n  - {name: rc, replicas: 0, template: {spec: {containers: [{name: c}]}}}\n"
    for body in ("  pods: []\n", zero):
        assert error(lambda: load_snapshot([write("g.yaml", head + body)])) == (
            "g.yaml:5:3: spec: a Gang needs pods: spec.pods, or spec.replicationControllers with replicas"
        )
    idle = DEPLOYMENT.replace("replicas: 2", "replicas: 0")
    assert error(lambda: gang_from_objects("g", read_objects([write("idle.yaml", idle)]))) == (
        "--gang g: its workloads have 0 replicas, so it has no pods"
    )


def test_gang_items_given_as_objects_must_be_of_their_kind() -> None:
    """A replicationControllers[] item written as an object is a ReplicationController, and a
    pods[] item a Pod (seed 002's Gang holds pods and replicated pod templates): another kind
    is refused, not read as if it were one; an RC object's template is under its spec."""
    head = "apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: g}\nspec:\n"
    template = "{template: {spec: {containers: [{name: c}]}}}"
    deployment = f"  replicationControllers:\n  - kind: Deployment\n    metadata: {{name: rc}}\n    spec: {template}\n"
    assert error(lambda: load_snapshot([write("a.yaml", head + deployment)])) == (
        'a.yaml:6:11: spec.replicationControllers[0].kind: expected one of ReplicationController, got "Deployment"'
    )
    service = "  pods:\n  - kind: Service\n    metadata: {name: p}\n    spec: {containers: [{name: c}]}\n"
    assert error(lambda: load_snapshot([write("b.yaml", head + service)])) == (
        'b.yaml:6:11: spec.pods[0].kind: expected one of Pod, got "Service"'
    )
    specless = "  replicationControllers:\n  - metadata: {name: rc}\n    template: {spec: {containers: [{name: c}]}}\n"
    assert error(lambda: load_snapshot([write("c.yaml", head + specless)])).startswith(
        "c.yaml:6:5: spec.replicationControllers[0].spec.template: required field is missing"
    )


def test_a_gangs_pods_are_in_its_namespace() -> None:
    """Seed 002's Gang is one object in one namespace, and so are the pods it holds: a pods[]
    item naming another namespace is refused, in either shape, not moved in silence."""
    head = "apiVersion: extensions/v1beta1\nkind: Gang\nmetadata: {name: g}\nspec:\n  pods:\n"
    inline = "  - {name: p, namespace: other, containers: [{name: c}]}\n"
    assert error(lambda: load_snapshot([write("a.yaml", head + inline)])) == (
        'a.yaml:6:26: spec.pods[0].namespace: is "other", but the Gang\'s pods are in its namespace "default"'
    )
    pod = "  - {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: other}, spec: {containers: [{name: c}]}}\n"
    assert error(lambda: load_snapshot([write("b.yaml", head + pod)])).startswith(
        'b.yaml:6:64: spec.pods[0].metadata.namespace: is "other"'
    )
    same = pod.replace("namespace: other", "namespace: default")
    assert [p.key for p in load_snapshot([write("c.yaml", head + same)]).pods] == ["default/p"]


@pytest.mark.parametrize("kind", ["Gang", "Job"])
def test_a_gang_or_volcano_job_name_must_be_a_label_value(kind: str) -> None:
    """Its name is its PodGroup's and the value of its pods' group key, a label value of at most
    63 characters (Volcano's webhook checks a job name as a qualified name, also 63 at most,
    and '<job>-<task>-<task index>' too: with task t, a job name of 59 at most)."""
    api = "extensions/v1beta1" if kind == "Gang" else "batch.volcano.sh/v1alpha1"
    body = "  pods: [{name: p, containers: [{name: c}]}]\n"
    longest = 63
    if kind == "Job":
        body = "  tasks: [{name: t, replicas: 1, template: {spec: {containers: [{name: c}]}}}]\n"
        longest = 63 - len("-t-0")
    cases = (("a" * longest, None), ("a" * 64, "64 characters, more than 63"), ("my_gang", "lowercase letters"))
    for name, problem in cases:
        text = f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: {name}}}\nspec:\n{body}"
        if problem is None:
            assert load_snapshot([write("g.yaml", text)]).pod_groups[0].name == name
        else:
            assert error(lambda: load_snapshot([write("g.yaml", text)])).startswith(
                f'g.yaml:3:18: metadata.name: {kind} name "{name}" is not valid ({problem}'
            )


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


def test_volcano_job_pods_carry_the_keys_its_controller_writes_over_the_templates() -> None:
    """Volcano's job controller (createJobPod) starts from the template's labels and annotations
    and writes its own keys over them: labels job-name, job-namespace, queue-name, task-spec and
    task-index; annotations the PodGroup's name, job-name, queue-name, task-spec and task-index.
    A template's stale value of one of those keys does not survive; its other keys do."""
    stale = (
        "labels: {app: tf, volcano.sh/task-spec: stale, volcano.sh/job-name: other}\n"
        "        annotations: {scheduling.k8s.io/group-name: other, volcano.sh/queue-name: elsewhere, note: kept}"
    )
    job = VOLCANO_JOB.format(min_available=3).replace("labels: {app: tf}", stale)
    snapshot = load_snapshot([write("job.yaml", job)])
    indexes = {"ps": 0, "worker": 0}
    for pod in snapshot.pods:
        task = pod.name.split("-")[1]
        index, indexes[task] = indexes[task], indexes[task] + 1
        assert pod.name == f"tf-{task}-{index}"
        ours = {
            "volcano.sh/job-name": "tf",
            "volcano.sh/queue-name": "research",
            "volcano.sh/task-spec": task,
            "volcano.sh/task-index": str(index),
        }
        labels = {**ours, "volcano.sh/job-namespace": "ml"}
        annotations = {**ours, "scheduling.k8s.io/group-name": "tf"}
        metadata = manifest_of(pod)["metadata"]
        for given in (pod.labels, metadata["labels"]):
            assert labels.items() <= given.items(), (pod.name, given)
        for given in (pod.annotations, metadata["annotations"]):
            assert annotations.items() <= given.items(), (pod.name, given)
        kept = ("tf", "kept") if task == "ps" else (None, None)  # only ps's template has them
        assert (pod.labels.get("app"), pod.annotations.get("note")) == kept


def test_volcano_job_fields_left_out_are_what_its_webhook_fills_in() -> None:
    """Volcano's mutating webhook (createPatch) sets a job's missing queue to "default", names a
    nameless task "default<index>", and leaves a task's minAvailable of 0 at 0 (only a missing
    one becomes its replicas); the job's minAvailable, when 0, is then the tasks' sum."""
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: plain, namespace: ml}
spec:
  tasks:
  - replicas: 1
    minAvailable: 0
    template: {spec: {containers: [{name: a}]}}
  - replicas: 2
    template: {spec: {containers: [{name: b}]}}
"""
    snapshot = load_snapshot([write("plain.yaml", job)])
    (group,) = snapshot.pod_groups
    assert group.queue == "default"
    assert group.min_task_member == {"default0": 0, "default1": 2}
    assert group.min_member == 0 + 2
    assert [p.name for p in snapshot.pods] == ["plain-default0-0", "plain-default1-0", "plain-default1-1"]
    for pod in snapshot.pods:
        task = pod.name.split("-")[1]
        assert pod.labels["volcano.sh/queue-name"] == pod.annotations["volcano.sh/queue-name"] == "default"
        assert pod.labels["volcano.sh/task-spec"] == pod.annotations["volcano.sh/task-spec"] == task


def test_a_volcano_jobs_priority_class_is_only_for_templates_without_one() -> None:
    """createJobPod gives a pod the job's priorityClassName only when its template names none."""
    ps = "        containers:\n        - name: ps\n"
    job = VOLCANO_JOB.format(min_available=3).replace(ps, "        priorityClassName: low\n" + ps)
    snapshot = load_snapshot([write("job.yaml", job)])
    classes = {p.name: (p.priority_class_name, manifest_of(p)["spec"]["priorityClassName"]) for p in snapshot.pods}
    assert classes["tf-ps-0"] == ("low", "low")
    assert classes["tf-worker-0"] == ("high", "high")
    assert snapshot.pod_groups[0].priority_class_name == "high"


def test_volcano_jobs_its_webhook_refuses_are_refused() -> None:
    """Volcano's validating webhook (validateJobCreate) refuses a job with no task, a task name
    that is not a DNS-1123 label (a dot is not allowed in one), and a task name used twice."""
    base = VOLCANO_JOB.format(min_available=3)
    tasks_at = base.index("  tasks:\n")
    no_tasks = base[:tasks_at] + "  tasks: []\n"
    assert error(lambda: load_snapshot([write("a.yaml", no_tasks)])) == (
        "a.yaml:11:10: spec.tasks: a Volcano Job needs at least one task"
    )
    dotted = base.replace("name: worker\n", "name: work.er\n", 1)
    assert error(lambda: load_snapshot([write("b.yaml", dotted)])).startswith(
        'b.yaml:22:11: spec.tasks[1].name: task name "work.er" is not valid'
    )
    twice = base.replace("name: worker\n", "name: ps\n", 1)
    assert error(lambda: load_snapshot([write("c.yaml", twice)])) == (
        "c.yaml:22:11: spec.tasks[1].name: task ps is already spec.tasks[0]"
    )
    # validateK8sPodNameLength: '<job>-<task>-<the task's index>' must be a qualified name, at
    # most 63 characters (the pods' own names may be longer: theirs is the replica's index).
    long = "j" * 52
    at_limit = base.replace("  name: tf\n", f"  name: {long}\n", 1)  # '<52>-worker-1': 61
    assert len(load_snapshot([write("d.yaml", at_limit)]).pods) == 5
    over = base.replace("  name: tf\n", f"  name: {long}jjj\n", 1)  # '<55>-ps-0' 60, '<55>-worker-1' 64
    assert error(lambda: load_snapshot([write("e.yaml", over)])) == (
        f"e.yaml:22:11: spec.tasks[1].name: Volcano's job webhook refuses the pod name it checks for "
        f"this task, {long}jjj-worker-1: 64 characters, more than 63"
    )


WAITING_JOB = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj, namespace: ml, uid: u-1}
spec:
  tasks: [{name: w, replicas: 2, template: {spec: {containers: [{name: c}]}}}]
status: {state: {phase: Pending}}
"""


def waiting_group(
    name: str, namespace: str = "ml", api: str = "scheduling.volcano.sh/v1beta1", extra: str = ""
) -> str:
    return (
        f"---\napiVersion: {api}\nkind: PodGroup\nmetadata: {{name: {name}, namespace: {namespace}{extra}}}\n"
        "spec: {minMember: 2}\n"
    )


def waiting_pod(namespace: str) -> str:
    return (
        f"---\napiVersion: v1\nkind: Pod\nmetadata: {{name: vj-w-0, namespace: {namespace}, uid: p-1, "
        "annotations: {scheduling.k8s.io/group-name: vj-u-1}}\nspec: {nodeName: n1, containers: [{name: c}]}\n"
        "status: {phase: Running}\n"
    )


@pytest.mark.parametrize(
    "group,joined",
    [
        (waiting_group("vj-u-1"), "vj-u-1"),  # the name Volcano gives it now: <job>-<uid>
        (waiting_group("vj"), "vj"),  # the name older Volcano releases gave it: <job>
        (waiting_group("pg", extra=", ownerReferences: [{kind: Job, name: vj, uid: u-1}]"), "pg"),  # owned
        (waiting_group("vj-u-1") + "status: {phase: Inqueue}\n", "vj-u-1"),
        (waiting_group("vj-u-1", namespace="other"), None),  # not the job's: another namespace
        (waiting_group("vj-u-1", api="scheduling.x-k8s.io/v1alpha1"), None),  # not Volcano's
        (waiting_group("pg", extra=", ownerReferences: [{kind: Job, name: vj, uid: u-0}]"), None),  # an earlier vj's
        (waiting_group("vj-u-1") + "status: {phase: Running}\n", None),  # its pods were made
        (waiting_group("vj-u-1") + waiting_pod("ml"), None),  # so were they: one is here
        (waiting_group("vj-u-1") + waiting_pod("other"), "vj-u-1"),  # a pod of another namespace's vj-u-1
    ],
)
def test_a_created_volcano_job_waits_for_pods_only_beside_its_own_podgroup(
    group: str, joined: str | None
) -> None:
    """Volcano's job controller makes a Job's PodGroup (named <job>-<uid>, or <job> by older
    releases; owned by the Job) and its pods only once that group leaves phase "" or Pending
    (syncJob). So a Pending Job's pods are planned, members of that group, when the group is in
    the Job's namespace, a Volcano PodGroup of this Job, and has no status, or Pending, or
    Inqueue; any other PodGroup is not the Job's."""
    snapshot = load_snapshot([write("s.yaml", WAITING_JOB + group)])
    made = [p for p in snapshot.pods if p.manifest is not None]
    if joined is None:
        assert not made
        return
    assert [p.key for p in made] == ["ml/vj-w-0", "ml/vj-w-1"]
    assert {p.annotations["scheduling.k8s.io/group-name"] for p in made} == {joined}


@pytest.mark.parametrize("owner,planned", [("Job", True), ("Deployment", False)])
def test_a_created_volcano_job_without_a_uid_owns_a_podgroup_by_kind_and_name(
    owner: str, planned: bool
) -> None:
    """An owner reference names its owner by kind and name (and uid, which this Job lacks): the
    controller's reference to the Job is of kind Job; a Deployment named like the Job owns
    another group."""
    job = WAITING_JOB.replace(", uid: u-1", "")
    group = waiting_group("pg", extra=f", ownerReferences: [{{kind: {owner}, name: vj}}]")
    snapshot = load_snapshot([write("s.yaml", job + group)])
    assert [p.name for p in snapshot.pods] == (["vj-w-0", "vj-w-1"] if planned else [])


def test_a_waiting_volcano_jobs_template_may_not_name_the_job_before_its_podgroup() -> None:
    """A created Job's pods join the PodGroup its controller made (<job>-<uid>), so a template
    label tried before Volcano's annotation (DESIGN section 1) that names the job itself would take
    them to another group: refused, as for any other group."""
    labelled = "template: {metadata: {labels: {scheduling.x-k8s.io/pod-group: vj}}, spec:"
    job = WAITING_JOB.replace("template: {spec:", labelled)
    assert error(lambda: load_snapshot([write("s.yaml", job + waiting_group("vj-u-1"))])).endswith(
        'names PodGroup "vj", but these pods belong to "vj-u-1"; remove it'
    )


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


def test_gang_workloads_run_as_many_pods_as_their_controllers_at_once() -> None:
    """Kubernetes' defaults (SetDefaults_Job, the apps/v1 defaults): a Job's parallelism is 1 when
    unset, and it runs min(parallelism, completions) pods at once, so 2 of 5 completions run
    together and 0 completions run none; a Deployment's replicas default to 1."""
    job = JOB.replace("  parallelism: 2\n", "")
    def job_of(name: str, completions: int) -> str:
        counts = f"parallelism: 2\n  completions: {completions}"
        return JOB.replace("parallelism: 2", counts).replace("name: train", f"name: {name}", 1)

    five, none = job_of("five", 5), job_of("none", 0)
    deployment = DEPLOYMENT.replace("  replicas: 2\n", "")
    objects = read_objects([write("w.yaml", "---\n".join([job, five, none, deployment]))])
    group, pods = gang_from_objects("g", objects)
    assert [p.name for p in pods] == ["train-0", "five-0", "five-1", "api-0"]
    assert group.min_member == 4


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


def test_a_workload_template_must_be_a_pod_template_of_pods_not_yet_placed() -> None:
    """A Volcano task's or a workload's pod template and its spec are required (a pod without a
    spec has no containers: the API server refuses it), and its pods do not exist yet, so a
    nodeName in it is refused as in a seed-002 pods[] item: gangplan places them."""
    worker = "    template:\n      spec:\n        containers:\n        - name: worker"
    job = VOLCANO_JOB.format(min_available=3)
    edits = {
        "spec.tasks[1].template: required field is missing": ("template:", "templates:"),
        "spec.tasks[1].template.spec: required field is missing": ("spec:", "metadata: {}\n      specs:"),
        "spec.tasks[1].template.spec.nodeName: is \"n1\"": ("containers:", "nodeName: n1\n        containers:"),
    }
    for problem, (old, new) in edits.items():
        text = job.replace(worker, worker.replace(old, new))
        found = error(lambda: load_snapshot([write("job.yaml", text)]))
        assert found.split(": ", 1)[1].startswith(problem), found
    pinned = DEPLOYMENT.replace("    spec:\n      containers", "    spec:\n      nodeName: n1\n      containers")
    assert error(lambda: gang_from_objects("g", read_objects([write("deploy.yaml", pinned)]))) == (
        'deploy.yaml:13:17: spec.template.spec.nodeName: is "n1", but these pods do not exist yet '
        "and gangplan places them; remove nodeName"
    )
    missing = DEPLOYMENT.replace("  template:", "  templates:")
    assert error(lambda: gang_from_objects("g", read_objects([write("deploy.yaml", missing)]))).startswith(
        "deploy.yaml:7:3: spec.template: required field is missing"
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


@pytest.mark.parametrize("namespace", ["ml", "default"])
def test_a_gang_name_clashes_only_within_its_namespace(namespace: str) -> None:
    """A PodGroup and a pod's group key are namespaced (DESIGN section 1: a pod belongs to a
    PodGroup in its namespace): a --gang g in default clashes with a PodGroup default/g, or a
    pod of default naming g, not with a PodGroup g or a pod naming g in another namespace."""
    group, pods = gang_from_objects("g", read_objects([write("sts.yaml", STATEFUL_SET)]))
    pod_group = "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
    pod_group += f"metadata: {{name: g, namespace: {namespace}}}\nspec: {{minMember: 1}}\n"
    member = POD.replace("name: coordinator", f"name: c\n  namespace: {namespace}").replace("pod-group: old", "pod-group: g")
    by_group = load_snapshot([write("pg.yaml", pod_group)])
    by_pod = load_snapshot([write("pod.yaml", member)])
    if namespace == "default":
        clash = "PodGroup default/g is already in the snapshot (at pg.yaml:3:18)"
        assert clash in error(lambda: with_gang(by_group, group, pods))
        assert "pod default/c in the snapshot already names group g" in error(lambda: with_gang(by_pod, group, pods))
    else:
        assert [g.key for g in with_gang(by_group, group, pods).pod_groups] == ["ml/g", "default/g"]
        webs = [f"default/web-{i}" for i in range(3)]
        assert [p.key for p in with_gang(by_pod, group, pods).pods] == ["ml/c", *webs]


def test_a_template_may_not_name_another_group_first() -> None:
    """The field is named where it is written, in the task's template (it was named as a Pod's,
    metadata.labels[...], beside the template's line and column)."""
    job = VOLCANO_JOB.format(min_available=3).replace(
        "labels: {app: tf}", "labels: {app: tf, scheduling.x-k8s.io/pod-group: other}"
    )
    assert error(lambda: load_snapshot([write("job.yaml", job)])) == (
        'job.yaml:17:58: spec.tasks[0].template.metadata.labels["scheduling.x-k8s.io/pod-group"]: names PodGroup '
        '"other", but these pods belong to "tf"; remove it'
    )


def test_a_template_may_name_another_group_through_a_key_tried_after_the_gangs() -> None:
    """DESIGN section 1 tries the membership keys in order, so a pod joins the group of the first
    key it carries: a later key naming another group takes no pod away from the gang, and is
    not refused (a Volcano job's pods carry scheduling.k8s.io/group-name, tried before Volcano's
    own annotation; a Gang's the scheduler-plugins label, tried before the legacy one)."""
    job = VOLCANO_JOB.format(min_available=3).replace(
        "labels: {app: tf}", "labels: {app: tf}\n        annotations: {scheduling.volcano.sh/group-name: other}"
    )
    legacy = "        name: mydb\n        pod-group.scheduling.sigs.k8s.io: other\n"
    gang = SEED_GANG.replace("      labels:\n        name: mydb\n", "      labels:\n" + legacy)
    snapshot = load_snapshot([write("job.yaml", job), write("gang.yaml", gang)])
    pending = {g.top.group.key: len(g.top.pending) for g in group_pods(snapshot).job_groups}
    assert pending == {"ml/tf": 5, "default/mygang": 3}


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


@pytest.mark.parametrize("kind", ["Gang", "Job"])
def test_an_older_gang_to_create_goes_first_in_the_queue(kind: str) -> None:
    """Queue order (seed 000's QueueSort, DESIGN section 3) is priority, then the PodGroup's
    creation time, then its name: of two equal gangs with room for one, the one created first
    is placed, though its name sorts last. A Gang's or a Volcano Job's group is created with it."""
    def gang(name: str, created: str) -> str:
        meta = f"metadata: {{name: {name}, creationTimestamp: '{created}'}}\n"
        pods = "spec:\n  pods: [{name: %s-0, containers: [{name: c, resources: {requests: {cpu: '3'}}}]}]\n" % name
        if kind == "Job":
            template = "{spec: {containers: [{name: c, resources: {requests: {cpu: '3'}}}]}}"
            pods = f"spec:\n  tasks: [{{name: t, replicas: 1, template: {template}}}]\n"
        api = "extensions/v1beta1" if kind == "Gang" else "batch.volcano.sh/v1alpha1"
        return f"---\napiVersion: {api}\nkind: {kind}\n{meta}{pods}"

    text = gang("a", "2024-05-02T00:00:00Z") + gang("b", "2024-05-01T00:00:00Z") + node("n1", cpu="4")
    snapshot = load_snapshot([write("cluster.yaml", text)])
    result = plan(snapshot, Options(time_limit=5))
    assert {p.group for p in result.placements} == {"default/b"}


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


def test_a_volcano_claim_made_by_its_controller_is_said_to_be_unmodelled_on_the_group() -> None:
    """A volumes[] entry with a volumeClaim and no volumeClaimName is a claim Volcano's controller
    creates under a random name, so it is in no pod to create here: the group alone says that
    volume binding is not modelled. A named claim is a volume of each pod, which says it."""
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: made, namespace: ml}
spec:
  volumes: [{mountPath: /scratch, volumeClaim: {accessModes: [ReadWriteOnce]}}]
  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: a}]}}}]
"""
    snapshot = load_snapshot([write("made.yaml", job)])
    (group,) = snapshot.pod_groups
    assert any("VolumeBinding" in rule for rule in group.unmodelled)
    assert not any("VolumeBinding" in rule for pod in snapshot.pods for rule in pod.unmodelled)
    named = job.replace("volumeClaim: {accessModes: [ReadWriteOnce]}", "volumeClaimName: data")
    snapshot = load_snapshot([write("named.yaml", named)])
    assert not any("VolumeBinding" in rule for rule in snapshot.pod_groups[0].unmodelled)
    assert all(any("VolumeBinding" in rule for rule in pod.unmodelled) for pod in snapshot.pods)


def test_a_volcano_volume_without_a_mount_path_is_refused() -> None:
    """Volcano's webhook (validateIO) requires each spec.volumes[] entry's mountPath: it is where
    the controller mounts the claim in every container."""
    job = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vv, namespace: ml}
spec:
  volumes: [{volumeClaimName: shared}]
  tasks: [{name: w, replicas: 1, template: {spec: {containers: [{name: a}]}}}]
"""
    assert error(lambda: load_snapshot([write("vv.yaml", job)])).startswith(
        "vv.yaml:5:13: spec.volumes[0].mountPath: required field is missing"
    )


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


def test_a_workload_manifest_joins_the_group_its_template_names_in_its_namespace() -> None:
    """A batch/v1 Job given as an input is expanded when its pod template names a group through
    any membership key (DESIGN section 1: an annotation as well as a label), into its own
    namespace ("default" when it names none); pods of a same-named group in another namespace
    are another group's, so they do not mean its pods were made."""
    def naming(job: str, keys: str) -> str:
        return job.replace("    spec:\n      restartPolicy", f"    metadata: {keys}\n    spec:\n      restartPolicy")

    labelled = naming(JOB, "{labels: {scheduling.x-k8s.io/pod-group: train}}")
    labelled = labelled.replace("name: train\n", "name: train\n  namespace: ml\n", 1)
    annotated = naming(JOB.replace("name: train\n", "name: volc\n", 1), "{annotations: {scheduling.k8s.io/group-name: volc}}")
    elsewhere = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: train-x, namespace: other, uid: u-1, "
        "labels: {scheduling.x-k8s.io/pod-group: train}}\n"
        "spec: {nodeName: n1, containers: [{name: c}]}\nstatus: {phase: Running}\n"
    )
    snapshot = load_snapshot([write("w.yaml", "---\n".join([labelled, annotated, elsewhere]))])
    made = {p.key: group_names_of(p) for p in snapshot.pods if p.manifest is not None}
    assert made == {
        "ml/train-0": ["train"], "ml/train-1": ["train"], "default/volc-0": ["volc"], "default/volc-1": ["volc"]
    }


def test_a_workload_template_naming_two_groups_belongs_to_the_first_key_tried() -> None:
    """DESIGN section 1's order: the scheduler-plugins label is tried before the annotation, so
    a Job whose template names group a by the one and b by the other makes pods of a, and the
    annotation naming b is the one to remove."""
    keys = "{labels: {scheduling.x-k8s.io/pod-group: a}, annotations: {scheduling.k8s.io/group-name: b}}"
    job = JOB.replace("    spec:\n      restartPolicy", f"    metadata: {keys}\n    spec:\n      restartPolicy")
    found = error(lambda: load_snapshot([write("job.yaml", job)]))
    assert found.endswith(
        'annotations["scheduling.k8s.io/group-name"]: names PodGroup "b", but these pods belong to "a"; remove it'
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


def _ordered_sts(policy: str = "", min_member: int = 3, launcher: bool = False) -> str:
    line = f"  podManagementPolicy: {policy}\n" if policy else ""
    pod = (
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: launcher, labels: {scheduling.x-k8s.io/pod-group: pg}}\n"
        "spec: {containers: [{name: c}]}\n"
        if launcher else ""
    )
    return f"""\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: db}}
spec:
  replicas: 3
{line}  serviceName: db
  selector: {{matchLabels: {{app: db}}}}
  template:
    metadata: {{labels: {{app: db, scheduling.x-k8s.io/pod-group: pg}}}}
    spec: {{containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {{name: pg}}
spec: {{minMember: {min_member}}}
{pod}"""


def test_an_ordered_ready_statefulset_never_gathers_a_gang_that_needs_two_of_its_pods() -> None:
    """A StatefulSet's podManagementPolicy defaults to OrderedReady: its controller makes pod
    <n+1> only once pod <n> is Running and Ready, so a PodGroup that needs two of its pods at
    once never gathers its minMember (coscheduling's PreFilter and Volcano's gang plugin hold
    the first pod for ever). The plan places them all; the run warns, naming the pods."""

    def rules(text: str) -> set[str]:
        snapshot = load_snapshot([write("sts.yaml", node("n1") + "---\n" + text)])
        return {rule for pod in snapshot.pods if pod.name.startswith("db-") for rule in pod.unmodelled}

    ordered = rules(_ordered_sts())
    assert len(ordered) == 1 and "OrderedReady" in next(iter(ordered)) and "Parallel" in next(iter(ordered))
    assert rules(_ordered_sts("OrderedReady")) == ordered
    assert not rules(_ordered_sts("Parallel"))
    assert not rules(_ordered_sts(min_member=1))  # one pod at a time is enough
    assert not rules(_ordered_sts(min_member=2, launcher=True))  # the launcher and db-0
    assert rules(_ordered_sts(min_member=3, launcher=True)) == ordered
    assert "podManagementPolicy: expected one of OrderedReady, Parallel" in error(
        lambda: load_snapshot([write("bad.yaml", _ordered_sts("Sequential"))])
    )


# ---------------------------------------------------------------- matchLabelKeys, as the API server folds them


def _deployment(revision: str, replicas: int, term: str) -> str:
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: trainer, namespace: ml}}
spec:
  replicas: {replicas}
  template:
    metadata:
      labels: {{app: trainer, rev: "{revision}"}}
    spec:
      containers: [{{name: main, image: t, resources: {{requests: {{cpu: "1"}}}}}}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {term}
"""


def _running(name: str, node_name: str, labels: str, term: str | None = None) -> str:
    affinity = (
        f"\n  affinity: {{podAntiAffinity: {{requiredDuringSchedulingIgnoredDuringExecution: [{term}]}}}}" if term else ""
    )
    return f"""\
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, uid: u-{name}, labels: {labels}}}
spec:
  nodeName: {node_name}
  containers: [{{name: c, resources: {{requests: {{cpu: "1"}}}}}}]{affinity}
status: {{phase: Running}}
"""


REVISION_TERM = "{labelSelector: {matchLabels: {app: trainer}}, matchLabelKeys: [rev], topologyKey: kubernetes.io/hostname}"


def _planned(snapshot: Snapshot) -> dict[str, str]:
    result = plan(snapshot, Options(time_limit=5))
    assert verify(snapshot, result.placements, result.topology_levels()).ok
    return {p.name: p.node for p in result.placements}


@pytest.mark.parametrize("folded_already", [False, True])
def test_match_label_keys_keep_a_revision_apart_from_itself_only(folded_already: bool) -> None:
    """A rolling update's pods (KEP-3633's own case): the term selects app=trainer of the pod's
    own revision, so revision 2's two pods go one to a node, and may share a node with
    revision 1's running pod, whose own term selects its revision alone. Unfolded, each
    revision's term selected the other's pods: the old pod held n0, and two pods one to a node
    did not fit on n1 alone. A dump's pod may carry the fold the API server made already."""
    old_term = REVISION_TERM
    if folded_already:
        old_term = old_term.replace("matchLabels: {app: trainer}}", "matchLabels: {app: trainer}, matchExpressions: [{key: rev, operator: In, values: ['1']}]}")
    cluster = write("c.yaml", node("n0", cpu="4") + node("n1", cpu="4") + _running("trainer-old", "n0", "{app: trainer, rev: '1'}", old_term))
    group, pods = gang_from_objects("train", read_objects([write("deploy.yaml", _deployment("2", 2, REVISION_TERM))]))
    snapshot = with_gang(load_snapshot([cluster]), group, pods)
    assert sorted(_planned(snapshot).values()) == ["n0", "n1"]
    (old,) = [p for p in snapshot.pods if p.name == "trainer-old"]
    assert [r.values for r in old.anti_affinity[0].match_expressions] == [("1",)]  # not folded twice
    # Three pods of revision 2 need three nodes: the fold still keeps them one to a node.
    group, pods = gang_from_objects("train", read_objects([write("deploy.yaml", _deployment("2", 3, REVISION_TERM))]))
    assert _planned(with_gang(load_snapshot([cluster]), group, pods)) == {}


def test_mismatch_label_keys_keep_other_tenants_off_the_node() -> None:
    """Kubernetes' own example of mismatchLabelKeys: a tenant's pod selects every pod with a
    tenant label but its own tenant's value, so it shares a node with its tenant only: tenant
    b's gang of two does not fit on n1 alone."""
    term = "{labelSelector: {matchExpressions: [{key: tenant, operator: Exists}]}, mismatchLabelKeys: [tenant], topologyKey: kubernetes.io/hostname}"
    text = node("n0", cpu="2") + node("n1", cpu="1") + _running("other", "n0", "{tenant: a}")
    for tenant, nodes in (("a", {"n0", "n1"}), ("b", set())):  # one free cpu a node
        job = _deployment("1", 2, term).replace("app: trainer, rev: \"1\"", f"tenant: {tenant}")
        group, pods = gang_from_objects("train", read_objects([write("deploy.yaml", job)]))
        snapshot = with_gang(load_snapshot([write("c.yaml", text)]), group, pods)
        assert set(_planned(snapshot).values()) == nodes, tenant


def _volcano_workers_with(rule: str, keys: str) -> Snapshot:
    """VOLCANO_JOB on one 8-GPU node, its workers carrying a required ``rule`` (podAffinity or
    podAntiAffinity) term on the job's pods that folds the label ``keys``."""
    job = VOLCANO_JOB.format(min_available=3).replace(
        'resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}}\n',
        'resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}}\n'
        f"        affinity: {{{rule}: {{requiredDuringSchedulingIgnoredDuringExecution: [{{labelSelector: "
        f"{{matchLabels: {{volcano.sh/job-name: tf}}}}, matchLabelKeys: [{keys}], topologyKey: kubernetes.io/hostname}}]}}}}\n",
    )
    assert job != VOLCANO_JOB.format(min_available=3)
    return load_snapshot([write("cluster.yaml", job + node("g1", gpu="8"))])


def test_a_volcano_jobs_pods_fold_their_own_task_index_into_pod_affinity_too() -> None:
    """Pod affinity's terms fold the pod's labels as anti-affinity's do: each of a Volcano Job's
    pods carries a term of its own task index, not pod 0's (the template read once)."""
    snapshot = _volcano_workers_with("podAffinity", "volcano.sh/task-index")
    workers = sorted((p for p in snapshot.pods if "worker" in p.name), key=lambda p: p.name)
    assert len(workers) > 1
    assert [t.match_expressions[-1].values for p in workers for t in p.affinity] == [(str(i),) for i in range(len(workers))]


def test_a_volcano_jobs_pods_fold_their_own_task_index_into_spread_constraints_too() -> None:
    """A topology spread constraint's matchLabelKeys fold the pod's labels as affinity terms do:
    each of a Volcano Job's pods spreads over the pods of its own task index, not pod 0's."""
    job = VOLCANO_JOB.format(min_available=3).replace(
        'resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}}\n',
        'resources: {requests: {cpu: "2", nvidia.com/gpu: "1"}}\n'
        "        topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, "
        "labelSelector: {matchLabels: {volcano.sh/job-name: tf}}, matchLabelKeys: [volcano.sh/task-index]}]\n",
    )
    assert job != VOLCANO_JOB.format(min_available=3)
    snapshot = load_snapshot([write("cluster.yaml", job + node("g1", gpu="8"))])
    workers = sorted((p for p in snapshot.pods if "worker" in p.name), key=lambda p: p.name)
    assert len(workers) > 1
    assert [c.selector.match_expressions[-1].values for p in workers for c in p.spread] == [(str(i),) for i in range(len(workers))]


def test_a_volcano_jobs_pods_fold_their_own_task_index() -> None:
    """A Volcano Job's pods differ in their task index label, so a term folding it selects
    each pod alone and keeps no two apart; read once for the first pod, every pod's term
    selected pod 0, which the others did not carry as a term they matched (warned about)."""
    snapshot = _volcano_workers_with("podAntiAffinity", "volcano.sh/task-spec, volcano.sh/task-index")
    workers = sorted((p for p in snapshot.pods if "worker" in p.name), key=lambda p: p.name)
    assert [t.match_expressions[-1].values for p in workers for t in p.anti_affinity] == [(str(i),) for i in range(len(workers))]
    assert not group_pods(snapshot).anti_affinity.loose
    assert set(_planned(snapshot).values()) == {"g1"}
