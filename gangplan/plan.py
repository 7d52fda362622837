"""The Plan: what the planner decided, as data that ``diff`` and ``verify`` read back.

A Plan is pure data (no solver objects) and has one JSON form, ``kind: Plan``, versioned by
``schemaVersion``. Everything in it is deterministic except ``solver.wallTime``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Container, Iterable, Mapping, Sequence

from .errors import dotted
from .model import IMPLICIT_KINDS, PodGroupAPI
from .semantics import Gang, succeeded_count

API_VERSION = "gangplan.io/v1alpha1"
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class Placement:
    """One pending pod bound to a node."""

    namespace: str
    name: str
    node: str
    uid: str | None = None
    group: str = ""  # namespace/name of its PodGroup
    manifest: Mapping[str, Any] | None = None  # a pod that does not exist yet: the v1 Pod to create
    gated: bool = False  # held by a scheduling gate (Kueue's) the plan sees through: no Binding until it is lifted

    @property
    def pod(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class GroupOutcome:
    """What happened to one PodGroup (or a pod that forms a group of one)."""

    key: str  # namespace/name
    job_group: str  # namespace/name of the JobGroup's top PodGroup, or namespace/subGroup
    placed: bool
    priority: int
    min_member: int
    running: int
    pending: int
    scheduled: int  # pending pods this plan places
    reason: str = ""
    api: str = ""
    domains: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # level -> domains used
    preferred: tuple[str, ...] = ()  # its preferred levels, largest first
    succeeded: int = 0  # finished members: they hold nothing, and count as ``counts_succeeded`` says
    blocked: int = 0  # unbound members kube-scheduler leaves alone (gated, being deleted)
    unmade: bool = False  # a PodGroup manifest none of whose pods runs or waits: check takes it
    finished: bool = False  # its PodGroup is Completed or Finished and no pod of it waits: done

    @property
    def waiting(self) -> bool:
        """A group the plan is about: pods to place (or gated), or a manifest without its pods."""
        return bool(self.pending or self.blocked or self.unmade)

    @property
    def counts_succeeded(self) -> bool:
        """Whether its succeeded members count toward minMember (``succeeded_count``); a plan
        written without the group's API counts them, as plans did before the rule was known."""
        try:
            return succeeded_count(PodGroupAPI(self.api), bool(self.pending))
        except ValueError:
            return True

    @property
    def counted(self) -> int:
        """Members counting toward minMember before the plan: running ones, and succeeded
        ones where its scheduler counts them."""
        return self.running + (self.succeeded if self.counts_succeeded else 0)

    @property
    def spans(self) -> dict[str, int]:
        """Domains spanned per preferred level."""
        return {level: len(self.domains.get(level, ())) for level in self.preferred}


@dataclass(frozen=True, slots=True)
class ObjectiveValue:
    """One term of the lexicographic objective, as the chosen plan scores it."""

    name: str
    value: int
    sense: str  # maximize | minimize
    bound: int | None = None  # the value where proven optimal; at the gap, the most (least) it can be


@dataclass(frozen=True, slots=True)
class SolverReport:
    solver: str  # cp-sat | greedy
    policy: str  # optimal | ordered
    status: str  # OPTIMAL | FEASIBLE | GREEDY | TRIVIAL
    chosen: str  # which plan was kept: cp-sat or greedy
    objective: tuple[ObjectiveValue, ...] = ()
    gap: float | None = None  # relative gap of the first objective term not proven optimal
    workers: int = 1
    seed: int = 0
    time_limit: float = 10.0
    deterministic_time: float = 0.0
    wall_time: float = 0.0
    note: str = ""
    exact_weights: bool = True  # False when quorum demands were rounded to fit int64
    parameters: tuple[tuple[str, str], ...] = ()  # CP-SAT's, from GANGPLAN_CPSAT_PARAMS: plans differ for them

    @property
    def gap_at(self) -> str | None:
        """The objective term a gap above 0 is at: objective 1 is lexicographic, so its first
        term not proven optimal (whose bound, where known, is not its value)."""
        return next((o.name for o in self.objective if o.bound != o.value), None) if self.gap else None


