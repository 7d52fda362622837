"""Gangs whose pods do not exist yet, expanded into ordinary model objects.

Three sources give the same result: a PodGroup and the Pods it would create, pending and
unbound, each carrying in ``Pod.manifest`` the v1 Pod object to create (``spec.nodeName``
is filled in by the renderer, never here):

- seed 002's ``Gang`` (``extensions/v1beta1``): ``spec.pods`` plus ``spec.replicationControllers``
  (``replicas`` x ``template``), minMember = all of its pods;
- a Volcano ``Job`` (``batch.volcano.sh/v1alpha1``): ``spec.tasks`` x ``replicas``, named and
  labelled as Volcano's job controller does, with the job's and the tasks' ``minAvailable``;
- ``--gang NAME=FILE,...`` (seed 002's "better to have"): Pods and workloads (ReplicationController,
  Deployment, ReplicaSet, StatefulSet, batch/v1 Job) made one gang, minMember = all of them.

Each template's pod is read by ``kube.to_pod`` from the v1 Pod built for it, with an origin at
the template, so a bad field is located where it is written, under the same strict rules as a
real pod. The pods join their group through the membership keys ``semantics`` reads.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gangplan.errors import InputError, Position, UsageError
from gangplan.kube import (
    DNS_LABEL, LABEL_LIMIT, VOLCANO_HARD_NETWORK, VOLUME_BINDING, _Reader, folds_labels, name_problem, to_pod,
    volcano_hard_network_topology,
)
from gangplan.model import Origin, Pod, PodGroup, PodGroupAPI, PodPhase, Snapshot
from gangplan.semantics import (
    GODEL_POD_GROUP_KEY,
    POD_GROUP_ANNOTATIONS,
    POD_GROUP_LABELS,
    VOLCANO_TASK_KEY,
    group_names_of,
)

__all__ = ["expand_gang", "expand_volcano_job", "expand_workloads", "waiting_volcano_jobs", "gang_from_objects", "with_gang", "GANG_KINDS"]

Path = tuple[str | int, ...]

_META: Path = ("metadata",)
_SPEC: Path = ("spec",)
_NAME: Path = ("metadata", "name")

# What Volcano's job controller puts on the pods it creates (volcano.sh/apis batch/v1alpha1).
VOLCANO_JOB_NAME = "volcano.sh/job-name"
VOLCANO_JOB_NAMESPACE = "volcano.sh/job-namespace"
VOLCANO_QUEUE_NAME = "volcano.sh/queue-name"
VOLCANO_TASK_INDEX = "volcano.sh/task-index"

# The default pod management of a StatefulSet, which a gang of its pods cannot survive.
ORDERED_READY = (
    "a StatefulSet's OrderedReady pod management (its controller makes each pod only once the one before "
    "is Running and Ready, so a PodGroup that needs two of them at once never gathers its minMember; set "
    "spec.podManagementPolicy: Parallel)"
)

# --gang: kind -> the apiVersion it is read at.
GANG_KINDS: dict[str, str] = {
    "Pod": "v1",
    "ReplicationController": "v1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "Job": "batch/v1",
}
_WORKLOADS = ", ".join(kind for kind in GANG_KINDS if kind != "Pod")

# Membership keys in the order semantics and verify try them (DESIGN section 1): a key before
# the one a gang sets would take its pods elsewhere.
_MEMBERSHIP: tuple[tuple[str, str], ...] = (
    *(("labels", key) for key in POD_GROUP_LABELS),
    *(("annotations", key) for key in POD_GROUP_ANNOTATIONS),
    ("annotations", GODEL_POD_GROUP_KEY),
    ("labels", GODEL_POD_GROUP_KEY),
)

_INLINE_META = ("name", "namespace", "labels", "annotations", "apiVersion", "kind")


class _TemplatePath(tuple):
    """The path of a pod template, inside the object that names its pods.

    The Pod built from the template is read through it: its ``metadata.name`` is located where
    the pods' name comes from (a workload's own ``metadata.name``, a seed-002 item's ``name``),
    every other field in the template. A seed-002 ``pods[]`` item is ``inline``: it writes
    labels and spec fields side by side, so ``metadata.labels`` and ``spec.containers`` are
    its ``labels`` and ``containers``. (``loader.locate`` joins paths with ``+``.)
    """

    name_path: tuple[str | int, ...]
    inline: bool

    def __add__(self, other: tuple) -> tuple:
        if other[:2] == _NAME:
            return (*self.name_path, *other[2:])
        if self.inline and other[:1] in (_META, _SPEC):
            other = other[1:]
        return (*self, *other)


def _template_origin(origin: Origin, at: Path, name_at: Path, inline: bool = False) -> Origin:
    """Where the template at ``at`` is written, its pods named by the field at ``name_at``."""
    if name_at == at + _NAME and not inline:
        return Origin(origin.file, origin.document, origin.path + at)
    path = _TemplatePath(origin.path + at)
    path.name_path = origin.path + name_at
    path.inline = inline
    return Origin(origin.file, origin.document, path)


@dataclass(frozen=True, slots=True)
class _Template:
    """A pod template as read: what is copied into each pod, and where it is written."""

    labels: dict[str, str]
    annotations: dict[str, str]
    spec: dict[str, Any]
    origin: Origin  # of the template: to_pod reads the built Pod's metadata.* and spec.* here
    # Volumes its controller adds from claims: (volume, claim), a claim of None being the pod's
    # own, ``<volume>-<pod>`` (a StatefulSet's volumeClaimTemplates).
    claims: tuple[tuple[str, str | None], ...] = ()
    at: Path = ()  # where it is written in its object, which an error's path starts with


def _unbound(r: _Reader, spec: Mapping[str, Any], at: Path) -> None:
    node = r.string(spec, "nodeName", at)
    if node:
        r.fail(
            at + ("nodeName",),
            f"is {json.dumps(node)}, but these pods do not exist yet and gangplan places them; "
            "remove nodeName",
        )


def _template(r: _Reader, d: Mapping[str, Any], key: str, at: Path, name_at: Path) -> _Template:
    """A ``{metadata, spec}`` pod template under ``key``; its pods are named from ``name_at``."""
    if d.get(key) is None:
        r.wrong(at + (key,), "a pod template (metadata and spec)", None)
    template = r.mapping(d, key, at)
    at = at + (key,)
    meta = r.mapping(template, "metadata", at)
    if template.get("spec") is None:
        r.wrong(at + ("spec",), "a pod spec", None)
    spec = r.mapping(template, "spec", at)
    _unbound(r, spec, at + ("spec",))
    return _Template(
        r.string_map(meta, "labels", at + _META),
        r.string_map(meta, "annotations", at + _META),
        spec,
        _template_origin(r.origin, at, name_at),
        at=at,
    )


def _pod_object(r: _Reader, item: Mapping[str, Any], at: Path) -> _Template:
    """A v1 Pod object's own metadata and spec (``at`` is where the object is written)."""
    meta = r.mapping(item, "metadata", at)
    spec = r.mapping(item, "spec", at)
    _unbound(r, spec, at + _SPEC)
    return _Template(
        r.string_map(meta, "labels", at + _META),
        r.string_map(meta, "annotations", at + _META),
        spec,
        _template_origin(r.origin, at, at + _NAME),
        at=at,
    )


