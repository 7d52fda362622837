"""Kubernetes objects (plain dicts) to model objects; every outside API group's quirks live here.

Each converter reads the fields gangplan needs in one straight pass, as strictly as the API
server would: a string where an integer belongs, or an integer where a label value belongs,
is refused. Nothing is tracked on the way; only a failing field is located (``loader.locate``).
Group membership and request sums are rules, applied elsewhere: fields are kept as given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from dataclasses import replace
from functools import lru_cache
from typing import Any, NoReturn

from gangplan import kueue
from gangplan.errors import InputError, Position, dotted as _dotted
from gangplan.model import (
    Container,
    HostPort,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Origin,
    OwnerReference,
    Pod,
    PodAffinityTerm,
    PodGroup,
    PodGroupAPI,
    PodPhase,
    PriorityClass,
    Snapshot,
    SortRule,
    Taint,
    Toleration,
    Topology,
    TopologySpreadConstraint,
    WorkloadPriorityClass,
)
from gangplan.quantity import QuantityError, to_amount

__all__ = [
    "to_snapshot",
    "to_node",
    "to_pod",
    "to_pod_group",
    "to_priority_class",
    "to_topology",
    "to_workload_priority_class",
]

Path = tuple[str | int, ...]

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
POD_GROUP_APIS = (
    PodGroupAPI.SCHEDULER_PLUGINS,
    PodGroupAPI.SCHEDULER_PLUGINS_LEGACY,
    PodGroupAPI.VOLCANO,
    PodGroupAPI.GODEL,
    PodGroupAPI.GODEL_BYTEDANCE,
)
PRIORITY_CLASS_APIS = ("scheduling.k8s.io/v1", "scheduling.k8s.io/v1beta1")
TOPOLOGY_APIS = (
    "kueue.x-k8s.io/v1beta2",
    "kueue.x-k8s.io/v1beta1",
    "kueue.x-k8s.io/v1alpha1",
    "kai.scheduler/v1alpha1",
)
WORKLOAD_PRIORITY_CLASS_APIS = ("kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1")
_POD_GROUP_VERSIONS = tuple(api.value for api in POD_GROUP_APIS)
_SORT_RESOURCES = {"CPU": "CPU", "GPU": "GPU", "Memory": "Memory", "MEM": "Memory"}
_PHASES = tuple(phase.value for phase in PodPhase)
_PHASE_OF = {phase.value: phase for phase in PodPhase}
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")
_REQUIRED_AFFINITY = "requiredDuringSchedulingIgnoredDuringExecution"
_CONTAINER_RESOURCES = ("cpu", "memory", "ephemeral-storage")
_POD_LEVEL_RESOURCES = ("cpu", "memory")  # what spec.resources may set (KEP-2837), and hugepages-*
_META: Path = ("metadata",)
_SPEC: Path = ("spec",)
_STATUS: Path = ("status",)
_NAME: Path = ("metadata", "name")
_AFFINITY: Path = ("spec", "affinity")
_NODE_AFFINITY: Path = ("spec", "affinity", "nodeAffinity")
_ANTI_AFFINITY: Path = ("spec", "affinity", "podAntiAffinity")
_POD_AFFINITY: Path = ("spec", "affinity", "podAffinity")
_TOLERATION_EFFECTS = ("", *TAINT_EFFECTS)

# Object names (RFC 1123). A namespace is a label; so is a name that is also a label value
# (a PodGroup's, a Volcano task's), which keeps a subdomain's letters within a label's length.
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
NAME_LIMIT, LABEL_LIMIT = 253, 63


LABEL_VALUE = re.compile(r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


# Labels repeat endlessly in a cluster dump (every node has the same keys, and a rack's or a
# job's values are shared by many objects); checking each pair once matters.
@lru_cache(maxsize=8192)
def label_problem(key: str, value: str) -> str | None:
    """Why a label is not one the API server accepts, or None: its values name topology
    domains and Kueue groups in every output, so a newline or an escape must not get in."""
    if (problem := _qualified_name_problem("label key", key)) is not None:
        return problem
    if len(value) > LABEL_LIMIT or not LABEL_VALUE.fullmatch(value):
        return f"label value {value!r}: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    return None


@lru_cache(maxsize=1024)
def resource_name_problem(name: str) -> str | None:
    """Why a resource name is not the qualified name the API server requires, or None: names
    are printed in the table, the reasons and CI annotations, so a newline must not get in."""
    return _qualified_name_problem("resource name", name)


def _qualified_name_problem(what: str, key: str) -> str | None:
    """apimachinery's IsQualifiedName, which label keys and resource names share: a name after
    an optional prefix and '/', where a '/' given needs a prefix."""
    prefix, slash, name = key.rpartition("/")
    if slash and name_problem(prefix) is not None:
        return f"{what} {key!r}: its prefix must be a DNS subdomain"
    if not name or len(name) > LABEL_LIMIT or not LABEL_VALUE.fullmatch(name):
        return f"{what} {key!r}: its name must be 1 to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    return None


def name_problem(name: str, limit: int = NAME_LIMIT, pattern: re.Pattern[str] = DNS_SUBDOMAIN) -> str | None:
    """Why ``name`` is not a Kubernetes name of that length and pattern, or None."""
    if len(name) > limit:  # first: the pattern is only ever run on short strings
        return f"{len(name)} characters, more than {limit}"
    if not pattern.fullmatch(name):
        letters = "digits, '-' and '.'" if pattern is DNS_SUBDOMAIN else "digits and '-'"
        return f"lowercase letters, {letters}, starting and ending with a letter or digit"
    return None


# Quantities repeat endlessly in a cluster dump ("500m", "1Gi"); parsing each once matters.
_amount = lru_cache(maxsize=4096)(to_amount)


@lru_cache(maxsize=4096)
def _utc(value: str) -> str | None:
    """An RFC 3339 time in UTC, whole seconds, with ``Z``, or None if it is not one.
    Memoised: a job's pods are made in a burst and mostly share their creation second."""
    if not _RFC3339.fullmatch(value):
        return None
    try:
        when = datetime.fromisoformat(value).astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None
    return (
        f"{when.year:04d}-{when.month:02d}-{when.day:02d}T{when.hour:02d}:{when.minute:02d}:{when.second:02d}Z"
    )


