"""gangplan: an offline planner for all-or-nothing gang scheduling on Kubernetes.

The Python API is small: load a snapshot, plan it, read the Plan.

    from gangplan import load_snapshot, plan, Options
    result = plan(load_snapshot(["snapshot.yaml"]), Options(time_limit=5))
"""

from __future__ import annotations

__version__ = "0.1.0"

import os
from typing import TYPE_CHECKING, Any, Sequence

from .errors import GangplanError, InputError, SolverError, UsageError  # noqa: E402
from .plan import Placement, Plan  # noqa: E402  (light; loaded first so that ``plan`` below is the function)

# The planner pulls in OR-Tools and numpy: imported when first asked for, so that the console
# entry point (gangplan._entry) starts at once and can answer a Ctrl-C while they load.


if TYPE_CHECKING:
    from .loader import Limits
    from .model import Snapshot
    from .planner import Options
    from .stages import Reporter


def plan(snapshot: Snapshot, options: Options | None = None, reporter: Reporter | None = None) -> Plan:
    """gangplan.planner.plan (see there), imported on first use."""
    from .planner import Options as _Options, plan as _plan

    return _plan(snapshot, options if options is not None else _Options(), reporter)


def __getattr__(name: str) -> Any:
    if name == "Options":
        from .planner import Options

        return Options
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_snapshot(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, stdin: bytes | None = None, limits: Limits | None = None
) -> Snapshot:
    """Read files, folders or ``-`` into a Snapshot (see ``gangplan.loader``); one path alone
    is taken too (a string was read as its characters, each a path). ``limits`` is a
    ``gangplan.loader.Limits`` to raise or lower the input bounds."""
    from .loader import Limits, load_snapshot as _load

    given = [paths] if isinstance(paths, (str, os.PathLike)) else paths
    return _load([os.fspath(p) for p in given], stdin=stdin, limits=limits or Limits())


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
