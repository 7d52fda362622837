"""Kubernetes resource quantities, exact.

Kubernetes compares quantities as scaled integers, never floats; so do we. A quantity is
parsed to an exact ``Fraction`` and then rounded *up* to the unit gangplan counts in:
millicores for ``cpu``, whole units (bytes, GPUs, pods) for everything else — the same
rounding as ``Quantity.MilliValue()`` / ``Quantity.Value()`` in apimachinery.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Sequence

__all__ = [
    "MILLI_RESOURCES",
    "QuantityError",
    "describe_amount",
    "format_alike",
    "format_amount",
    "percent_apart",
    "parse_quantity",
    "to_amount",
]

# Resources counted in thousandths, as the scheduler does for cpu.
MILLI_RESOURCES = frozenset({"cpu"})

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
# Beyond these the number is absurd for any resource; refusing it keeps Fraction work bounded.
_MAX_EXPONENT = 64
_MAX_DIGITS = 64


class QuantityError(ValueError):
    """Not a Kubernetes quantity; the message says what is accepted."""


def parse_quantity(value: object) -> Fraction:
    """Parse a quantity as it may appear in YAML/JSON: a string, or a bare integer or float."""
    if isinstance(value, bool):
        raise QuantityError(f"expected a quantity such as 500m, 2, 1.5 or 4Gi, got {str(value).lower()}")
    if isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise QuantityError(f"expected a finite quantity, got {value!r}")
        text = repr(value)
    elif isinstance(value, str):
        text = value.strip()  # Quantity.UnmarshalJSON trims the string before parsing it
    else:
        shown = {type(None): "null", list: "a list", dict: "a mapping"}.get(type(value), f"a {type(value).__name__}")
        raise QuantityError(f"expected a quantity such as 500m, 2, 1.5 or 4Gi, got {shown}")
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{text!r} is not a quantity (expected a number with an optional suffix: "
            "n, u, m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like 1e3)"
        )
    if match["sign"] == "-" and match["number"].strip("0.") != "":  # -0 is zero, which is >= 0
        raise QuantityError(f"{text!r} is negative; resource quantities must be >= 0")
    if len(match["number"]) > _MAX_DIGITS:
        raise QuantityError(f"{text[:16]!r}...: too many digits (at most {_MAX_DIGITS})")
    number = Fraction(match["number"] + ("0" if match["number"].endswith(".") else ""))
    if match["binary"]:
        return number * _BINARY[match["binary"]]
    if match["exponent"] is not None:
        exponent = int(match["exponent"])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"{text!r}: exponent out of range (at most ±{_MAX_EXPONENT})")
        return number * Fraction(10) ** exponent
    return number * _DECIMAL[match["decimal"]]


def to_amount(resource: str, value: object) -> int:
    """The integer amount gangplan counts for ``resource``: millicores for cpu, else units.
    Extended resources (a domain-prefixed name outside kubernetes.io, nvidia.com/gpu say) and
    ``pods`` are whole numbers, as the API server validates them: 500m of a GPU is refused,
    not rounded up to one."""
    exact = parse_quantity(value)
    if resource in MILLI_RESOURCES:
        exact *= 1000
    elif exact.denominator != 1 and (resource == "pods" or ("/" in resource and "kubernetes.io/" not in resource)):
        raise QuantityError(f"{value!r}: {resource} must be a whole number")
    return math.ceil(exact)


def format_amount(resource: str, amount: int) -> str:
    """Render an amount back as a quantity a Kubernetes user would write."""
    if resource in MILLI_RESOURCES:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if _is_bytes(resource):
        for suffix, factor in reversed(_BINARY.items()):
            if amount >= factor and amount % factor == 0:
                return f"{amount // factor}{suffix}"
    return str(amount)


def format_alike(resource: str, amounts: Sequence[int]) -> list[str]:
    """Amounts compared in one message, in one unit and exact: the largest binary suffix that
    writes every one whole, so that '2298Mi + 64Gi > 60069807Ki' reads, digit for digit, as
    the integers compare. cpu is in millicores; a zero of bytes or a count stays '0', as
    ``format_amount`` writes it."""
    if resource in MILLI_RESOURCES:
        return [f"{amount}m" for amount in amounts]
    if _is_bytes(resource) and any(amounts):
        for suffix, factor in reversed(_BINARY.items()):
            if all(amount % factor == 0 for amount in amounts):
                return [f"{amount // factor}{suffix}" if amount else "0" for amount in amounts]
    return [str(amount) for amount in amounts]


def _is_bytes(resource: str) -> bool:
    return resource == "memory" or "storage" in resource or resource.startswith("hugepages-")


def plural(count: int, noun: str) -> str:
    """``1 node``, ``2 nodes``: messages read as sentences."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def listed(names: Sequence[str], shown: int = 3) -> str:
    """'a, b, c, …': the first few of many, for a warning that stands for all of them."""
    return ", ".join(names[:shown]) + (", …" if len(names) > shown else "")


def counted(names: Sequence[str], shown: int = 3) -> str:
    """'a, b, c and 4 more': the first few of many, and how many the rest are."""
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def describe_apart(resource: str, first: int, second: int) -> tuple[str, str]:
    """Both amounts as ``describe_amount`` gives them, with more digits when that rounds two
    different amounts alike: "needs 2.8Gi, 2.8Gi free" tells an operator nothing."""
    pair = describe_amount(resource, first), describe_amount(resource, second)
    shown = [parse_quantity(text) for text in pair]  # '10.0' and '10' read alike too
    if first == second or (shown[0] < shown[1]) == (first < second) and shown[0] != shown[1]:
        return pair
    if resource in MILLI_RESOURCES:
        return f"{first}m", f"{second}m"
    if _is_bytes(resource):
        for suffix, factor in reversed(_BINARY.items()):
            if factor <= max(first, second):
                pair = tuple(f"{v / factor:.1f}".removesuffix(".0") + suffix for v in (first, second))  # type: ignore[assignment]
                if pair[0] != pair[1]:
                    return pair
    return str(first), str(second)


def percent_apart(before: int, after: int, total: int) -> tuple[str, str]:
    """Both amounts as percentages of ``total``: whole percent, with more digits when rounding
    would hide a change ("0% -> 0%" for 124 -> 204 of 253000); the raw figures when even three
    decimals would, or when ``total`` is not positive."""
    if total <= 0:
        return f"{before}/{total}", f"{after}/{total}"
    for digits in (0, 1, 2, 3):
        pair = f"{100 * before / total:.{digits}f}%", f"{100 * after / total:.{digits}f}%"
        if pair[0] != pair[1] or before == after:
            return pair
    return f"{before}/{total}", f"{after}/{total}"


def describe_amount(resource: str, amount: int) -> str:
    """A short, readable figure for messages (``2.2Ti``, ``1.5`` cpu); exact when it can be."""
    if resource in MILLI_RESOURCES:
        if amount < 1000:
            return f"{amount}m" if amount else "0"
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount / 1000:.1f}"
    if _is_bytes(resource):
        for suffix, factor in reversed(_BINARY.items()):
            if amount >= factor:
                value = amount / factor
                return f"{value:.0f}{suffix}" if value >= 100 or value == int(value) else f"{value:.1f}{suffix}"
    return str(amount)