def _show(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:56] + '..."'
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}"


class _Reader:
    """Typed access to one object's fields; a bad field raises an InputError located at it.

    ``at`` is always the path of the mapping being read, so paths are only joined on failure.
    """

    __slots__ = ("origin", "shown")

    def __init__(self, origin: Origin, shown: Path = ()) -> None:
        self.origin = origin
        self.shown = shown  # where the object read is in the one written (a workload's pod template)

    def position(self, path: Path) -> Position:
        from gangplan.loader import locate  # loader imports this module

        return locate(self.origin, path)

    def fail(self, path: Path, message: str) -> NoReturn:
        raise InputError(f"{_dotted(self.shown + path)}: {message}" if path else message, self.position(path))

    def wrong(self, path: Path, expected: str, value: object) -> NoReturn:
        if value is None:
            self.fail(path, f"required field is missing (expected {expected})")
        self.fail(path, f"expected {expected}, got {_show(value)}")

    def mapping(self, d: Mapping[str, Any], key: str, at: Path) -> dict[str, Any]:
        value = d.get(key)
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.wrong(at + (key,), "a mapping", value)
        return value

    def entry(self, value: object, at: Path) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(at, f"expected a mapping, got {_show(value)}")
        return value

    def sequence(
        self, d: Mapping[str, Any], key: str, at: Path, required: bool = False
    ) -> list[Any]:
        value = d.get(key)
        if value is None and not required:
            return []
        if not isinstance(value, list):
            self.wrong(at + (key,), "a list", value)
        return value

    def string(self, d: Mapping[str, Any], key: str, at: Path, required: bool = False) -> str:
        """Absent or null is "" unless required; required also means non-empty."""
        value = d.get(key)
        if type(value) is str and (value or not required):
            return value
        if value is None and not required:
            return ""
        self.wrong(at + (key,), "a non-empty string" if required else "a string", value)

    def timestamp(self, d: Mapping[str, Any], key: str, at: Path) -> str:
        """An RFC 3339 time, as Go's time.RFC3339 parses it, kept as the API server keeps it
        (UTC, whole seconds, ``Z``), so that queue order, which compares them as text,
        compares times; absent is ""."""
        value = self.string(d, key, at)
        if not value:
            return ""
        kept = _utc(value)
        if kept is None:
            self.wrong(at + (key,), "an RFC 3339 time like 2024-06-09T00:00:00Z", value)
        return kept

    def integer(
        self,
        d: Mapping[str, Any],
        key: str,
        at: Path,
        default: int | None = None,
        required: bool = False,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        value = d.get(key)
        if value is None and not required:
            return default
        if type(value) is not int or (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            expected = "a non-negative integer" if minimum == 0 else "an integer"
            if maximum is not None and type(value) is int:
                expected = f"{expected} from {minimum:,} to {maximum:,}" if minimum is not None else f"{expected} up to {maximum:,}"
            self.wrong(at + (key,), expected, value)
        return value

    def boolean(self, d: Mapping[str, Any], key: str, at: Path) -> bool:
        value = d.get(key)
        if value is None:
            return False
        if type(value) is not bool:
            self.wrong(at + (key,), "true or false", value)
        return value

    def choice(
        self, d: Mapping[str, Any], key: str, at: Path, choices: Iterable[str], default: str | None
    ) -> str:
        """One of ``choices``; absent or null gives ``default``, or is an error without one."""
        value = d.get(key)
        if value is None and default is not None:
            return default
        if type(value) is not str or value not in choices:
            names = ", ".join(c for c in choices if c) + (" (or empty)" if "" in choices else "")
            self.wrong(at + (key,), f"one of {names}", value)
        return value

    def string_map(self, d: Mapping[str, Any], key: str, at: Path) -> dict[str, str]:
        value = self.mapping(d, key, at)
        for name, item in value.items():
            if type(name) is not str:
                self.fail(at + (key,), f"expected string keys, got {_show(name)}")
            if type(item) is not str:
                self.wrong(at + (key, name), "a string (quote it)", item)
        return value

    def labels(self, meta: Mapping[str, Any]) -> dict[str, str]:
        labels = self.string_map(meta, "labels", _META)
        for key, value in labels.items():
            if (problem := label_problem(key, value)) is not None:
                self.fail(_META + ("labels", key), problem)
        return labels

    def strings(self, d: Mapping[str, Any], key: str, at: Path) -> tuple[str, ...]:
        values = self.sequence(d, key, at)
        for index, item in enumerate(values):
            if type(item) is not str:
                self.wrong(at + (key, index), "a string (quote it)", item)
        return tuple(values)

    def resources(self, d: Mapping[str, Any], key: str, at: Path) -> dict[str, int]:
        amounts: dict[str, int] = {}
        for name, value in self.mapping(d, key, at).items():
            if type(name) is not str:
                self.fail(at + (key,), f"expected resource names, got {_show(name)}")
            if problem := resource_name_problem(name):
                self.fail(at + (key, name), problem)
            try:
                cached = type(value) is str or type(value) is int  # hashable, and not a bool
                amounts[name] = (_amount if cached else to_amount)(name, value)
            except QuantityError as exc:
                self.fail(at + (key, name), str(exc))
        return amounts

    def node_selector(self, d: Mapping[str, Any], at: Path) -> NodeSelector:
        terms = []
        for index, raw in enumerate(self.sequence(d, "nodeSelectorTerms", at, required=True)):
            path = at + ("nodeSelectorTerms", index)
            term = self.entry(raw, path)
            terms.append(
                NodeSelectorTerm(
                    self.requirements(term, "matchExpressions", path),
                    self.requirements(term, "matchFields", path),
                )
            )
        return NodeSelector(tuple(terms))

    def requirements(
        self, d: Mapping[str, Any], key: str, at: Path
    ) -> tuple[NodeSelectorRequirement, ...]:
        found = []
        for index, raw in enumerate(self.sequence(d, key, at)):
            path = at + (key, index)
            item = self.entry(raw, path)
            name = self.string(item, "key", path, required=True)
            operator = self.choice(item, "operator", path, OPERATORS, None)
            values = self.strings(item, "values", path)
            if operator in ("In", "NotIn") and not values:
                self.fail(path + ("values",), f"operator {operator} needs at least one value")
            if operator in ("Exists", "DoesNotExist") and values:
                self.fail(path + ("values",), f"must be empty with operator {operator}")
            # Only the count, as the API server checks: a value that is not an integer makes
            # kube-scheduler's term match no node, which is what semantics does with it.
            if operator in ("Gt", "Lt") and len(values) != 1:
                self.fail(path + ("values",), f"operator {operator} needs exactly one value")
            found.append(NodeSelectorRequirement(name, operator, values))
        return tuple(found)


def _pod_level(resource: str) -> bool:
    """As component-helpers' IsSupportedPodLevelResource (hugepages since Kubernetes 1.34)."""
    return resource in _POD_LEVEL_RESOURCES or resource.startswith("hugepages-")


def to_node(obj: Mapping[str, Any], origin: Origin) -> Node:
    """A v1 Node. Without a Ready condition (hand-written snapshots) it counts as Ready."""
    r = _Reader(origin)
    meta = r.mapping(obj, "metadata", ())
    spec = r.mapping(obj, "spec", ())
    status = r.mapping(obj, "status", ())
    source = "allocatable" if status.get("allocatable") is not None else "capacity"
    allocatable = r.resources(status, source, _STATUS)
    allocatable.setdefault("pods", 110)
    taints = []
    for index, raw in enumerate(r.sequence(spec, "taints", _SPEC)):
        path = ("spec", "taints", index)
        taint = r.entry(raw, path)
        taints.append(
            Taint(
                r.string(taint, "key", path, required=True),
                r.string(taint, "value", path),
                r.choice(taint, "effect", path, TAINT_EFFECTS, None),
            )
        )
    ready = True
    for index, raw in enumerate(r.sequence(status, "conditions", _STATUS)):
        path = ("status", "conditions", index)
        condition = r.entry(raw, path)
        if r.string(condition, "type", path) == "Ready":
            ready = r.string(condition, "status", path) == "True"
    return Node(
        name=r.string(meta, "name", _META, required=True),
        labels=r.labels(meta),
        allocatable=allocatable,
        taints=tuple(taints),
        unschedulable=r.boolean(spec, "unschedulable", _SPEC),
        ready=ready,
        origin=origin,
    )


def _container(r: _Reader, raw: object, path: Path, init: bool) -> Container:
    """A container's requests, defaulted from its limits as the API server does."""
    container = r.entry(raw, path)
    resources = r.mapping(container, "resources", path)
    at = path + ("resources",)
    requests = r.resources(resources, "requests", at)
    limits = r.resources(resources, "limits", at) if resources.get("limits") is not None else {}
    for key, named in (("requests", requests), ("limits", limits)):
        for name in named:
            # The API server's rule: an unprefixed name must be one a container may ask for.
            if "/" not in name and name not in _CONTAINER_RESOURCES and not name.startswith("hugepages-"):
                r.fail(at + (key, name), "must be a standard resource for containers")
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    return Container(
        name=r.string(container, "name", path),
        requests=requests,
        restart_policy=(r.string(container, "restartPolicy", path) or None) if init else None,
    )


def _resized(r: _Reader, status: Mapping[str, Any], key: str, containers: tuple[Container, ...]) -> tuple[Container, ...]:
    """A container being resized in place holds the most of what its spec asks, what the
    kubelet allocated and what it runs with, as kube-scheduler counts it (component-helpers'
    determineContainerReqs); the spec not at all when the resize is Infeasible. Of the init
    containers only sidecars (restartPolicy Always) can be resized, so only theirs are read."""
    reported: dict[str, dict[str, int]] = {}
    for i, raw in enumerate(r.sequence(status, key, _STATUS)):
        path = ("status", key, i)
        entry = r.entry(raw, path)
        if entry.get("resources") is None:
            continue
        amounts = r.resources(r.mapping(entry, "resources", path), "requests", path + ("resources",))
        for name, amount in r.resources(entry, "allocatedResources", path).items():
            amounts[name] = max(amount, amounts.get(name, 0))
        reported[r.string(entry, "name", path)] = amounts
    if not reported:
        return containers
    conditions = r.sequence(status, "conditions", _STATUS)
    infeasible = any(
        isinstance(c, dict) and c.get("type") == "PodResizePending" and c.get("reason") == "Infeasible" for c in conditions
    ) or status.get("resize") == "Infeasible"
    out = []
    for container in containers:
        resized = reported.get(container.name)
        if resized is not None and (key == "containerStatuses" or container.restart_policy == "Always"):
            merged = dict(resized) if infeasible else {**container.requests}
            for name, amount in resized.items():
                merged[name] = max(amount, merged.get(name, 0))
            container = replace(container, requests=merged)
        out.append(container)
    return tuple(out)


def folds_labels(spec: Mapping[str, Any]) -> bool:
    """Whether a pod spec's required affinity or anti-affinity, or a topology spread constraint,
    folds the pod's own labels into a term (``matchLabelKeys``, ``mismatchLabelKeys``), so that
    pods of one template with different labels have different terms. Read leniently: ``to_pod``
    reports a malformed spec."""
    affinity = spec.get("affinity")
    for kind in ("podAntiAffinity", "podAffinity"):
        rule = affinity.get(kind) if isinstance(affinity, dict) else None
        terms = rule.get(_REQUIRED_AFFINITY) if isinstance(rule, dict) else None
        if isinstance(terms, list) and any(
            isinstance(t, dict) and (t.get("matchLabelKeys") or t.get("mismatchLabelKeys")) for t in terms
        ):
            return True
    spread = spec.get("topologySpreadConstraints")
    return isinstance(spread, list) and any(isinstance(c, dict) and c.get("matchLabelKeys") for c in spread)


def _pod_affinity_term(
    r: _Reader, raw: object, path: Path, namespace: str, own: Mapping[str, str]
) -> PodAffinityTerm:
    """Without namespaces or a namespaceSelector a term selects pods of the pod's own namespace.

    ``matchLabelKeys`` and ``mismatchLabelKeys`` are folded into the selector with the pod's
    ``own`` labels, as the API server does when it creates the pod (Kubernetes 1.31 and later), so
    a ``--gang`` template's pods read as the pods gangplan writes will. A dump's pods carry the
    fold already; it is not added twice, and a key the pod lacks is ignored, as there."""
    term = r.entry(raw, path)
    selector = term.get("labelSelector")
    labels = None
    expressions: tuple[NodeSelectorRequirement, ...] = ()
    if selector is not None:
        selector = r.mapping(term, "labelSelector", path)
        labels = r.string_map(selector, "matchLabels", path + ("labelSelector",))
        expressions = r.requirements(selector, "matchExpressions", path + ("labelSelector",))
        folded = [
            NodeSelectorRequirement(key, operator, (own[key],))
            for field, operator in (("matchLabelKeys", "In"), ("mismatchLabelKeys", "NotIn"))
            for key in r.strings(term, field, path)
            if key in own
        ]
        expressions += tuple(dict.fromkeys(f for f in folded if f not in expressions))
    namespaces = tuple(r.strings(term, "namespaces", path))
    key = r.string(term, "topologyKey", path)
    if (chosen := term.get("namespaceSelector")) is not None:
        return PodAffinityTerm(labels, expressions, None, key, every_namespace=chosen == {})
    return PodAffinityTerm(labels, expressions, namespaces or (namespace,), key)


_SPREAD_POLICIES = ("Honor", "Ignore")


def _spread_constraint(
    r: _Reader, raw: object, path: Path, namespace: str, own: Mapping[str, str]
) -> TopologySpreadConstraint | None:
    """A DoNotSchedule constraint; None for ScheduleAnyway, a preference. Its labelSelector and
    matchLabelKeys read as a pod affinity term's (no namespaces: the pod's own), and semantics
    judges which it models."""
    constraint = r.entry(raw, path)
    # The API requires whenUnsatisfiable; a dump without it was read as DoNotSchedule before, and still is.
    hard = r.choice(constraint, "whenUnsatisfiable", path, ("DoNotSchedule", "ScheduleAnyway"), "DoNotSchedule") == "DoNotSchedule"
    r.string(constraint, "topologyKey", path, required=True)
    max_skew = r.integer(constraint, "maxSkew", path, required=True, minimum=1, maximum=_INT32_MAX)
    min_domains = r.integer(constraint, "minDomains", path, default=1, minimum=1, maximum=_INT32_MAX)
    affinity_policy = r.choice(constraint, "nodeAffinityPolicy", path, _SPREAD_POLICIES, "Honor")
    taints_policy = r.choice(constraint, "nodeTaintsPolicy", path, _SPREAD_POLICIES, "Ignore")
    if not hard:
        return None
    term = {k: v for k, v in constraint.items() if k in ("labelSelector", "matchLabelKeys", "topologyKey")}
    return TopologySpreadConstraint(
        _pod_affinity_term(r, term, path, namespace, own), max_skew or 1, min_domains or 1, affinity_policy, taints_policy
    )


def _toleration(r: _Reader, raw: object, path: Path) -> Toleration:
    toleration = r.entry(raw, path)
    key = r.string(toleration, "key", path)
    operator = r.choice(toleration, "operator", path, ("Equal", "Exists", ""), "Equal") or "Equal"
    value = r.string(toleration, "value", path)
    if operator == "Exists" and value:
        r.fail(path + ("value",), "must be empty when operator is Exists")
    if not key and operator != "Exists":
        r.fail(path + ("operator",), "must be Exists when key is empty (tolerate every taint)")
    effect = r.choice(toleration, "effect", path, _TOLERATION_EFFECTS, "")
    return Toleration(key, operator, value, effect)


_PROTOCOLS = ("TCP", "UDP", "SCTP")
_PORT_MAX = 65535


def _host_ports(r: _Reader, spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """The ports NodePorts holds on the pod's node: app containers' and sidecars' (a plain init
    container has exited before the pod runs), each with a hostPort, which the API server sets
    to the containerPort under hostNetwork."""
    host_network = r.boolean(spec, "hostNetwork", _SPEC)
    found: set[HostPort] = set()
    for key in ("containers", "initContainers"):
        for i, container in enumerate(r.sequence(spec, key, _SPEC)):
            if not isinstance(container, dict) or (key == "initContainers" and container.get("restartPolicy") != "Always"):
                continue
            for j, raw in enumerate(r.sequence(container, "ports", _SPEC + (key, i))):
                at = _SPEC + (key, i, "ports", j)
                port = r.entry(raw, at)
                host = r.integer(port, "hostPort", at, minimum=0, maximum=_PORT_MAX) or 0
                if not host and host_network:
                    host = r.integer(port, "containerPort", at, minimum=0, maximum=_PORT_MAX) or 0
                if host:
                    protocol = r.choice(port, "protocol", at, _PROTOCOLS, "TCP")
                    found.add(HostPort(host, protocol, r.string(port, "hostIP", at) or "0.0.0.0"))
    return tuple(sorted(found, key=lambda p: (p.port, p.protocol, p.ip)))


def to_pod(obj: Mapping[str, Any], origin: Origin, shown: Path = ()) -> Pod:
    """A v1 Pod. An empty nodeName or priorityClassName means none, as in Kubernetes.
    ``shown``: where a pod made from a template is written in its workload (``spec.template``),
    which an error's path starts with."""
    r = _Reader(origin, shown)
    meta = r.mapping(obj, "metadata", ())
    spec = r.mapping(obj, "spec", ())
    status = r.mapping(obj, "status", ())
    owners = []
    for index, raw in enumerate(r.sequence(meta, "ownerReferences", _META)):
        path = ("metadata", "ownerReferences", index)
        owner = r.entry(raw, path)
        owners.append(
            OwnerReference(
                r.string(owner, "kind", path, required=True),
                r.string(owner, "name", path, required=True),
                r.boolean(owner, "controller", path),
            )
        )
    gates = tuple(
        r.string(r.entry(raw, ("spec", "schedulingGates", i)), "name", ("spec", "schedulingGates", i), required=True)
        for i, raw in enumerate(r.sequence(spec, "schedulingGates", _SPEC))
    )
    node_affinity = None
    affinity = r.mapping(spec, "affinity", _SPEC)
    nodes: dict[str, Any] = {}
    unmodelled: list[str] = []
    if affinity:  # most pods have none
        nodes = r.mapping(affinity, "nodeAffinity", _AFFINITY)
    namespace = r.string(meta, "namespace", _META) or "default"
    own_labels = r.labels(meta)
    anti_affinity: tuple[PodAffinityTerm, ...] = ()
    pod_affinity: tuple[PodAffinityTerm, ...] = ()
    if affinity:  # semantics judges which terms it models, and warns of the rest
        anti_affinity = tuple(
            _pod_affinity_term(r, raw, _ANTI_AFFINITY + (_REQUIRED_AFFINITY, i), namespace, own_labels)
            for i, raw in enumerate(
                r.sequence(r.mapping(affinity, "podAntiAffinity", _AFFINITY), _REQUIRED_AFFINITY, _ANTI_AFFINITY)
            )
        )
        pod_affinity = tuple(
            _pod_affinity_term(r, raw, _POD_AFFINITY + (_REQUIRED_AFFINITY, i), namespace, own_labels)
            for i, raw in enumerate(
                r.sequence(r.mapping(affinity, "podAffinity", _AFFINITY), _REQUIRED_AFFINITY, _POD_AFFINITY)
            )
        )
    host_ports = _host_ports(r, spec)
    spread = tuple(
        constraint
        for i, raw in enumerate(r.sequence(spec, "topologySpreadConstraints", _SPEC))
        if (constraint := _spread_constraint(r, raw, _SPEC + ("topologySpreadConstraints", i), namespace, own_labels))
    )
    if r.sequence(spec, "resourceClaims", _SPEC):
        unmodelled.append("device allocation for resource claims (kube-scheduler's DynamicResources filter)")
    volumes = r.sequence(spec, "volumes", _SPEC)
    if any(isinstance(v, dict) and (v.get("persistentVolumeClaim") or v.get("ephemeral")) for v in volumes):
        unmodelled.append(VOLUME_BINDING)
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if isinstance(annotations, dict):
        for slices in (kueue.SLICE_REQUIRED_TOPOLOGY, kueue.SLICE_REQUIRED_TOPOLOGY_CONSTRAINTS):
            if slices in annotations:
                unmodelled.append(f"Kueue topology slices ({slices})")
        if kueue.TOPOLOGY_SPREADING in annotations:
            unmodelled.append(f"Kueue topology spreading ({kueue.TOPOLOGY_SPREADING})")
    if nodes.get(_REQUIRED_AFFINITY) is not None:
        required = r.mapping(nodes, _REQUIRED_AFFINITY, _NODE_AFFINITY)
        node_affinity = r.node_selector(required, _NODE_AFFINITY + (_REQUIRED_AFFINITY,))
    containers = tuple(
        _container(r, c, ("spec", "containers", i), False) for i, c in enumerate(r.sequence(spec, "containers", _SPEC))
    )
    init_containers = tuple(
        _container(r, c, ("spec", "initContainers", i), True)
        for i, c in enumerate(r.sequence(spec, "initContainers", _SPEC))
    )
    if status.get("containerStatuses") or status.get("initContainerStatuses"):
        containers = _resized(r, status, "containerStatuses", containers)
        init_containers = _resized(r, status, "initContainerStatuses", init_containers)
    level = r.mapping(spec, "resources", _SPEC)
    level_requests = r.resources(level, "requests", ("spec", "resources"))
    # API defaulting (KEP-2837): a pod-level limit is the request only where no container asks.
    for name, amount in r.resources(level, "limits", ("spec", "resources")).items():
        if not any(name in c.requests for c in containers + init_containers):
            level_requests.setdefault(name, amount)
    return Pod(
        namespace=r.string(meta, "namespace", _META) or "default",
        name=r.string(meta, "name", _META, required=True),
        uid=r.string(meta, "uid", _META) or None,
        labels=own_labels,
        annotations=r.string_map(meta, "annotations", _META),
        containers=containers,
        init_containers=init_containers,
        overhead=r.resources(spec, "overhead", _SPEC),
        node_selector=r.string_map(spec, "nodeSelector", _SPEC),
        node_affinity=node_affinity,
        tolerations=tuple(
            _toleration(r, t, ("spec", "tolerations", i))
            for i, t in enumerate(r.sequence(spec, "tolerations", _SPEC))
        ),
        priority=r.integer(spec, "priority", _SPEC, minimum=_INT32_MIN, maximum=_INT32_MAX),
        priority_class_name=r.string(spec, "priorityClassName", _SPEC) or None,
        node_name=r.string(spec, "nodeName", _SPEC) or None,
        phase=_PHASE_OF[r.choice(status, "phase", _STATUS, _PHASES, "Pending")],
        creation_timestamp=r.timestamp(meta, "creationTimestamp", _META),
        owners=tuple(owners),
        origin=origin,
        scheduling_gates=gates,
        deleting=bool(r.string(meta, "deletionTimestamp", _META)),
        unmodelled=tuple(unmodelled),
        anti_affinity=anti_affinity,
        affinity=pod_affinity,
        pod_level_requests={k: v for k, v in level_requests.items() if _pod_level(k)},
        host_ports=host_ports,
        spread=spread,
    )


def _topology_keys(r: _Reader, d: Mapping[str, Any], key: str, at: Path) -> tuple[str, ...]:
    keys = []
    for index, raw in enumerate(r.sequence(d, key, at)):
        path = at + (key, index)
        keys.append(r.string(r.entry(raw, path), "topologyKey", path, required=True))
    return tuple(dict.fromkeys(keys))  # a key given twice says nothing more: 3,000 copies took 80 s


def _sort_rule(r: _Reader, raw: object, path: Path) -> SortRule:
    rule = r.entry(raw, path)
    # Godel's CRD requires resource and order; only dimension may be left out (it was added later).
    resource = r.choice(rule, "resource", path, _SORT_RESOURCES, None)
    return SortRule(
        resource=_SORT_RESOURCES[resource],
        dimension=r.choice(rule, "dimension", path, ("Capacity", "Available"), "Capacity"),
        order=r.choice(rule, "order", path, ("Ascending", "Descending"), None),
    )


_AFFINITY_FIELDS = ("required", "preferred", "sortRules", "nodeSelector")
VOLCANO_HARD_NETWORK = "Volcano networkTopology (mode hard; HyperNode tiers)"
VOLUME_BINDING = "persistent volume claim binding (kube-scheduler's VolumeBinding and VolumeZone filters)"


def volcano_hard_network_topology(spec: Mapping[str, Any]) -> bool:
    """A Volcano Job's or PodGroup's hard networkTopology (its default mode), or a sub-group
    policy's: gangplan does not model HyperNode tiers."""
    terms = [spec.get("networkTopology")]
    policies = spec.get("subGroupPolicy")
    terms += [p.get("networkTopology") for p in policies if isinstance(p, dict)] if isinstance(policies, list) else []
    return any(isinstance(t, dict) and t and t.get("mode", "hard") != "soft" for t in terms)


def _godel_fields(r: _Reader, spec: Mapping[str, Any]) -> dict[str, Any]:
    at: tuple[str, ...] = ("spec", "affinity", "podGroupAffinity")
    outer = r.mapping(spec, "affinity", _SPEC)
    affinity = r.mapping(outer, "podGroupAffinity", at[:2])
    beside = not affinity and any(key in outer for key in _AFFINITY_FIELDS)
    if beside:
        # Seed 003's third example indents the terms beside an empty podGroupAffinity.
        affinity, at = outer, at[:2]
    selector = None
    if affinity.get("nodeSelector") is not None:
        selector = r.node_selector(r.mapping(affinity, "nodeSelector", at), at + ("nodeSelector",))
    return dict(
        priority_class_name=r.string(spec, "priorityClassName", _SPEC) or None,
        required_topology=_topology_keys(r, affinity, "required", at),
        preferred_topology=_topology_keys(r, affinity, "preferred", at),
        node_selector=selector,
        sort_rules=tuple(
            _sort_rule(r, rule, at + ("sortRules", i))
            for i, rule in enumerate(r.sequence(affinity, "sortRules", at))
        ),
        affinity_beside=beside,
    )


def to_pod_group(obj: Mapping[str, Any], origin: Origin) -> PodGroup:
    """A PodGroup in any of the five dialects; each reads only the fields its API defines.

    No dialect's CRD requires or defaults minMember, and each Go type leaves a 0 out
    (``omitempty``), so an absent minMember is 0, as every scheduler reads it. Volcano
    defaults queue to "default" (its CRD and admission webhook do).
    """
    r = _Reader(origin)
    api = PodGroupAPI(r.choice(obj, "apiVersion", (), _POD_GROUP_VERSIONS, None))
    meta = r.mapping(obj, "metadata", ())
    spec = r.mapping(obj, "spec", ())
    phase = r.mapping(obj, "status", ()).get("phase")
    done = "Completed" if api is PodGroupAPI.VOLCANO else "Finished"  # each controller's word
    fields: dict[str, Any] = {"finished": phase == done}
    if api is PodGroupAPI.VOLCANO:
        min_member = r.integer(spec, "minMember", _SPEC, default=0, minimum=0)
        task_members = r.mapping(spec, "minTaskMember", _SPEC)
        for name in task_members:
            if type(name) is not str:
                r.fail(("spec", "minTaskMember"), f"expected task names, got {_show(name)}")
            r.integer(task_members, name, ("spec", "minTaskMember"), required=True, minimum=0)
        fields.update(
            min_resources=_volcano_min_resources(r, spec),
            min_task_member=task_members,
            queue=r.string(spec, "queue", _SPEC) or "default",
            priority_class_name=r.string(spec, "priorityClassName", _SPEC) or None,
            sub_group=r.string(spec, "subGroup", _SPEC),
        )
        if volcano_hard_network_topology(spec):
            fields["unmodelled"] = (VOLCANO_HARD_NETWORK,)
    else:
        min_member = r.integer(spec, "minMember", _SPEC, default=0, minimum=0)
        fields["schedule_timeout_seconds"] = r.integer(
            spec, "scheduleTimeoutSeconds", _SPEC, minimum=0
        )
        if api in (PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE):
            fields.update(_godel_fields(r, spec))
            fields["timed_out"] = phase == "Timeout"
        else:
            fields["min_resources"] = r.resources(spec, "minResources", _SPEC)
    return PodGroup(
        namespace=r.string(meta, "namespace", _META) or "default",
        name=r.string(meta, "name", _META, required=True),
        api=api,
        min_member=min_member,  # type: ignore[arg-type]
        creation_timestamp=r.timestamp(meta, "creationTimestamp", _META),
        uid=r.string(meta, "uid", _META) or None,
        raw=obj,
        origin=origin,
        **fields,
    )


def _volcano_min_resources(r: _Reader, spec: Mapping[str, Any]) -> dict[str, int]:
    """Volcano's job controller fills minResources from Kubernetes' quota evaluator (cpu and
    requests.cpu, limits.memory, count/pods, requests.nvidia.com/gpu, ...); its scheduler
    (NewResource) reads resource names only and passes over the quota-style ones, so a GPU's
    requests.nvidia.com/gpu asks nothing of it, nor of gangplan."""
    amounts: dict[str, int] = {}
    for name, value in r.mapping(spec, "minResources", _SPEC).items():
        if type(name) is not str:
            r.fail(("spec", "minResources"), f"expected resource names, got {_show(name)}")
        if problem := resource_name_problem(name):
            r.fail(("spec", "minResources", name), problem)
        if name.startswith(("count/", "limits.", "requests.")):
            continue
        resource = name
        try:
            amount = to_amount(resource, value)
        except QuantityError as exc:
            r.fail(("spec", "minResources", name), str(exc))
        amounts[resource] = max(amounts.get(resource, 0), amount)
    return amounts


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_HIGHEST_USER_PRIORITY = 1_000_000_000
_SYSTEM_PRIORITIES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def to_priority_class(obj: Mapping[str, Any], origin: Origin) -> PriorityClass:
    """The API server refuses a value above 1,000,000,000 (HighestUserDefinablePriority) but
    for its own two system classes, and any outside int32."""
    r = _Reader(origin)
    name = r.string(r.mapping(obj, "metadata", ()), "name", _META, required=True)
    highest = _SYSTEM_PRIORITIES.get(name, _HIGHEST_USER_PRIORITY)
    return PriorityClass(
        name=name,
        value=r.integer(obj, "value", (), required=True, minimum=_INT32_MIN, maximum=highest),  # type: ignore[arg-type]
        global_default=r.boolean(obj, "globalDefault", ()),
        origin=origin,
    )


def to_workload_priority_class(obj: Mapping[str, Any], origin: Origin) -> WorkloadPriorityClass:
    """Kueue's CRD requires the value and holds it to an int32, with no ceiling of its own."""
    r = _Reader(origin)
    return WorkloadPriorityClass(
        name=r.string(r.mapping(obj, "metadata", ()), "name", _META, required=True),
        value=r.integer(obj, "value", (), required=True, minimum=_INT32_MIN, maximum=_INT32_MAX),  # type: ignore[arg-type]
        origin=origin,
    )


def to_topology(obj: Mapping[str, Any], origin: Origin) -> Topology:
    """A Kueue or KAI Topology (the same shape): node label keys, largest level first."""
    r = _Reader(origin)
    levels = []
    spec = r.mapping(obj, "spec", ())
    for index, raw in enumerate(r.sequence(spec, "levels", _SPEC, required=True)):
        path = ("spec", "levels", index)
        key = r.string(r.entry(raw, path), "nodeLabel", path, required=True)
        # Kueue's CRD holds it to a qualified name, as node label keys are: it is printed everywhere
        if (problem := _qualified_name_problem("label key", key)) is not None:
            r.fail(path + ("nodeLabel",), problem)
        levels.append(key)
    return Topology(
        name=r.string(r.mapping(obj, "metadata", ()), "name", _META, required=True),
        levels=tuple(levels),
        origin=origin,
    )


def _gang(obj: Mapping[str, Any], origin: Origin) -> tuple[PodGroup, list[Pod]]:
    from gangplan.manifests import expand_gang  # manifests reads pods with this module

    return expand_gang(obj, origin)


def _volcano_job(obj: Mapping[str, Any], origin: Origin) -> tuple[PodGroup, list[Pod]] | None:
    from gangplan.manifests import expand_volcano_job  # manifests reads pods with this module

    return expand_volcano_job(obj, origin)


_Converter = Callable[[Mapping[str, Any], Origin], Any]
# A gang whose pods do not exist yet: (its PodGroup, the pods it would create), or None when
# they do (a Volcano Job its controller has run): counted as skipped.
_EXPANDED = 6
# (apiVersion, kind) -> (converter, index of the Snapshot field it fills, or _EXPANDED)
_CONVERTERS: dict[tuple[str, str], tuple[_Converter, int]] = {
    ("v1", "Node"): (to_node, 0),
    ("v1", "Pod"): (to_pod, 1),
    **{(api.value, "PodGroup"): (to_pod_group, 2) for api in POD_GROUP_APIS},
    **{(api, "PriorityClass"): (to_priority_class, 3) for api in PRIORITY_CLASS_APIS},
    **{(api, "Topology"): (to_topology, 4) for api in TOPOLOGY_APIS},
    **{(api, "WorkloadPriorityClass"): (to_workload_priority_class, 5) for api in WORKLOAD_PRIORITY_CLASS_APIS},
    (PodGroupAPI.GANG.value, "Gang"): (_gang, _EXPANDED),
    (PodGroupAPI.VOLCANO_JOB.value, "Job"): (_volcano_job, _EXPANDED),
}
# A group gangplan reads, at a version it does not know: a mistake, not another product.
_KNOWN_GROUPS: dict[tuple[str, str], list[str]] = {}
for _api, _kind in _CONVERTERS:
    _KNOWN_GROUPS.setdefault((_api.rpartition("/")[0], _kind), []).append(_api)
_USED_KINDS = frozenset(kind for _, kind in _CONVERTERS)
# Workloads whose pod template names a group: expanded, when they are manifests, once every
# pod is read (manifests.expand_workloads).
_WORKLOADS = frozenset(
    {("v1", "ReplicationController"), ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("batch/v1", "Job")}
)


def _skipped_label(kind: str, api: str) -> str:
    """A kind gangplan reads at another apiVersion is named with the version it skipped."""
    return f"{kind} ({api})" if kind in _USED_KINDS else kind


def _add(
    found: tuple[list[Any], ...],
    first_seen: dict[tuple[str, str, str], tuple[Any, str]],
    items: Iterable[tuple[int, str, Any]],
    source: str,
) -> None:
    """Objects into their Snapshot fields; a second object of a kind and name is refused.
    Two PodGroups of one name in two API groups can both exist, but groups are known by
    namespace and name in every output, so they are refused too, saying why."""
    for field, what, item in items:
        key = (what, getattr(item, "namespace", ""), item.name)
        if key in first_seen:
            name = f"{key[1]}/{key[2]}" if key[1] else key[2]
            first, first_source = first_seen[key]
            where = f"first{first_source} at {_Reader(first.origin).position(_NAME)}"
            if what == "PodGroup" and first.api != item.api and {first.api, item.api} <= set(POD_GROUP_APIS):
                raise InputError(
                    f"PodGroup {name}{source} is given as {item.api.value} and as {first.api.value} ({where}): "
                    "gangplan knows a group by namespace and name only; plan each scheduler's groups in a run of its own",
                    _Reader(item.origin).position(_NAME),
                )
            raise InputError(f"duplicate {what} {name}{source} ({where})", _Reader(item.origin).position(_NAME))
        first_seen[key] = (item, source)
        found[field].append(item)


def _launchers_to_create(pods: list[Pod], unsent: Mapping[str, Mapping[str, Any]], made: Sequence[Pod]) -> list[Pod]:
    """A Pod manifest in a group whose workload manifests were expanded (an MPI launcher beside
    its workers' Job) does not exist either: it is a Pod to create, as they are, not one to
    bind (a Binding of a pod that does not exist is NotFound, leaving the gang half made)."""
    from gangplan.semantics import group_names_of  # semantics reads pods with this module

    expanded = {(pod.namespace, name) for pod in made for name in group_names_of(pod)}
    out = []
    for pod in pods:
        obj = unsent.get(pod.key) if pod.manifest is None else None
        if obj is not None and any((pod.namespace, name) in expanded for name in group_names_of(pod)):
            meta = {**obj.get("metadata", {}), "namespace": pod.namespace}
            pod = replace(pod, manifest={**obj, "metadata": meta, "spec": dict(obj.get("spec") or {})})
        out.append(pod)
    return out


def to_snapshot(objects: Iterable[tuple[Mapping[str, Any], Origin]]) -> Snapshot:
    """Convert objects in order; count the kinds gangplan does not use; refuse duplicates.
    Pods bound to nodes the snapshot lacks are kept: planning warns about them."""
    found: tuple[list[Any], ...] = ([], [], [], [], [], [])
    skipped: dict[str, int] = {}
    first_seen: dict[tuple[str, str, str], tuple[Any, str]] = {}
    workloads: list[tuple[Mapping[str, Any], Origin]] = []
    created: list[tuple[Mapping[str, Any], Origin]] = []  # Volcano Jobs its controller has made
    unsent: dict[str, Mapping[str, Any]] = {}  # Pod manifests (no uid, status or nodeName), by key
    for obj, origin in objects:
        r = _Reader(origin)
        kind = r.string(obj, "kind", (), required=True)
        api = r.string(obj, "apiVersion", (), required=True)
        if (api, kind) in _WORKLOADS:
            workloads.append((obj, origin))
            continue
        converter = _CONVERTERS.get((api, kind))
        if converter is None:
            versions = _KNOWN_GROUPS.get((api.rpartition("/")[0], kind))
            if versions is not None:
                expected = ", ".join(versions)
                r.fail(("apiVersion",), f"{kind} {api} is not supported; expected {expected}")
            label = _skipped_label(kind, api)
            skipped[label] = skipped.get(label, 0) + 1
            continue
        convert, bucket = converter
        if bucket == _EXPANDED:
            expanded = convert(obj, origin)
            if expanded is None:  # created: its pods may still wait for its PodGroup to be enqueued
                created.append((obj, origin))
                continue
            group, members = expanded
            source = f" from {kind} {group.key}"
            items = [(2, "PodGroup", group), *((1, "Pod", pod) for pod in members)]
        else:
            source, items = "", [(bucket, kind, convert(obj, origin))]
            made = items[0][2]
            if kind == "Pod" and not (made.uid or obj.get("status") or made.node_name):
                unsent[made.key] = obj
        _add(found, first_seen, items, source)
    if created:
        from gangplan.manifests import waiting_volcano_jobs  # manifests reads pods with this module

        waiting, already = waiting_volcano_jobs(Snapshot(pods=tuple(found[1]), pod_groups=tuple(found[2])), created)
        for why in already:
            label = f"Job ({PodGroupAPI.VOLCANO_JOB.value}, {why})"
            skipped[label] = skipped.get(label, 0) + 1
        for source, members in waiting:
            _add(found, first_seen, [(1, "Pod", pod) for pod in members], f" from {source}")
    if workloads:
        from gangplan.manifests import expand_workloads  # manifests reads pods with this module

        made, unread = expand_workloads(Snapshot(pods=tuple(found[1]), pod_groups=tuple(found[2])), workloads)
        for kind, api, why in unread:
            label = f"{kind} ({api}, {why})" if why else _skipped_label(kind, api)
            skipped[label] = skipped.get(label, 0) + 1
        for source, members in made:
            _add(found, first_seen, [(1, "Pod", pod) for pod in members], f" from {source}")
        if unsent and made:
            found[1][:] = _launchers_to_create(found[1], unsent, [pod for _, members in made for pod in members])
    nodes, pods, pod_groups, priority_classes, topologies, workload_priority_classes = found
    return Snapshot(
        nodes=tuple(sorted(nodes, key=lambda node: node.name)),  # the plan depends on the set, not the order
        pods=tuple(pods),
        pod_groups=tuple(pod_groups),
        priority_classes=tuple(priority_classes),
        topologies=tuple(topologies),
        workload_priority_classes=tuple(workload_priority_classes),
        skipped_kinds=skipped,
    )
