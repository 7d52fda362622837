"""OR-Tools' ``cp_model``, imported without pandas.

``cp_model`` imports pandas only for its ``*_series`` helpers and the annotations that name
``pd.Index`` and ``pd.Series``; gangplan calls none of them, and pandas is 0.3 s of a plan's
start (half of importing ``cp_model``, measured on ortools 9.15 with pandas 3.1). While
``cp_model`` is imported, ``pandas`` resolves to a stand-in holding those two names as
classes nothing is an instance of, and leaves ``sys.modules`` again, so whatever imports
pandas later gets the real one. If pandas is loaded already, or this OR-Tools wants more of
it than the stand-in has, the import is the ordinary one.
"""

from __future__ import annotations

import sys
import types


def _stand_in() -> types.ModuleType | None:
    """Puts the stand-in in place, unless pandas (or cp_model itself) is loaded already."""
    if "pandas" in sys.modules or "ortools.sat.python.cp_model" in sys.modules:
        return None
    pandas = types.ModuleType("pandas", "gangplan's stand-in while OR-Tools' cp_model is imported")
    for name in ("Index", "Series"):
        setattr(pandas, name, type(name, (), {"__module__": "pandas"}))
    sys.modules["pandas"] = pandas
    return pandas


_pandas = _stand_in()
try:
    from ortools.sat.python import cp_model
except Exception:
    if _pandas is None:
        raise
    if sys.modules.get("pandas") is _pandas:
        del sys.modules["pandas"]
    from ortools.sat.python import cp_model
finally:
    if _pandas is not None and sys.modules.get("pandas") is _pandas:
        del sys.modules["pandas"]
    del _pandas

__all__ = ["cp_model"]