@dataclass(frozen=True, slots=True)
class Plan:
    placements: tuple[Placement, ...]
    groups: tuple[GroupOutcome, ...]
    solver: SolverReport
    resources_before: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    resources_after: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    levels: tuple[str, ...] | None = None  # topology levels, largest first; None: not recorded
    warnings: tuple[str, ...] = ()
    pending_said: frozenset[str] = frozenset()  # groups whose entry, read back, gives "pending"
    bindings: bool = False  # read from a List of Bindings or Pods: placements and nothing else

    @property
    def placements_only(self) -> bool:
        """Read from a List of Bindings (any tool's): no group outcomes, no solver report."""
        return self.bindings

    @property
    def node_of(self) -> dict[str, str]:
        return {p.pod: p.node for p in self.placements}

    def topology_levels(self, fallback: Sequence[str] = ()) -> tuple[str, ...]:
        """The levels the plan was made with, else ``fallback``: a plan read back from an
        older file, or made on a cluster with no topology, names none."""
        return tuple(self.levels or ()) or tuple(fallback)

    def by_key(self) -> dict[str, GroupOutcome]:
        """Groups by namespace/name. A bare pod or a Kueue pod group may have a PodGroup's name
        in its namespace (both are planned, with a warning): the PodGroup is the one a name
        asks for."""
        found: dict[str, GroupOutcome] = {}
        for g in self.groups:
            if g.key not in found or found[g.key].api in _IMPLICIT_APIS:
                found[g.key] = g
        return found


_IMPLICIT_APIS = frozenset(IMPLICIT_KINDS)
GroupId = tuple[str, str]  # (kind, namespace/name); kind "" for a PodGroup


def group_id(group: Gang | GroupOutcome) -> GroupId:
    """(kind, namespace/name): a bare pod or a Kueue pod group may share a PodGroup's name in
    its namespace (both are planned, with a warning), so the kind tells them apart."""
    api = group.group.api.value if isinstance(group, Gang) else group.api
    return IMPLICIT_KINDS.get(api, ""), group.key


def shared_keys(ids: Iterable[GroupId]) -> set[str]:
    """Keys both a PodGroup and a bare pod or Kueue pod group go by: their lines say which."""
    kinds: dict[str, set[str]] = {}
    for kind, key in ids:
        kinds.setdefault(key, set()).add(kind)
    return {key for key, found in kinds.items() if len(found) > 1}


def group_name(gid: GroupId, shared: Container[str]) -> str:
    """`ns/name`, or `ns/name (pod)` for a group with no PodGroup object whose key a PodGroup
    shares."""
    kind, key = gid
    return f"{key} ({kind})" if kind and key in shared else key


@dataclass(frozen=True, slots=True)
class Claim:
    """What a Plan says of one group; ``pending`` None when it does not say."""

    group: str
    placed: bool
    scheduled: int
    pending: int | None = None
    form: str = ""  # "pod" (of no group), "kueue" (plain pods) or "" (a PodGroup): a key may name several


_FORMS = {PodGroupAPI.POD.value: "pod", PodGroupAPI.KUEUE_POD_GROUP.value: "kueue"}


def claims_of(groups: Iterable[GroupOutcome], pending_said: Container[str] | None = None) -> list[Claim]:
    """What a Plan says of each group, for the verifier to hold it to; ``pending`` only for
    the groups in ``pending_said`` when given (a Plan read back may leave it out)."""
    return [
        Claim(
            g.key,
            g.placed,
            g.scheduled,
            g.pending if pending_said is None or g.key in pending_said else None,
            form=_FORMS.get(g.api, ""),
        )
        for g in groups
    ]


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    s = plan.solver
    return {
        "apiVersion": API_VERSION,
        "kind": "Plan",
        "schemaVersion": SCHEMA_VERSION,
        "solver": {
            "solver": s.solver,
            "policy": s.policy,
            "status": s.status,
            "chosen": s.chosen,
            "objective": [
                {"name": o.name, "sense": o.sense, "value": o.value, "bound": o.bound}
                for o in s.objective
            ],
            "gap": s.gap,
            "workers": s.workers,
            "seed": s.seed,
            "timeLimit": s.time_limit,
            "deterministicTime": s.deterministic_time,
            "wallTime": s.wall_time,
            "note": s.note,
            "exactDemandWeights": s.exact_weights,
            **({"parameters": dict(s.parameters)} if s.parameters else {}),
        },
        "topology": {"levels": list(plan.topology_levels())},
        "warnings": list(plan.warnings),
        "resources": {
            name: {
                "allocatable": plan.resources_before[name][1],
                "usedBefore": plan.resources_before[name][0],
                "usedAfter": plan.resources_after[name][0],
            }
            for name in plan.resources_before
        },
        "groups": [
            {
                "name": g.key,
                "jobGroup": g.job_group,
                "api": g.api,
                "placed": g.placed,
                "priority": g.priority,
                "minMember": g.min_member,
                "running": g.running,
                **({"succeeded": g.succeeded} if g.succeeded else {}),
                "pending": g.pending,
                **({"blocked": g.blocked} if g.blocked else {}),
                **({"finished": True} if g.finished else {}),
                "scheduled": g.scheduled,
                "reason": g.reason,
                "domains": {level: list(values) for level, values in g.domains.items()},
                "spans": g.spans,
            }
            for g in plan.groups
        ],
        "placements": [
            {"pod": p.pod, "node": p.node, "group": p.group, **({"uid": p.uid} if p.uid else {})}
            for p in plan.placements
        ],
    }