def _expand(
    t: _Template,
    group: str,
    namespace: str,
    names: Sequence[str],
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    indexed: str | None = None,
) -> list[Pod]:
    """The pods ``names`` of one template; ``labels`` and ``annotations`` are added to the
    template's (the group's membership key among them), ``indexed`` (a key) numbers them."""
    _check_membership(t, group, labels, annotations)
    base_labels = {**t.labels, **labels}
    base_annotations = {**t.annotations, **annotations}
    pods: list[Pod] = []
    first: Pod | None = None
    label_keyed = folds_labels(t.spec)
    for index, name in enumerate(names):
        pod_labels, pod_annotations = base_labels, base_annotations
        if indexed is not None:
            pod_labels = {**base_labels, indexed: str(index)}
            pod_annotations = {**base_annotations, indexed: str(index)}
        metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": pod_labels}
        if pod_annotations:
            metadata["annotations"] = pod_annotations
        # Each pod has its own spec mapping, so that setting one's nodeName leaves the others.
        manifest: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": {**t.spec}}
        if t.claims:
            claimed = {volume for volume, _ in t.claims}
            manifest["spec"]["volumes"] = [
                *(v for v in t.spec.get("volumes") or [] if not (isinstance(v, dict) and v.get("name") in claimed)),
                *({"name": volume, "persistentVolumeClaim": {"claimName": claim or f"{volume}-{name}"}} for volume, claim in t.claims),
            ]
        if first is None or (indexed is not None and label_keyed):
            # The template is read once, as its pods differ only in metadata, unless its anti-affinity
            # folds in labels (matchLabelKeys) that differ from pod to pod.
            first = to_pod(manifest, t.origin, t.at)
        pods.append(
            replace(
                first, name=name, labels=pod_labels, annotations=pod_annotations, manifest=manifest
            )
        )
    return pods


