"""Typed stand-ins for a function that a test patches in: to see what it returned, or to
change it."""

from __future__ import annotations

from typing import Callable, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def recording(function: Callable[P, R], results: list[R]) -> Callable[P, R]:
    """``function``, appending the result of each call to ``results``."""

    def recorded(*args: P.args, **kwargs: P.kwargs) -> R:
        result = function(*args, **kwargs)
        results.append(result)
        return result

    return recorded


def altered(function: Callable[P, R], change: Callable[[R], R]) -> Callable[P, R]:
    """``function``, its result passed through ``change`` before the caller sees it."""

    def changed(*args: P.args, **kwargs: P.kwargs) -> R:
        return change(function(*args, **kwargs))

    return changed