class PlanFormatError(ValueError):
    """The document is not a Plan gangplan can read; the message says what is wrong, and
    ``path`` where (the keys and indices from the document's root), so it can be located."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.path = path


def _json_type(value: object) -> str:
    """A value's type as JSON and YAML name it, not Python."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _wrong(path: tuple[str | int, ...], expected: str, value: object) -> PlanFormatError:
    return PlanFormatError(f"{dotted(path)}: expected {expected}, got {_json_type(value)}", path)


def _text(data: Mapping[str, Any], key: str, at: tuple[str | int, ...]) -> str:
    """A string field; absent or null is empty."""
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _wrong((*at, key), "a string", value)
    return value


def _flag(data: Mapping[str, Any], key: str, at: tuple[str | int, ...]) -> bool:
    """A true-or-false field; absent or null is false."""
    value = data.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _wrong((*at, key), "true or false", value)
    return value


def _part(data: Mapping[str, Any], key: str, kind: type, at: tuple[str | int, ...] = ()) -> Any:
    """``data[key]`` when it has the JSON type the schema gives it; absent or null is empty."""
    value = data.get(key)
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise _wrong((*at, key), "an object" if kind is dict else "a list", value)
    return value


def _number(data: Mapping[str, Any], key: str, at: tuple[str | int, ...], kind: type = int) -> Any:
    """An integer (or for ``float``, any number) field; absent or null is 0."""
    value = data.get(key)
    if value is None:
        return kind(0)
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise _wrong((*at, key), "a number" if kind is float else "an integer", value)
    return kind(value)


def plan_from_dict(data: Any) -> Plan:
    """Read a Plan back. Only what ``verify`` and ``diff`` need is required."""
    if not isinstance(data, dict) or data.get("kind") != "Plan":
        raise PlanFormatError("expected an object with kind: Plan")
    version = data.get("schemaVersion")
    if version is None:
        raise PlanFormatError(f"schemaVersion is missing (expected {SCHEMA_VERSION}, as -o plan writes it)")
    if version != SCHEMA_VERSION:
        raise PlanFormatError(f"schemaVersion {version!r} is not supported (expected {SCHEMA_VERSION})")
    placements = []
    for index, item in enumerate(_part(data, "placements", list)):
        if not isinstance(item, dict):
            raise _wrong(("placements", index), "an object", item)
        pod, node = item.get("pod"), item.get("node")
        if not isinstance(pod, str) or pod.count("/") != 1 or "" in pod.split("/") or not isinstance(node, str):
            raise PlanFormatError(
                f"placements[{index}]: expected pod: <namespace>/<name> and node: <name>", ("placements", index)
            )
        namespace, name = pod.split("/")
        uid, group = _text(item, "uid", ("placements", index)), _text(item, "group", ("placements", index))
        placements.append(Placement(namespace, name, node, uid or None, group))
    groups = []
    pending_said = set()
    if data.get("groups") is None:
        raise PlanFormatError("groups: a Plan says what happened to each group (make one with -o plan)", ("groups",))
    for index, item in enumerate(_part(data, "groups", list)):
        if not isinstance(item, dict):
            raise _wrong(("groups", index), "an object", item)
        at = ("groups", index)
        if not _text(item, "name", at):
            raise PlanFormatError(f"groups[{index}].name: expected a group's namespace/name", (*at, "name"))
        if not isinstance(item.get("placed"), bool):
            raise _wrong((*at, "placed"), "true or false", item.get("placed"))
        if item.get("pending") is not None:
            pending_said.add(str(item.get("name", "")))
        domains = _part(item, "domains", dict, at)
        for level, names in domains.items():
            if not isinstance(names, list):
                raise _wrong((*at, "domains", level), "a list", names)
        groups.append(
            GroupOutcome(
                key=str(item.get("name", "")),
                job_group=_text(item, "jobGroup", at),
                placed=bool(item.get("placed")),
                priority=_number(item, "priority", at),
                min_member=_number(item, "minMember", at),
                running=_number(item, "running", at),
                pending=_number(item, "pending", at),
                scheduled=_number(item, "scheduled", at),
                reason=_text(item, "reason", at),
                api=_text(item, "api", at),
                domains={k: tuple(v) for k, v in domains.items()},
                preferred=tuple(_part(item, "spans", dict, at).keys()),
                succeeded=_number(item, "succeeded", at),
                blocked=_number(item, "blocked", at),
                finished=_flag(item, "finished", at),
            )
        )
    solver = _part(data, "solver", dict)
    report = SolverReport(
        solver=_text(solver, "solver", ("solver",)),
        policy=_text(solver, "policy", ("solver",)),
        status=_text(solver, "status", ("solver",)),
        chosen=_text(solver, "chosen", ("solver",)),
        objective=tuple(
            ObjectiveValue(str(o["name"]), _number(o, "value", ("solver", "objective", i)), str(o["sense"]), o.get("bound"))
            for i, o in enumerate(_part(solver, "objective", list, ("solver",)))
            if isinstance(o, dict) and "name" in o and "value" in o and "sense" in o
        ),
        gap=solver.get("gap"),
        wall_time=_number(solver, "wallTime", ("solver",), float),
    )
    recorded = _part(data, "topology", dict).get("levels")
    if recorded is not None and not (isinstance(recorded, list) and all(isinstance(k, str) for k in recorded)):
        raise PlanFormatError("topology.levels: expected a list of label keys", ("topology", "levels"))
    levels = None if recorded is None else tuple(recorded)
    return Plan(tuple(placements), tuple(groups), report, levels=levels, pending_said=frozenset(pending_said))


