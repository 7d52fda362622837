"""``-o status``: each PodGroup as given, with ``status`` filled in after the plan (seed 001).

An output adapter, not a checker: membership comes from ``semantics.group_pods`` and what
the plan decided from its ``GroupOutcome``s. Pure data in, plain data out; rendering to
JSON or YAML is ``render.to_json`` / ``render.to_yaml``.

Per PodGroup object (implicit groups — Kueue plain-pod groups and lone pods — have no object
and are left out), in the Plan's group order:

- ``scheduled``: members bound after the plan (bound, unfinished members + pods the plan places);
  ``running`` / ``succeeded`` / ``failed``: members in that pod phase.
- ``phase``: Running when running + succeeded >= minMember (Succeeded members count, as in
  Volcano's scheduler and scheduler-plugins' controller); Scheduled when the plan places the
  group but fewer run yet (Running for Volcano, whose scheduler says so once minMember pods
  are allocated, and which has no Scheduled phase); Unknown when some run but the rest
  cannot be placed; Pending otherwise. A group whose members all succeeded, with nothing
  running or pending, is Finished (scheduler-plugins) or Completed (Volcano), as their
  controllers write (scheduler-plugins' once minMember succeeded, whatever still runs; Volcano's
  once nothing runs or is placed, whatever waits); it
  keeps a terminal phase already given (Finished, Completed, Failed).
  scheduler-plugins and Godel call a group whose minMember pods all exist and wait, none
  placed, PreScheduling (Volcano: Pending).
- ``scheduled`` only for scheduler-plugins (seed 001's count; Volcano's status has none);
  Godel's status has ``pending`` (members in phase Pending) instead.
- ``conditions``: a group the plan cannot place gets ``Unschedulable`` (reason NotEnoughTasks
  when fewer pods exist than minMember, or than a Volcano task's minTaskMember, else
  NotEnoughResources; message = the plan's reason); Godel keys it by ``phase`` instead of
  ``type``. Stale ones are dropped from placed groups; other conditions are kept, and so are
  ``occupiedBy`` and ``scheduleStartTime``.
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
PHASE_INQUEUE = "Inqueue"  # Volcano's: admitted to its queue, its resources reserved

UNSCHEDULABLE = "Unschedulable"
NOT_ENOUGH_RESOURCES = "NotEnoughResources"
NOT_ENOUGH_TASKS = "NotEnoughTasks"
NOT_ENOUGH_PODS_OF_TASK = "NotEnoughPodsOfTask"  # Volcano's, for a task short of its minTaskMember

_KEPT_STATUS_FIELDS = ("occupiedBy", "scheduleStartTime")  # scheduleTimeoutSeconds counts from the latter
# Its own tasks short, or (in a JobGroup) a member's: explain's reasons say which.
_TASKS_SHORT = re.compile(rf"(JobGroup .+? cannot be placed: member \S+: )?{NOT_ENOUGH_TASKS}:")
_TASK_SHORT = re.compile(rf"(JobGroup .+? cannot be placed: member \S+: )?{NOT_ENOUGH_TASKS}: task ")
# scheduler-plugins' controller writes Finished once minMember pods succeeded, whatever still runs.
_FINISHED_WHILE_RUNNING = (PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY)
_TERMINAL_PHASES = ("Finished", "Completed", "Failed")  # scheduler-plugins', Volcano's, both
# Every member succeeded: the phase each API's controller writes then.
_FINISHED_PHASE = {
    PodGroupAPI.VOLCANO: "Completed",
    PodGroupAPI.SCHEDULER_PLUGINS: "Finished",
    PodGroupAPI.SCHEDULER_PLUGINS_LEGACY: "Finished",
    PodGroupAPI.GODEL: "Finished",
    PodGroupAPI.GODEL_BYTEDANCE: "Finished",
}
_GODEL = (PodGroupAPI.GODEL, PodGroupAPI.GODEL_BYTEDANCE)
# scheduler-plugins' controller: Failed once a member failed and the failed, running and
# succeeded ones reach minMember (Finished, all succeeded, wins; too few pods stays Pending).
PHASE_FAILED = "Failed"
_FAILED_PHASE_RULE = (PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY)
# All of minMember's pods exist and wait, none placed: the controllers' PreScheduling.
_PRE_SCHEDULING = (PodGroupAPI.SCHEDULER_PLUGINS, PodGroupAPI.SCHEDULER_PLUGINS_LEGACY, *_GODEL)
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
        # plan changes nothing, and the controller's counts are all there is.
        return _plain(old)
    volcano = pg.api is PodGroupAPI.VOLCANO
    # Nothing runs or waits; for Volcano's getPodGroupPhase, nothing runs or is bound or placed
    # (completed == scheduled): members it cannot place do not hold off Completed.
    settled = not running and (bound == 0 and not outcome.scheduled if volcano else not outcome.pending)
    if settled and old.get("phase") in _TERMINAL_PHASES:
        phase = old["phase"]
    elif succeeded >= min_member and pg.api in _FINISHED_PHASE and (settled or pg.api in _FINISHED_WHILE_RUNNING):
        phase = _FINISHED_PHASE[pg.api]
    elif running + succeeded >= min_member:
        phase = PHASE_RUNNING
    elif outcome.placed:
        # Volcano's scheduler calls a gang Running once minMember pods are allocated; it has
        # no Scheduled phase (seed 001's phases are Pending, Running, Unknown).
        phase = PHASE_RUNNING if volcano else PHASE_SCHEDULED
    elif running > 0:
        phase = PHASE_UNKNOWN  # some run, the rest cannot be placed; succeeded ones are done
    elif pg.api in _PRE_SCHEDULING and len(members) + (len(gang.blocked) if gang else 0) >= min_member:
        phase = PHASE_PRE_SCHEDULING  # the controller counts every pod with the label, gated ones too
    elif volcano and old.get("phase") == PHASE_INQUEUE:
        phase = PHASE_INQUEUE  # Volcano keeps an enqueued gang it cannot allocate yet Inqueue
    else:
        phase = PHASE_PENDING
    if (
        pg.api in _FAILED_PHASE_RULE and failed and failed + running + succeeded >= min_member
        and succeeded < min_member and len(members) + (len(gang.blocked) if gang else 0) >= min_member
    ):
        phase = PHASE_FAILED  # the controller's final state once a member failed (seed 000)
    godel = pg.api in _GODEL
    old_conditions = old.get("conditions")
    conditions = [
        _plain(c)
        for c in (old_conditions if isinstance(old_conditions, (list, tuple)) else ())
        if isinstance(c, Mapping) and not _ours(c, godel)
    ]
    if not outcome.placed:
        exist = outcome.counted + outcome.pending
        condition: dict[str, Any] = {
            **({"phase": phase} if godel else {"type": UNSCHEDULABLE}),  # Godel keys its conditions by phase
            "status": "True",
            "reason": _unschedulable_reason(pg, outcome, exist < min_member),
            "message": outcome.reason,
        }
        # Still true: when it became so, and Volcano's transitionID, stay (seed 001: the time
        # of the last transition from one status to another).
        previous = next(
            (
                c for c in (old_conditions if isinstance(old_conditions, (list, tuple)) else ())
                if isinstance(c, Mapping) and _ours(c, godel) and c.get("status") == "True"
                and (not godel or c.get("phase") == phase)
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


def _unschedulable_reason(pg: PodGroup, outcome: GroupOutcome, too_few: bool) -> str:
    """NotEnoughTasks (too few pods), NotEnoughResources; Volcano says NotEnoughPodsOfTask
    when a task has fewer pods than its minTaskMember."""
    if pg.api is PodGroupAPI.VOLCANO and _TASK_SHORT.match(outcome.reason):
        return NOT_ENOUGH_PODS_OF_TASK
    return NOT_ENOUGH_TASKS if too_few or _TASKS_SHORT.match(outcome.reason) else NOT_ENOUGH_RESOURCES


def _ours(condition: Mapping[str, Any], godel: bool) -> bool:
    """A condition gangplan writes, replaced on every plan (stale once the group is placed)."""
    if godel:
        return condition.get("reason") in (NOT_ENOUGH_RESOURCES, NOT_ENOUGH_TASKS)
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
