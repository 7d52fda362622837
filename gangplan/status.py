"""``-o status``: each PodGroup as given, with ``status`` filled in after the plan (seed 001).

An output adapter, not a checker: membership comes from ``semantics.group_pods`` and what
the plan decided from its ``GroupOutcome``s. Pure data in, plain data out; rendering to
JSON or YAML is ``render.to_json`` / ``render.to_yaml``.

Per PodGroup object (implicit groups — Kueue plain-pod groups and lone pods — have no object
and are left out), in the Plan's group order:

- ``scheduled``: members bound after the plan (bound, unfinished members + pods the plan places);
  ``running`` / ``succeeded`` / ``failed``: members in that pod phase.
- ``phase``: as each API's controller writes it. scheduler-plugins (its PodGroupReconciler):
  Running when running + succeeded >= minMember; Finished once minMember succeeded, whatever
  still runs; Failed once a member failed and failed + running + succeeded reach minMember;
  Finished and Failed kept as given, since it touches such a group no more; Pending while
  fewer than minMember pods exist; else Scheduling, which the older scheduling.sigs.k8s.io
  API called Scheduled (placed) and PreScheduling (waiting). Volcano (its scheduler's
  jobStatus): Running once minMember pods are allocated, Completed once nothing runs or is
  placed and minMember succeeded, Inqueue kept for a gang it cannot allocate, else Pending.
  Both: Unknown when some run but the rest cannot be placed (seed 001), and a terminal phase
  given (Finished, Completed, Failed) kept once nothing runs or waits. Godel (its binder's
  PodGroup controller): Pending, PreScheduling, then Scheduled for good (``_godel_phase``).
- ``scheduled`` only for scheduler-plugins (seed 001's count; Volcano's status has none);
  Godel's status has ``pending`` (members in phase Pending) instead.
- ``conditions``: a group the plan cannot place gets ``Unschedulable`` (reason NotEnoughTasks
  when fewer pods exist than minMember, or than a Volcano task's minTaskMember, PodFailed or
  PodDeleted when its failed or deleting members are what it is short of, else
  NotEnoughResources; message = the plan's reason); Godel keys it by ``phase`` instead of
  ``type`` and in place of that phase's own. Stale ones are dropped from placed groups; other
  conditions are kept, and so are ``occupiedBy`` and ``scheduleStartTime``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from .model import PodGroup, PodGroupAPI, PodPhase, Snapshot
from .plan import GroupOutcome, Plan
from .semantics import Gang, group_pods

PHASE_PENDING = "Pending"
PHASE_SCHEDULED = "Scheduled"
PHASE_RUNNING = "Running"
PHASE_UNKNOWN = "Unknown"
PHASE_PRE_SCHEDULING = "PreScheduling"
PHASE_SCHEDULING = "Scheduling"  # scheduler-plugins' x-k8s.io API, which dropped the two above
PHASE_FAILED = "Failed"
PHASE_INQUEUE = "Inqueue"  # Volcano's: admitted to its queue, its resources reserved

UNSCHEDULABLE = "Unschedulable"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
NOT_ENOUGH_TASKS = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"  # Volcano's, for a task short of its minTaskMember
POD_FAILED = "PodFailed"
POD_DELETED = "PodDeleted"

_KEPT_STATUS_FIELDS = ("occupiedBy", "scheduleStartTime")  # scheduleTimeoutSeconds counts from the latter
# Its own tasks short, or (in a JobGroup) a member's: explain's reasons say which.
_TASKS_SHORT = re.compile(rf"(JobGroup .+? cannot be placed: member \S+: )?{NOT_ENOUGH_TASKS}:")
_TASK_SHORT = re.compile(rf"(JobGroup .+? cannot be placed: member \S+: )?{NOT_ENOUGH_TASKS}: task ")
_SCHEDULER_PLUGINS = (PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY)
_SP_FINAL_PHASES = ("Finished", "Failed")  # its reconciler touches such a group no more
_TERMINAL_PHASES = ("Finished", "Completed", "Failed")  # scheduler-plugins', Volcano's, both
# Every member succeeded: the phase each API's controller writes then.
_FINISHED_PHASE = {
    PodGroupAPI.VOLCANO: "Completed",
    PodGroupAPI.SCHEDULER_PLUGINS: "Finished",
    PodGroupAPI.SCHEDULER_PLUGINS_LEGACY: "Finished",
}
_GODEL = (PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE)
# Phases Godel's controller no longer writes and reads as its final Scheduled.
_GODEL_AS_SCHEDULED = (PHASE_SCHEDULED, PHASE_RUNNING, "Finished", PHASE_FAILED)
# Counts beyond running, succeeded and failed: seed 001's scheduled for scheduler-plugins (its
# current CRD has none, nor conditions: the API server drops them on apply), Godel's pending.
_SCHEDULED_COUNT = (PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY)
_PENDING_COUNT = _GODEL


def status_list(plan: Plan, snapshot: Snapshot, *, now: str | None = None) -> dict[str, Any]:
    """A v1 List of the snapshot's PodGroup objects with ``status`` as the plan leaves it.

    ``now`` is the ``lastTransitionTime`` of new Unschedulable conditions (omitted when None,
    so the output stays deterministic). Raises ValueError when a PodGroup of the snapshot has
    no outcome in the plan (the plan was not made from this snapshot).
    """
    # Only PodGroup objects as given: groups made from a Gang, a Volcano Job or --gang
    # workloads have no PodGroup object to print, like Kueue groups and lone pods.
    objects = {
        pg.key: pg for pg in snapshot.pod_groups if pg.raw.get("kind") == "PodGroup" and pg.api is not PodGroupAPI.MANIFESTS
    }
    gangs: dict[str, Gang] = {
        gang.key: gang
        for jg in group_pods(snapshot).job_groups
        for gang in jg.gangs
        if not gang.implicit
    }
    # A bare pod or a Kueue pod group may share a PodGroup's namespace/name: match the API too.
    outcomes = {g.key: g for g in plan.groups if g.key in objects and g.api == objects[g.key].api.value}
    missing = [key for key in objects if key not in outcomes]
    if missing:
        raise ValueError(
            f"the plan has no outcome for PodGroup {', '.join(missing[:3])}"
            f"{' and more' if len(missing) > 3 else ''}; was it made from this snapshot?"
        )
    items = []
    seen: set[str] = set()
    for outcome in plan.groups:
        key = outcome.key
        if outcomes.get(key) is not outcome or key in seen:
            continue
        seen.add(key)
        pg = objects[key]
        items.append(_with_status(pg, gangs.get(key), outcome, now))
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def group_status(
    pg: PodGroup, gang: Gang | None, outcome: GroupOutcome, now: str | None = None
) -> dict[str, Any]:
    """The ``status`` of one PodGroup after the plan.

    Of the old status in ``pg.raw`` only ``occupiedBy`` and conditions other than
    Unschedulable are kept.
    """
    members = [] if gang is None else [*gang.running, *gang.pending, *gang.finished]
    running = sum(1 for p in members if p.phase == PodPhase.RUNNING)
    succeeded = sum(1 for p in members if p.phase == PodPhase.SUCCEEDED)
    failed = sum(1 for p in members if p.phase == PodPhase.FAILED)
    bound = 0 if gang is None else len(gang.running)  # bound and not finished
    scheduled = bound + outcome.scheduled
    min_member = outcome.min_member

    old = pg.raw.get("status")
    old = old if isinstance(old, Mapping) else {}
    if pg.timed_out or (gang is not None and gang.done and not members):
        # Final (Godel schedules a timed-out group no more), or done with its pods gone: the
        # plan changes nothing, and the controller's counts are all there is. Godel's reads a
        # Finished group, pods or none, as Scheduled (``_godel_phase``).
        kept = _plain(old)
        if pg.api in _GODEL and not pg.timed_out and kept.get("phase") in _GODEL_AS_SCHEDULED:
            kept["phase"] = PHASE_SCHEDULED
        return kept
    created = len(members) + (len(gang.blocked) if gang else 0)  # the controllers count gated pods too
    if pg.api in _GODEL:
        phase = _godel_phase(old.get("phase"), running + succeeded + failed, created, scheduled, min_member)
    else:
        phase = _phase(pg.api, old.get("phase"), outcome, running, succeeded, failed, bound, created, min_member)
    godel = pg.api in _GODEL
    given = old.get("conditions")
    old_conditions = [c for c in given if isinstance(c, Mapping)] if isinstance(given, (list, tuple)) else []
    # Godel keeps one condition per phase: the one written below replaces its phase's.
    # Not in Scheduled, its final phase: the controller would never write that record again.
    replaced = phase if godel and not outcome.placed and phase != PHASE_SCHEDULED else None
    conditions = [
        _plain(c) for c in old_conditions if not _ours(c, godel) and (replaced is None or c.get("phase") != replaced)
    ]
    if not outcome.placed:
        exist = outcome.counted + outcome.pending
        reason = _unschedulable_reason(pg, outcome, exist < min_member)
        # Gated pods are there, only held: failed or deleting members are what it is short of
        # only when the live ones, gated included, do not reach minMember.
        blocked = [] if gang is None else gang.blocked
        live = exist + sum(1 for p in blocked if not p.deleting)
        gone = failed + sum(1 for p in blocked if p.deleting)
        if reason == NOT_ENOUGH_TASKS and live < min_member <= live + gone:
            reason = POD_FAILED if failed else POD_DELETED  # seed 001's words for why it is short
        condition: dict[str, Any] = {
            **({"phase": phase} if godel else {"type": UNSCHEDULABLE}),  # Godel keys its conditions by phase
            "status": "True",
            "reason": reason,
            "message": outcome.reason,
        }
        # Still true: when it became so, and Volcano's transitionID, stay (seed 001: the time
        # of the last transition from one status to another).
        previous = next(
            (
                c for c in old_conditions
                if c.get("status") == "True" and (
                    c.get("phase") == phase and (_ours(c, godel) or (replaced is not None and old.get("phase") == phase))
                    if godel else _ours(c, godel)
                )
            ),
            None,
        )
        kept = {k: previous[k] for k in ("lastTransitionTime", "transitionID") if previous is not None and previous.get(k)}
        if kept:
            condition.update(kept)
        elif now is not None:
            condition["lastTransitionTime"] = now
        conditions.append(condition)

    status: dict[str, Any] = {
        "phase": phase,
        **({"scheduled": scheduled} if pg.api in _SCHEDULED_COUNT else {}),
        **({"pending": sum(1 for p in members if p.phase == PodPhase.PENDING)} if pg.api in _PENDING_COUNT else {}),
        "running": running,
        "succeeded": succeeded,
        "failed": failed,
    }
    if conditions:
        status["conditions"] = conditions
    for name in _KEPT_STATUS_FIELDS:
        if name in old:
            status[name] = _plain(old[name])
    return status


def _phase(
    api: PodGroupAPI,
    old_phase: object,
    outcome: GroupOutcome,
    running: int,
    succeeded: int,
    failed: int,
    bound: int,
    created: int,
    min_member: int,
) -> str:
    """The phase as scheduler-plugins' PodGroupReconciler or Volcano's scheduler writes it,
    with seed 001's Unknown for a group whose members run but whose rest cannot be placed."""
    sp = api in _SCHEDULER_PLUGINS
    if sp and old_phase in _SP_FINAL_PHASES:
        return str(old_phase)  # its reconciler returns early on these, whatever runs now
    volcano = api is PodGroupAPI.VOLCANO
    # Nothing runs or waits; for Volcano's getPodGroupPhase, nothing runs or is bound or placed
    # (completed == scheduled): members it cannot place do not hold off Completed.
    settled = not running and (bound == 0 and not outcome.scheduled if volcano else not outcome.pending)
    if settled and old_phase in _TERMINAL_PHASES:
        return str(old_phase)
    if sp and failed and failed + running + succeeded >= min_member and succeeded < min_member and created >= min_member:
        return PHASE_FAILED  # the controller's final state once a member failed (seed 000)
    if succeeded >= min_member and api in _FINISHED_PHASE and (settled or sp):
        return _FINISHED_PHASE[api]  # scheduler-plugins': whatever still runs
    if running + succeeded >= min_member:
        return PHASE_RUNNING
    waiting = PHASE_SCHEDULING if api is PodGroupAPI.SCHEDULER_PLUGINS else None
    if outcome.placed:
        # Volcano's scheduler calls a gang Running once minMember pods are allocated.
        return PHASE_RUNNING if volcano else waiting or PHASE_SCHEDULED
    if running > 0:
        return PHASE_UNKNOWN  # some run, the rest cannot be placed; succeeded ones are done
    if sp and created >= min_member:
        return waiting or PHASE_PRE_SCHEDULING
    if volcano and old_phase == PHASE_INQUEUE:
        return PHASE_INQUEUE  # Volcano keeps an enqueued gang it cannot allocate yet Inqueue
    return PHASE_PENDING