def plan_from_document(data: Any) -> Plan:
    """A Plan, or a v1 List of Bindings (or Pods with spec.nodeName) made by any tool.

    A List becomes a Plan with placements only, so ``verify`` and ``diff`` can check any placement.
    """
    if isinstance(data, dict) and data.get("kind") == "Plan":
        return plan_from_dict(data)
    if data is None:
        raise PlanFormatError("expected a Plan or a List of Bindings, got an empty document")
    is_list = isinstance(data, dict) and str(data.get("kind", "")).endswith("List")
    items = data.get("items") if is_list else [data]
    if is_list and items is not None and not isinstance(items, list):
        raise _wrong(("items",), "a list", items)
    typed = str(data.get("kind", ""))[: -len("List")] if is_list else ""  # a PodList's items carry no kind
    placements = []
    for index, item in enumerate(items or []):
        at: tuple[str | int, ...] = ("items", index) if is_list else ()
        if isinstance(item, dict) and "kind" not in item and typed in ("Binding", "Pod"):
            item = {**item, "kind": typed}
        if not isinstance(item, dict) or item.get("kind") not in ("Binding", "Pod"):
            raise PlanFormatError(f"{dotted(at) or 'the document'}: expected a Plan, or Binding objects (or Pods with spec.nodeName)", at)
        if item.get("apiVersion") not in (None, "v1"):
            # The API server knows Bindings and Pods at v1 only.
            raise PlanFormatError(
                f"{dotted((*at, 'apiVersion'))}: a {item['kind']} is apiVersion v1, got {item.get('apiVersion')!r}", (*at, "apiVersion")
            )
        meta = item.get("metadata") or {}
        holder, key = ("target", "name") if item["kind"] == "Binding" else ("spec", "nodeName")
        if not isinstance(item.get(holder) or {}, dict):
            raise _wrong((*at, holder), "an object", item.get(holder))
        node = (item.get(holder) or {}).get(key)
        if holder == "spec" and node is None and isinstance(meta, dict) and isinstance(meta.get("name"), str):
            # A pod to create that -o json leaves unbound (gated, or its gang waits for a gated
            # pod): created for the scheduler to place, no placement to check.
            continue
        target_kind = (item.get(holder) or {}).get("kind") if holder == "target" else None
        if target_kind not in (None, "", "Node"):
            # The API server refuses it: "must be empty or Node".
            raise PlanFormatError(f"{dotted((*at, 'target', 'kind'))}: a Binding's target must be a Node, got {target_kind!r}", (*at, "target", "kind"))
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not isinstance(node, str) or not node:
            what = "a Binding needs metadata.name and target.name" if holder == "target" else "a Pod needs metadata.name and spec.nodeName"
            raise PlanFormatError(f"{dotted(at) or 'the document'}: {what}", at)
        namespace = meta.get("namespace") or "default"
        uid = meta.get("uid")
        # A Pod object is one to create: what verify holds to the pod the snapshot's workload makes.
        made = None
        if item["kind"] == "Pod":
            made = {**item, "spec": {k: v for k, v in item["spec"].items() if k != "nodeName"}}
        placements.append(Placement(str(namespace), meta["name"], node, uid if isinstance(uid, str) else None, manifest=made))
    placements.sort(key=lambda p: (p.namespace, p.name))
    return Plan(tuple(placements), (), SolverReport("", "", "", ""), bindings=True)