def _check_membership(
    t: _Template, group: str, labels: Mapping[str, str], annotations: Mapping[str, str]
) -> None:
    """Refuse a template that names another group through a key tried before the gang's own."""
    ours = {("labels", key) for key in labels} | {("annotations", key) for key in annotations}
    given = {"labels": t.labels, "annotations": t.annotations}
    for where, key in _MEMBERSHIP:
        if (where, key) in ours:
            return
        value = given[where].get(key)
        if value and value != group:
            _Reader(t.origin, t.at).fail(
                ("metadata", where, key),
                f"names PodGroup {json.dumps(value)}, but these pods belong to "
                f"{json.dumps(group)}; remove it",
            )


class _Names:
    """The pod names one gang gives out, each checked and given once."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.given: dict[str, str] = {}

    def add(self, r: _Reader, at: Path, names: Iterable[str], source: str) -> list[str]:
        names = list(names)
        for name in names:
            problem = name_problem(name)
            if problem is not None:
                r.fail(
                    at, f"{source} would make pod {json.dumps(name)}, not a valid name ({problem})"
                )
            first = self.given.get(name)
            if first is not None:
                r.fail(
                    at,
                    f"{source} would make pod {self.namespace}/{name}, "
                    f"which {first} already makes",
                )
            self.given[name] = source
        return names


def _group_name(r: _Reader, name: str, at: Path, what: str) -> None:
    """A group's name is a PodGroup name and a label value on its pods."""
    problem = name_problem(name, LABEL_LIMIT)
    if problem is not None:
        r.fail(at, f"{what} name {json.dumps(name)} is not valid ({problem})")


# ---------------------------------------------------------------- seed 002's Gang


def expand_gang(obj: Mapping[str, Any], origin: Origin) -> tuple[PodGroup, list[Pod]]:
    """Seed 002's Gang: its pods and ReplicationControllers' replicas, all of them the minimum.

    A ``pods[]`` item is a pod spec with ``name``/``labels`` beside ``containers`` (as in the
    seed), or a Pod object with ``metadata``/``spec``; a ``replicationControllers[]`` item is
    ``name``/``replicas``/``template`` (as in the seed), or a ReplicationController object.
    Pods keep their names; an RC's are ``<rc>-<index>``; replicas default to 1.
    """
    r = _Reader(origin)
    meta = r.mapping(obj, "metadata", ())
    spec = r.mapping(obj, "spec", ())
    name = r.string(meta, "name", _META, required=True)
    _group_name(r, name, _NAME, "Gang")
    namespace = r.string(meta, "namespace", _META) or "default"
    membership = {POD_GROUP_LABELS[0]: name}
    names = _Names(namespace)
    pods: list[Pod] = []
    for i, raw in enumerate(r.sequence(spec, "replicationControllers", _SPEC)):
        at = ("spec", "replicationControllers", i)
        item = r.entry(raw, at)
        if "metadata" in item or "spec" in item:  # a ReplicationController object
            r.choice(item, "kind", at, ("ReplicationController",), "ReplicationController")
            name_at = at + _NAME
            rc_name = r.string(r.mapping(item, "metadata", at), "name", at + _META, required=True)
            body, body_at = r.mapping(item, "spec", at), at + _SPEC
        else:
            name_at = at + ("name",)
            rc_name = r.string(item, "name", at, required=True)
            body, body_at = item, at
        replicas = r.integer(body, "replicas", body_at, default=1, minimum=0)
        template = _template(r, body, "template", body_at, name_at)
        source = f"replicationControllers[{i}] {rc_name}"
        pod_names = names.add(r, name_at, (f"{rc_name}-{k}" for k in range(replicas or 0)), source)
        pods += _expand(template, name, namespace, pod_names, membership, {})
    for i, raw in enumerate(r.sequence(spec, "pods", _SPEC)):
        at = ("spec", "pods", i)
        item = r.entry(raw, at)
        if "metadata" in item or "spec" in item:  # a Pod object
            r.choice(item, "kind", at, ("Pod",), "Pod")
            name_at = at + _NAME
            item_meta = r.mapping(item, "metadata", at)
            pod_name = r.string(item_meta, "name", at + _META, required=True)
            template = _pod_object(r, item, at)
            given = r.string(item_meta, "namespace", at + _META)
        else:  # seed 002's shape: name and labels beside the spec's fields
            name_at = at + ("name",)
            pod_name = r.string(item, "name", at, required=True)
            _unbound(r, item, at)
            template = _Template(
                r.string_map(item, "labels", at),
                r.string_map(item, "annotations", at),
                {key: value for key, value in item.items() if key not in _INLINE_META},
                _template_origin(origin, at, name_at, inline=True),
            )
            given = r.string(item, "namespace", at)
        if given and given != namespace:
            r.fail(
                name_at[:-1] + ("namespace",),
                f"is {json.dumps(given)}, but the Gang's pods are in its namespace "
                f"{json.dumps(namespace)}",
            )
        pod_names = names.add(r, name_at, [pod_name], f"pods[{i}] {pod_name}")
        pods += _expand(template, name, namespace, pod_names, membership, {})
    if not pods:
        r.fail(_SPEC, "a Gang needs pods: spec.pods, or spec.replicationControllers with replicas")
    group = PodGroup(
        namespace=namespace,
        name=name,
        api=PodGroupAPI.GANG,
        min_member=len(pods),
        creation_timestamp=r.timestamp(meta, "creationTimestamp", _META),
        uid=r.string(meta, "uid", _META) or None,
        raw=obj,
        origin=origin,
        unmodelled=(VOLCANO_HARD_NETWORK,) if volcano_hard_network_topology(spec) else (),
    )
    return group, pods


