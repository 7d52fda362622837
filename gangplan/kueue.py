"""Kueue's conventions on plain Pods, read here and nowhere else: a pod group is a label and a
total count on each member, a topology request is an annotation, a WorkloadPriorityClass is a
label, and admission lifts gates.

Kueue reads these values as they are written (an annotation "rack " names a level "rack ",
which no Topology lists) and counts with Go's ``strconv.Atoi``. The independent verifier
restates them on purpose; nothing else should.
"""

from __future__ import annotations

import re
from typing import Mapping

__all__ = [
    "FAST_ADMISSION",
    "GATE_PREFIX",
    "GROUP_LABEL",
    "MANAGED_LABEL",
    "PREFERRED_TOPOLOGY",
    "PRIORITY_CLASS_LABEL",
    "QUEUE_LABEL",
    "REQUIRED_TOPOLOGY",
    "ROLE_HASH",
    "SLICE_REQUIRED_TOPOLOGY",
    "SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS",
    "TOPOLOGY_SPREADING",
    "UNCONSTRAINED_TOPOLOGY",
    "TOTAL_COUNT",
    "fast_admission",
    "managed",
    "topology_requests",
    "total_count",
    "unconstrained",
    "workload_priority_class",
]

GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
# Kueue's webhook sets it on every pod it manages, queue-name label or not; its reconciler skips others.
MANAGED_LABEL = "kueue.x-k8s.io/managed"
# A pod's role in its group, read before Kueue hashes the pod's spec for one.
ROLE_HASH = "kueue.x-k8s.io/role-hash"
# Names a WorkloadPriorityClass: the Workload's priority for Kueue's queueing, apart from the pods'.
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
# Kueue builds the group's Workload from its first pod, for the total count, without waiting for the rest.
FAST_ADMISSION = "kueue.x-k8s.io/pod-group-fast-admission"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
# Multi-layer slices (Kueue's TASMultiLayerTopology): up to three levels, each slice held whole.
SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
# TASTopologySpreading: a domain holding over a share of the Workloads a selector matches takes no more.
TOPOLOGY_SPREADING = "kueue.x-k8s.io/podset-topology-spreading"
# Kueue creates a workload's pods gated and lifts its gates when it admits the workload: the
# decision gangplan plans for, so those pods are planned (their Bindings wait for admission).
GATE_PREFIX = "kueue.x-k8s.io/"
_ATOI = re.compile(r"[+-]?[0-9]+", re.ASCII)  # strconv.Atoi: ASCII digits and a sign, no spaces or "1_0"
_PARSE_BOOL_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # strconv.ParseBool


def total_count(annotations: Mapping[str, str]) -> int | None:
    """The member's total count as Kueue reads it; None when it is missing or not an integer."""
    raw = annotations.get(TOTAL_COUNT, "")
    return int(raw) if _ATOI.fullmatch(raw) else None


def fast_admission(annotations: Mapping[str, str]) -> bool:
    """Whether the pod asks Kueue to admit its group before all its pods exist. Kueue tests the
    key's presence only (pod_controller.go), so "false" asks for it too."""
    return FAST_ADMISSION in annotations


def managed(labels: Mapping[str, str]) -> bool:
    """Whether Kueue queues the pod: a queue-name label, or the mark Kueue's webhook leaves on a
    pod it manages without one (manageJobsWithoutQueueName)."""
    return QUEUE_LABEL in labels or labels.get(MANAGED_LABEL) == "true"


def topology_requests(annotations: Mapping[str, str]) -> tuple[str, str]:
    """The (required, preferred) topology levels the pod's PodSet asks for, '' where none."""
    return annotations.get(REQUIRED_TOPOLOGY, ""), annotations.get(PREFERRED_TOPOLOGY, "")


def unconstrained(annotations: Mapping[str, str]) -> bool | None:
    """The pod's PodSet's unconstrained topology request: True places it on the Topology's
    nodes with no level to share; False (a value ``strconv.ParseBool`` reads as false or
    cannot read) is a TAS request naming no level, which no flavor holds; None when there is
    none, or a required or preferred request wins over it, as in Kueue."""
    if REQUIRED_TOPOLOGY in annotations or PREFERRED_TOPOLOGY in annotations or UNCONSTRAINED_TOPOLOGY not in annotations:
        return None
    return annotations[UNCONSTRAINED_TOPOLOGY] in _PARSE_BOOL_TRUE


def workload_priority_class(labels: Mapping[str, str]) -> str:
    """The WorkloadPriorityClass a pod names, '' where none: Kueue takes an empty value as no
    label and falls back on the pods' PriorityClass."""
    return labels.get(PRIORITY_CLASS_LABEL, "")