def _godel_phase(old_phase: object, started: int, created: int, scheduled: int, min_member: int) -> str:
    """As Godel's PodGroup controller (pkg/binder/controller) steps it: Scheduled once minMember
    members are bound or any member has started (its final phase, like Timeout, handled before);
    PreScheduling while all of minMember's pods exist and fewer are bound; else Pending. It
    reads Running, Finished and Failed, which it no longer writes, as Scheduled, and keeps a
    phase it does not know."""
    if old_phase in _GODEL_AS_SCHEDULED or started:
        return PHASE_SCHEDULED
    if isinstance(old_phase, str) and old_phase not in ("", PHASE_PENDING, PHASE_PRE_SCHEDULING):
        return old_phase
    if created < min_member:
        return PHASE_PENDING
    return PHASE_SCHEDULED if scheduled >= min_member else PHASE_PRE_SCHEDULING


def _unschedulable_reason(pg: PodGroup, outcome: GroupOutcome, too_few: bool) -> str:
    """NotEnoughTasks (too few pods), NotEnoughResources; Volcano says NotEnoughPodsOfTask
    when a task has fewer pods than its minTaskMember."""
    if pg.api is PodGroupAPI.VOLCANO and _TASK_SHORT.match(outcome.reason):
        return NOT_ENOUGH_PODS_OF_TASK
    return NOT_ENOUGH_TASKS if too_few or _TASKS_SHORT.match(outcome.reason) else NOT_ENOUGH_RESOURCES


def _ours(condition: Mapping[str, Any], godel: bool) -> bool:
    """A condition gangplan writes, replaced on every plan (stale once the group is placed)."""
    if godel:
        return condition.get("reason") in (NOT_ENOUGH_RESOURCES, NOT_ENOUGH_TASKS, POD_FAILED, POD_DELETED)
    return condition.get("type") == UNSCHEDULABLE


def _with_status(
    pg: PodGroup, gang: Gang | None, outcome: GroupOutcome, now: str | None
) -> dict[str, Any]:
    obj = _plain(pg.raw)
    obj["status"] = group_status(pg, gang, outcome, now)
    return obj


def _plain(value: Any) -> Any:
    """A deep copy as plain dicts and lists (the input is never shared or mutated)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


__all__ = ["status_list", "group_status"]
