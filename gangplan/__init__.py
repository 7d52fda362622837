"""gangplan: an offline planner for all-or-nothing gang scheduling on Kubernetes.

The Python API is small: load a snapshot, plan it, read the Plan.

    from gangplan import load_snapshot, plan, Options
    result = plan(load_snapshot(["snapshot.yaml"]), Options(time_limit=5))
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import GangplanError, InputError, SolverError, UsageError  # noqa: E402
from .plan import Plan, Placement  # noqa: E402
from .planner import Options, plan  # noqa: E402


def load_snapshot(paths, *, stdin=None, limits=None):  # type: ignore[no-untyped-def]
    """Read files, folders or ``-`` into a Snapshot (see ``gangplan.loader``); ``limits`` is a
    ``gangplan.loader.Limits`` to raise or lower the input bounds."""
    from .loader import Limits, load_snapshot as _load

    return _load(paths, stdin=stdin, limits=limits or Limits())


__all__ = [
    "GangplanError",
    "InputError",
    "Options",
    "Placement",
    "Plan",
    "SolverError",
    "UsageError",
    "load_snapshot",
    "plan",
]