# ---------------------------------------------------------------- Volcano Job


def expand_volcano_job(
    obj: Mapping[str, Any], origin: Origin, pod_group: str | None = None
) -> tuple[PodGroup, list[Pod]] | None:
    """A Volcano Job, as its admission webhook defaults it and its job controller creates it;
    None for a Job the controller has already created (``status.state.phase`` is set) unless
    ``pod_group`` names the PodGroup the controller made for it: its pods are made only once
    Volcano enqueues that group, so a Job waiting there has none yet, and they join it.

    Pods are ``<job>-<task>-<index>``; a task without a name is ``default<index>``. The job's
    ``minAvailable`` defaults (when absent or 0) to the sum over tasks of their ``minAvailable``,
    or ``replicas`` for a task without one; ``minTaskMember`` holds every task's, a task without
    one at its ``replicas``, as the webhook defaults it.
    ``queue`` defaults to "default"; the job's ``priorityClassName`` is the group's, and each
    pod's when its template names none. ``schedulerName`` is ignored.
    """
    r = _Reader(origin)
    status = r.mapping(obj, "status", ())
    if pod_group is None and r.string(r.mapping(status, "state", ("status",)), "phase", ("status", "state")):
        return None
    meta = r.mapping(obj, "metadata", ())
    spec = r.mapping(obj, "spec", ())
    name = r.string(meta, "name", _META, required=True)
    _group_name(r, name, _NAME, "Job")
    namespace = r.string(meta, "namespace", _META) or "default"
    queue = r.string(spec, "queue", _SPEC) or "default"
    priority_class = r.string(spec, "priorityClassName", _SPEC) or None
    job_minimum = r.integer(spec, "minAvailable", _SPEC, default=0, minimum=0) or 0
    volumes = _volcano_volumes(r, spec)
    tasks = r.sequence(spec, "tasks", _SPEC, required=True)
    if not tasks:
        r.fail(("spec", "tasks"), "a Volcano Job needs at least one task")
    names = _Names(namespace)
    pods: list[Pod] = []
    task_minimums: dict[str, int] = {}
    task_at: dict[str, int] = {}
    total = default_minimum = 0
    for i, raw in enumerate(tasks):
        at = ("spec", "tasks", i)
        task = r.entry(raw, at)
        task_name = r.string(task, "name", at) or f"default{i}"
        problem = name_problem(task_name, LABEL_LIMIT, DNS_LABEL)
        if problem is not None:
            r.fail(at + ("name",), f"task name {json.dumps(task_name)} is not valid ({problem})")
        if task_name in task_at:
            r.fail(at + ("name",), f"task {task_name} is already spec.tasks[{task_at[task_name]}]")
        task_at[task_name] = i
        # validateK8sPodNameLength: the name it checks ends in the task's index, not a replica's.
        if (checked := len(f"{name}-{task_name}-{i}")) > LABEL_LIMIT:
            r.fail(
                at + ("name",),
                f"Volcano's job webhook refuses the pod name it checks for this task, {name}-{task_name}-{i}: "
                f"{checked} characters, more than {LABEL_LIMIT}",
            )
        replicas: int = r.integer(task, "replicas", at, required=True, minimum=0)  # type: ignore
        minimum = r.integer(task, "minAvailable", at, minimum=0)
        if minimum is not None:
            if minimum > replicas:
                r.fail(
                    at + ("minAvailable",), f"{minimum} is more than the task's {replicas} replicas"
                )
        task_minimums[task_name] = replicas if minimum is None else minimum
        total += replicas
        default_minimum += replicas if minimum is None else minimum
        template = _template(r, task, "template", at, _NAME)
        if volumes:
            template = _with_volcano_volumes(template, volumes, name)
        if priority_class and not template.spec.get("priorityClassName"):
            spec_with_class = {**template.spec, "priorityClassName": priority_class}
            template = replace(template, spec=spec_with_class)
        pod_names = names.add(
            r, _NAME, (f"{name}-{task_name}-{k}" for k in range(replicas)), f"task {task_name}"
        )
        labels = {
            VOLCANO_JOB_NAME: name,
            VOLCANO_JOB_NAMESPACE: namespace,
            VOLCANO_QUEUE_NAME: queue,
            VOLCANO_TASK_KEY: task_name,
        }
        annotations = {
            POD_GROUP_ANNOTATIONS[0]: pod_group or name,
            VOLCANO_JOB_NAME: name,
            VOLCANO_QUEUE_NAME: queue,
            VOLCANO_TASK_KEY: task_name,
        }
        pods += _expand(
            template, pod_group or name, namespace, pod_names, labels, annotations, VOLCANO_TASK_INDEX
        )
    if not pods:
        r.fail(("spec", "tasks"), "the Job has no pods: every task has 0 replicas")
    min_member = job_minimum or default_minimum
    if min_member > total:
        r.fail(
            ("spec", "minAvailable"),
            f"{min_member} is more than the {total} replicas of the Job's tasks",
        )
    group = PodGroup(
        namespace=namespace,
        name=name,
        api=PodGroupAPI.VOLCANO_JOB,
        min_member=min_member,
        min_task_member=task_minimums,
        queue=queue,
        priority_class_name=priority_class,
        creation_timestamp=r.timestamp(meta, "creationTimestamp", _META),
        uid=r.string(meta, "uid", _META) or None,
        raw=obj,
        origin=origin,
        unmodelled=(
            *((VOLCANO_HARD_NETWORK,) if volcano_hard_network_topology(spec) else ()),
            *((VOLUME_BINDING,) if any(claim is None for _, claim in volumes) else ()),
        ),
    )
    return group, pods


