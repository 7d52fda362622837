"""The optional fields of the model's dataclasses as TypedDicts, so that a test helper which
passes keyword arguments on to ``Pod``, ``PodGroup`` or ``Node`` can say which it takes
(``**fields: Unpack[PodFields]``) and mypy checks every call of it.

Only the fields with defaults are here: a helper names the required ones itself. Keep them in step with ``gangplan.model``; a field
missing here is a mypy error where a test passes it.
"""

from __future__ import annotations

from typing import Mapping, TypedDict

from gangplan.model import (
    Container,
    NodeSelector,
    Origin,
    OwnerReference,
    PodAffinityTerm,
    PodPhase,
    Resources,
    SortRule,
    Taint,
    Toleration,
)


class PodFields(TypedDict, total=False):
    uid: str | None
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: Resources
    node_selector: Mapping[str, str]
    node_affinity: NodeSelector | None
    tolerations: tuple[Toleration, ...]
    priority: int | None
    priority_class_name: str | None
    node_name: str | None
    phase: PodPhase
    creation_timestamp: str
    owners: tuple[OwnerReference, ...]
    origin: Origin
    manifest: Mapping[str, object] | None
    scheduling_gates: tuple[str, ...]
    deleting: bool
    unmodelled: tuple[str, ...]
    anti_affinity: tuple[PodAffinityTerm, ...]
    affinity: tuple[PodAffinityTerm, ...]
    pod_level_requests: Resources


class PodGroupFields(TypedDict, total=False):
    min_resources: Resources
    min_task_member: Mapping[str, int]
    queue: str
    priority_class_name: str | None
    sub_group: str
    schedule_timeout_seconds: int | None
    required_topology: tuple[str, ...]
    preferred_topology: tuple[str, ...]
    node_selector: NodeSelector | None
    sort_rules: tuple[SortRule, ...]
    affinity_beside: bool
    timed_out: bool
    finished: bool
    creation_timestamp: str
    uid: str | None
    raw: Mapping[str, object]
    origin: Origin
    unmodelled: tuple[str, ...]


class NodeFields(TypedDict, total=False):
    taints: tuple[Taint, ...]
    unschedulable: bool
    ready: bool
    origin: Origin