def _volcano_volumes(r: _Reader, spec: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """A Volcano Job's ``spec.volumes`` as (mountPath, claim): its controller mounts each claim
    in every container of every pod; a claim it creates for a ``volumeClaim`` is named at random
    (None here: those pods can only come from the Job itself)."""
    found = []
    for i, raw in enumerate(r.sequence(spec, "volumes", _SPEC)):
        at = ("spec", "volumes", i)
        volume = r.entry(raw, at)
        found.append((r.string(volume, "mountPath", at, required=True), r.string(volume, "volumeClaimName", at) or None))
    return found


def _with_volcano_volumes(template: _Template, volumes: Sequence[tuple[str, str | None]], job: str) -> _Template:
    """As Volcano's createJobPod: one volume per claim, named ``<job>-<12 characters>`` (at random
    there, from the claim here, so that output is reproducible and no template volume is
    shadowed), mounted in every container at the first mountPath given for it; a claim named
    again is skipped, mount and all."""
    named: dict[str, tuple[str, str]] = {}  # claim -> (volume, mountPath)
    for path, claim in volumes:
        if claim is not None and claim not in named:
            named[claim] = (f"{job}-{hashlib.sha256(claim.encode()).hexdigest()[:12]}", path)
    if not named:
        return template
    mounts = [{"name": volume, "mountPath": path} for volume, path in named.values()]
    containers = [
        {**c, "volumeMounts": [*(c.get("volumeMounts") or []), *mounts]} if isinstance(c, dict) else c
        for c in template.spec.get("containers") or []
    ]
    claims = tuple((volume, claim) for claim, (volume, _) in named.items())
    return replace(template, spec={**template.spec, "containers": containers}, claims=claims)


def _owner_references(raw: Mapping[str, object]) -> Sequence[object]:
    meta = raw.get("metadata")
    references = meta.get("ownerReferences") if isinstance(meta, dict) else None
    return references if isinstance(references, list) else ()


def waiting_volcano_jobs(
    snapshot: Snapshot, jobs: Sequence[tuple[Mapping[str, Any], Origin]]
) -> tuple[list[tuple[str, list[Pod]]], list[str]]:
    """The pods of created Volcano Jobs that wait to be enqueued (the Job Pending, its PodGroup
    Pending or Inqueue): their PodGroup is in the inputs (``<job>-<uid>``, else ``<job>``, as the
    controller looks it up; else the one the Job owns) and no pod of theirs is, since Volcano's job controller makes
    them once the group leaves Pending. A Job running, finished or aborted is not planned again. ``([(job, its pods)],
    why each other job is skipped)``: its pods exist, or its PodGroup is not given."""
    made: list[tuple[str, list[Pod]]] = []
    skipped: list[str] = []
    with_pods = {(pod.namespace, name) for pod in snapshot.pods for name in group_names_of(pod)}
    for obj, origin in jobs:
        r = _Reader(origin)
        meta = r.mapping(obj, "metadata", ())
        name = r.string(meta, "name", _META, required=True)
        namespace = r.string(meta, "namespace", _META) or "default"
        uid = r.string(meta, "uid", _META)
        volcano = {pg.name: pg for pg in snapshot.pod_groups if pg.namespace == namespace and pg.api is PodGroupAPI.VOLCANO}
        # getPodGroupByJob: <job>-<uid>, and only when that is not found, <job> (older controllers).
        looked_up = next((volcano[wanted] for wanted in (f"{name}-{uid}" if uid else "", name) if wanted in volcano), None)
        owned = [looked_up] if looked_up is not None else [
            pg for pg in volcano.values()
            if any(isinstance(o, dict) and o.get("kind") == "Job" and (o.get("uid") == uid if uid else o.get("name") == name)
                   for o in _owner_references(pg.raw))
        ]
        job_phase = r.string(r.mapping(r.mapping(obj, "status", ()), "state", ("status",)), "phase", ("status", "state"))
        if job_phase != "Pending":  # running, finished or aborted: its pods were made (or are gone for good)
            skipped.append("already created")
            continue
        if len(owned) != 1:
            skipped.append("created; give its PodGroup to plan the pods it waits to make")
            continue
        group_status = owned[0].raw.get("status")
        group_phase = group_status.get("phase", "") if isinstance(group_status, dict) else ""
        if (namespace, owned[0].name) in with_pods or group_phase not in ("", "Pending", "Inqueue"):
            skipped.append("already created")
            continue
        expanded = expand_volcano_job(obj, origin, pod_group=owned[0].name)
        assert expanded is not None
        made.append((f"Job {namespace}/{name}", expanded[1]))
    return made, skipped


# ---------------------------------------------------------------- --gang NAME=FILE,...


def gang_from_objects(
    name: str, objects: Iterable[tuple[Mapping[str, Any], Origin]], namespace: str | None = None
) -> tuple[PodGroup, list[Pod]]:
    """One gang ``name`` of the Pods and workloads in ``objects`` (``loader.read_objects``).

    A Pod is taken as it is (not bound to a node); a ReplicationController, Deployment,
    ReplicaSet or StatefulSet gives ``replicas`` pods (default 1), a batch/v1 Job
    ``parallelism`` (default 1, at most ``completions``). Pods are ``<name>-<index>``, a
    StatefulSet's ``<name>-<ordinal>`` (from ``spec.ordinals.start``). minMember is all of
    them; each carries label ``scheduling.x-k8s.io/pod-group: <name>``.

    The namespace is ``namespace`` if given, else the one the objects name, else "default";
    objects naming two different ones are an error. Any other kind is an error.
    """
    problem = name_problem(name, LABEL_LIMIT)
    if problem is not None:
        raise UsageError(f"--gang {name}: not a valid PodGroup name ({problem})")
    read: list[tuple[Mapping[str, Any], _Reader, str, str]] = []
    chosen, chosen_by, chosen_at = "", "", None  # the first namespace named, by what, where
    for obj, origin in objects:
        r = _Reader(origin)
        kind = r.string(obj, "kind", (), required=True)
        api = r.string(obj, "apiVersion", (), required=True)
        meta = r.mapping(obj, "metadata", ())
        if kind not in GANG_KINDS:
            what = f"{kind} {r.string(meta, 'name', _META)}".rstrip()
            raise InputError(
                f"--gang takes Pods and workloads ({_WORKLOADS}), got {what}", r.position(("kind",))
            )
        if api != GANG_KINDS[kind]:
            hint = ""
            if "volcano" in api:
                hint = " (a Volcano Job is a gang by itself: give it as an input)"
            expected = GANG_KINDS[kind]
            r.fail(("apiVersion",), f"{kind} {api} is not supported; expected {expected}{hint}")
        # As for a workload given as an input, a name from generateName is its prefix.
        object_name = r.string(meta, "name", _META) or r.string(meta, "generateName", _META).rstrip("-")
        if not object_name:
            r.fail(_NAME, "required field is missing (a workload names its pods with name or generateName)")
        given = r.string(meta, "namespace", _META)
        what = f"{kind} {object_name}"
        if given and namespace is not None and given != namespace:
            r.fail(
                ("metadata", "namespace"),
                f"{what} is in namespace {json.dumps(given)}, "
                f"but --gang {name} is in {json.dumps(namespace)}",
            )
        if given and not chosen:
            chosen, chosen_by, chosen_at = given, what, r
        elif given and given != chosen:
            assert chosen_at is not None
            r.fail(
                ("metadata", "namespace"),
                f"--gang {name} is one gang in one namespace, but {what} is in {json.dumps(given)} "
                f"and {chosen_by} is in {json.dumps(chosen)} "
                f"(at {chosen_at.position(('metadata', 'namespace'))})",
            )
        read.append((obj, r, kind, object_name))
    if not read:
        raise InputError(f"--gang {name}: no Pods or workloads in its files")
    target = namespace or chosen or "default"
    membership = {POD_GROUP_LABELS[0]: name}
    names = _Names(target)
    pods: list[Pod] = []
    for obj, r, kind, object_name in read:
        source = f"{kind} {object_name}"
        if kind == "Pod":
            template = _pod_object(r, obj, ())
            pod_names = names.add(r, _NAME, [object_name], source)
        else:
            template, generated = _workload(r, obj, kind, object_name)
            pod_names = names.add(r, _NAME, generated, source)
        pods += _expand(template, name, target, pod_names, membership, {})
    if not pods:
        raise InputError(f"--gang {name}: its workloads have 0 replicas, so it has no pods")
    group = PodGroup(
        namespace=target,
        name=name,
        api=PodGroupAPI.MANIFESTS,
        min_member=len(pods),
        # The PodGroup its pods' label names: a cluster needs it created alongside them.
        raw={
            "apiVersion": PodGroupAPI.SCHEDULER_PLUGINS.value,
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": target},
            "spec": {"minMember": len(pods)},
        },
        origin=read[0][1].origin,
    )
    return group, pods


def _workload(r: _Reader, obj: Mapping[str, Any], kind: str, object_name: str) -> tuple[_Template, list[str]]:
    """A workload's pod template and the names of the pods it runs at once: a Job's
    ``parallelism`` (at most ``completions``), the others' ``replicas`` (default 1), a
    StatefulSet's from ``spec.ordinals.start``."""
    spec = r.mapping(obj, "spec", ())
    start = 0
    if kind == "Job":
        count = r.integer(spec, "parallelism", _SPEC, default=1, minimum=0) or 0
        completions = r.integer(spec, "completions", _SPEC, minimum=0)
        if completions is not None:
            count = min(count, completions)
    else:
        count = r.integer(spec, "replicas", _SPEC, default=1, minimum=0) or 0
        if kind == "StatefulSet":
            ordinals = r.mapping(spec, "ordinals", _SPEC)
            at: tuple[str | int, ...] = ("spec", "ordinals")
            start = r.integer(ordinals, "start", at, default=0, minimum=0) or 0
    template = _template(r, spec, "template", _SPEC, _NAME)
    if kind == "StatefulSet":
        # Its controller gives each pod a volume per claim template: the claim <template>-<pod>.
        names = []
        for i, claim in enumerate(r.sequence(spec, "volumeClaimTemplates", _SPEC)):
            at = ("spec", "volumeClaimTemplates", i)
            names.append(r.string(r.mapping(r.entry(claim, at), "metadata", at), "name", at + ("metadata",), required=True))
        template = replace(template, claims=tuple((claim, None) for claim in names))
    return template, [f"{object_name}-{k}" for k in range(start, start + count)]


def expand_workloads(
    snapshot: Snapshot, workloads: Sequence[tuple[Mapping[str, Any], Origin]]
) -> tuple[list[tuple[str, list[Pod]]], list[tuple[str, str, str]]]:
    """The pods of workload manifests given as inputs whose pod template names a group, the
    way a CI job holds a PodGroup and the Job that creates its pods: ``([(workload, its pods)],
    skipped kinds)``.

    Only a manifest is expanded: an object with ``metadata.uid`` or a ``status`` comes from a
    cluster, where its controller has made its pods and the dump holds them (not a suspended
    Job's, which Kueue holds until it admits it: it has none yet); so does one whose
    group has pods read from a cluster (with a uid, or bound and running). Pod manifests beside it (a launcher) are
    members too. A template naming no group is skipped: its pods are no gang, and gangplan
    plans gangs and the pending pods it is given. A name from ``generateName`` is its prefix.
    """
    # From a cluster: a uid, or (an export without uids) bound and past Pending. A manifest pinned
    # with nodeName (a launcher) is not.
    has_pods = {
        (pod.namespace, name)
        for pod in snapshot.pods
        if pod.uid or (pod.node_name and pod.phase is not PodPhase.PENDING)
        for name in group_names_of(pod)
    }
    made: list[tuple[str, list[Pod]]] = []
    skipped: list[tuple[str, str, str]] = []  # (kind, apiVersion, why)
    ordered: list[tuple[tuple[str, str], int]] = []  # (its group, its index in made): OrderedReady StatefulSets
    for obj, origin in workloads:
        r = _Reader(origin)
        kind = r.string(obj, "kind", (), required=True)
        meta = r.mapping(obj, "metadata", ())
        namespace = r.string(meta, "namespace", _META) or "default"
        at: Path = ("spec", "template")
        template_meta = r.mapping(r.mapping(r.mapping(obj, "spec", ()), "template", _SPEC), "metadata", at)
        given = {where: r.string_map(template_meta, where, at + _META) for where in ("labels", "annotations")}
        named = [given[where][key] for where, key in _MEMBERSHIP if given[where].get(key)]
        # A suspended Job (Kueue holds one so until it admits it) has no pods yet, though read
        # from a cluster: they come from its template, as a manifest's do.
        suspended = kind == "Job" and r.mapping(obj, "spec", ()).get("suspend") is True
        live = bool(r.string(meta, "uid", _META) or obj.get("status")) and not suspended
        if live or not named or (namespace, named[0]) in has_pods:
            why = (
                "already created" if live
                else f"its group {namespace}/{named[0]} has pods in the cluster already" if named
                else "suspended, so its pods are not made yet, and its pod template names no pod group; to plan them "
                "as one gang, save it to a file of its own and pass --gang NAME=FILE" if suspended
                else "its pod template names no pod group; --gang NAME=FILE plans it as one gang"
            )
            skipped.append((kind, r.string(obj, "apiVersion", ()), why))
            continue
        object_name = r.string(meta, "name", _META) or r.string(meta, "generateName", _META).rstrip("-")
        if not object_name:
            r.fail(_NAME, "required field is missing (a workload names its pods with name or generateName)")
        template, names = _workload(r, obj, kind, object_name)
        source = f"{kind} {namespace}/{object_name}"
        made.append((source, _expand(template, named[0], namespace, _Names(namespace).add(r, _NAME, names, source), {}, {})))
        if kind == "StatefulSet":
            policy = r.choice(r.mapping(obj, "spec", ()), "podManagementPolicy", _SPEC, ("OrderedReady", "Parallel"), "OrderedReady")
            if policy == "OrderedReady" and len(names) > 1:
                ordered.append(((namespace, named[0]), len(made) - 1))
    return _one_at_a_time(snapshot, made, ordered), skipped


def _one_at_a_time(
    snapshot: Snapshot, made: list[tuple[str, list[Pod]]], ordered: Sequence[tuple[tuple[str, str], int]]
) -> list[tuple[str, list[Pod]]]:
    """An OrderedReady StatefulSet's pods come one at a time: its group gathers the others'
    pods and one of its own at most, so a minMember beyond that is never reached, though the
    plan places them all. Those pods carry it as a rule gangplan does not model."""
    if not ordered:
        return made
    minimums = {(group.namespace, group.name): group.min_member for group in snapshot.pod_groups}
    members = Counter(
        (pod.namespace, name) for pod in (*snapshot.pods, *(p for _, pods in made for p in pods)) for name in group_names_of(pod)
    )
    out = list(made)
    for group, index in ordered:
        source, pods = out[index]
        if minimums.get(group, 0) > members[group] - len(pods) + 1:
            out[index] = (source, [replace(pod, unmodelled=(*pod.unmodelled, ORDERED_READY)) for pod in pods])
    return out


def with_gang(snapshot: Snapshot, group: PodGroup, pods: Sequence[Pod]) -> Snapshot:
    """``snapshot`` with a ``--gang`` added; refuses a name the snapshot already uses."""

    def where(item: Pod | PodGroup) -> Position:
        return _Reader(item.origin).position(_NAME)

    for other_group in snapshot.pod_groups:
        if other_group.key == group.key:
            raise InputError(
                f"--gang {group.name}: PodGroup {group.key} is already in the snapshot "
                f"(at {where(other_group)}); choose another name"
            )
    for other_pod in snapshot.pods:
        if other_pod.namespace == group.namespace and group.name in group_names_of(other_pod):
            raise InputError(
                f"--gang {group.name}: pod {other_pod.key} in the snapshot already names group "
                f"{group.name} (at {where(other_pod)}); choose another name"
            )
    existing = {pod.key: pod for pod in snapshot.pods}
    for pod in pods:
        other = existing.get(pod.key)
        if other is not None:
            raise InputError(
                f"duplicate Pod {pod.key} from --gang {group.name} (first at {where(other)})",
                where(pod),
            )
    return replace(snapshot, pods=(*snapshot.pods, *pods), pod_groups=(*snapshot.pod_groups, group))
