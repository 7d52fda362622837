"""Kubernetes quantities, exactly as apimachinery parses and rounds them."""

from __future__ import annotations

import pytest

from gangplan.quantity import (
    QuantityError,
    describe_amount,
    describe_apart,
    format_amount,
    parse_quantity,
    percent_apart,
    to_amount,
)

KI, MI, GI, TI, PI, EI = (2**n for n in (10, 20, 30, 40, 50, 60))


@pytest.mark.parametrize(
    ("resource", "value", "amount"),
    [
        # every suffix, counted in whole units (bytes) ...
        ("memory", "1n", 1),
        ("memory", "1u", 1),
        ("memory", "1m", 1),
        ("memory", "100m", 1),
        ("memory", "1000m", 1),
        ("memory", "1001m", 2),
        ("memory", "1", 1),
        ("memory", "1k", 10**3),
        ("memory", "1M", 10**6),
        ("memory", "1G", 10**9),
        ("memory", "1T", 10**12),
        ("memory", "1P", 10**15),
        ("memory", "1E", 10**18),
        ("memory", "1Ki", KI),
        ("memory", "1Mi", MI),
        ("memory", "1Gi", GI),
        ("memory", "1Ti", TI),
        ("memory", "1Pi", PI),
        ("memory", "1Ei", EI),
        ("memory", "1.5Gi", 3 * GI // 2),
        ("memory", "0.5Ki", 512),
        ("memory", "1.5", 2),
        ("memory", "0.1", 1),
        ("memory", "0", 0),
        ("memory", "+2", 2),
        ("memory", ".5", 1),
        ("memory", "5.", 5),
        # ... and in millicores for cpu
        ("cpu", "1n", 1),
        ("cpu", "1000000n", 1),
        ("cpu", "1000001n", 2),
        ("cpu", "1u", 1),
        ("cpu", "1500u", 2),
        ("cpu", "100m", 100),
        ("cpu", "1", 1000),
        ("cpu", "2.5", 2500),
        ("cpu", "0.0001", 1),
        ("cpu", "0.001", 1),
        ("cpu", "1k", 10**6),
        ("cpu", "1Ki", 1024 * 1000),
        # exponents
        ("memory", "1e3", 1000),
        ("memory", "1E3", 1000),
        ("memory", "5e+2", 500),
        ("memory", "1.5e2", 150),
        ("cpu", "1E-3", 1),
        ("cpu", "1e-3", 1),
        ("cpu", "25e-4", 3),
        ("memory", "1E-3", 1),
        # plain numbers as YAML/JSON give them
        ("memory", 3, 3),
        ("cpu", 3, 3000),
        ("cpu", 0, 0),
        ("cpu", 0.5, 500),
        ("cpu", 1.0001, 1001),
        ("cpu", 1e-05, 1),
        ("memory", 1.5, 2),
        ("memory", 2e9, 2 * 10**9),
        # extended resources are plain integers
        ("nvidia.com/gpu", "8", 8),
        ("nvidia.com/gpu", 8, 8),
        ("pods", "110", 110),
    ],
)
def test_amounts(resource: str, value: object, amount: int) -> None:
    assert to_amount(resource, value) == amount


@pytest.mark.parametrize(("value", "amount"), [(" 1", 1000), ("1 ", 1000), ("\t2m\n", 2), ("-0", 0), ("-0m", 0), ("-0.0", 0)])
def test_quantities_the_api_server_reads_as_it_does(value: str, amount: int) -> None:
    """Quantity.UnmarshalJSON trims surrounding whitespace before parsing (apimachinery's
    TestJSONWhitespace), and -0 is zero, which the nonnegative check accepts: a manifest
    holding them is admitted, and gangplan refused it (exit 2)."""
    assert to_amount("cpu", value) == amount


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("-1", "negative"),
        ("-100m", "negative"),
        (-2, "negative"),
        (-0.5, "negative"),
        ("1 Gi", "not a quantity"),
        ("", "not a quantity"),
        ("1.2.3", "not a quantity"),
        ("Ki", "not a quantity"),
        ("m", "not a quantity"),
        ("1K", "not a quantity"),
        ("1gi", "not a quantity"),
        ("1e", "not a quantity"),
        ("1e3m", "not a quantity"),
        ("1Gi3", "not a quantity"),
        ("0x10", "not a quantity"),
        ("1_000", "not a quantity"),
        ("one", "not a quantity"),
        ("1e100", "exponent out of range"),
        ("1e-100000000", "exponent out of range"),  # the guard's other half (review 19 Q F5)
        (True, "expected a quantity"),
        (False, "expected a quantity"),
        (None, "expected a quantity"),
        ([1], "expected a quantity"),
        ({"a": 1}, "expected a quantity"),
        (float("inf"), "finite"),
        (float("nan"), "finite"),
    ],
)
def test_refused(value: object, message: str) -> None:
    with pytest.raises(QuantityError, match=message):
        to_amount("cpu", value)


@pytest.mark.parametrize("resource,value", [
    ("nvidia.com/gpu", "500m"), ("nvidia.com/gpu", 0.5), ("rdma/hca_shared_devices_a", "1.5"), ("pods", "110.5"),
])
def test_extended_resources_and_pods_are_whole_numbers(resource: str, value: object) -> None:
    """The API server refuses 500m of a GPU; rounding it up to one would plan a pod no cluster has."""
    with pytest.raises(QuantityError, match=f"{resource} must be a whole number"):
        to_amount(resource, value)


@pytest.mark.parametrize("resource,value,amount", [
    ("nvidia.com/gpu", "1000m", 1), ("hugepages-2Mi", "1.5", 2), ("example.kubernetes.io/widget", "0.5", 1),
])
def test_whole_or_native_amounts_are_not_refused(resource: str, value: object, amount: int) -> None:
    assert to_amount(resource, value) == amount


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("memory", 3 * GI, "3Gi"),
        ("memory", 1536 * MI, "1536Mi"),
        ("memory", 1000, "1000"),
        ("nvidia.com/gpu", 8, "8"),
        # Kubernetes' canonical forms (apimachinery's TestQuantityString): a whole unit is 1Gi,
        # not 1024Mi, and zero is 0, with no suffix ...
        ("memory", GI, "1Gi"),
        ("memory", KI, "1Ki"),
        ("memory", 0, "0"),
        ("cpu", 0, "0"),
        # ... and every resource counted in bytes is written in binary units, not memory alone
        ("ephemeral-storage", 10 * GI, "10Gi"),
        ("hugepages-2Mi", 4 * MI, "4Mi"),
    ],
)
def test_format_round_trips(resource: str, amount: int, text: str) -> None:
    assert format_amount(resource, amount) == text
    assert to_amount(resource, text) == amount


@pytest.mark.parametrize("resource,first,second,expected", [
    ("memory", 3_000_000_000, 2840 * 2**20, ("2861Mi", "2840Mi")),  # both 2.8Gi
    ("cpu", 10_020, 10_000, ("10020m", "10000m")),  # "10.0" and "10" read alike
    ("memory", 2**30 + 1, 2**30, ("1073741825", "1073741824")),
    ("cpu", 300_000, 282_600, ("300", "282.6")),  # apart already: as describe_amount gives them
    ("memory", 23 * 2**40 // 10, 17 * 2**40 // 10, ("2.3Ti", "1.7Ti")),
    ("nvidia.com/gpu", 40, 20, ("40", "20")),
    # describe_amount gives 3.0Gi and 3Gi, one decimal of Gi 3Gi twice: one of Mi tells them apart
    ("memory", 3 * GI + 512 * KI, 3 * GI, ("3072.5Mi", "3072Mi")),
    # 1.15e17 cores, past a float's precision: the first reads 115292150460684704.0 (the nearest
    # float), above the second's exact 115292150460684701 though it is less, so both are exact
    ("cpu", 115_292_150_460_684_699_976, 115_292_150_460_684_701_000,
     ("115292150460684699976m", "115292150460684701000m")),
])
def test_describe_apart_never_shows_two_different_amounts_alike(
    resource: str, first: int, second: int, expected: tuple[str, str]
) -> None:
    """'insufficient memory (quorum needs 2.8Gi, 2.8Gi free)' told an operator nothing (user review C)."""
    assert describe_apart(resource, first, second) == expected
    shown = [parse_quantity(text) for text in expected]
    assert (shown[0] > shown[1]) == (first > second)


@pytest.mark.parametrize(("resource", "amount", "text"), [
    ("cpu", 0, "0"),
    ("cpu", 999, "999m"),
    ("cpu", 1000, "1"),
    ("cpu", 1500, "1.5"),
    ("memory", 1023, "1023"),
    ("memory", KI, "1Ki"),
    ("memory", GI, "1Gi"),
    ("memory", 3 * GI // 2, "1.5Gi"),
    ("memory", 25 * GI // 2, "12.5Gi"),
])
def test_describe_amount_is_exact_where_one_decimal_can_be(resource: str, amount: int, text: str) -> None:
    """A figure in a message is a quantity as a user writes one (0, not 0m; 1 cpu, not 1000m; 1Gi,
    not 1024Mi) and is exact whenever one decimal of its unit is enough (1.5Gi, not 2Gi)."""
    assert describe_amount(resource, amount) == text
    assert to_amount(resource, text) == amount


@pytest.mark.parametrize(("before", "after", "total", "expected"), [
    (400, 400, 1000, ("40%", "40%")),  # unchanged: whole percent, not the raw figures
    (1, 3, 100_000, ("0.001%", "0.003%")),  # 0% 0.0% and 0.00% hide the change; three decimals show it
    (1, 2, 10**9, ("1/1000000000", "2/1000000000")),  # 0.000% both: the raw figures
    (0, 5, 0, ("0/0", "5/0")),  # no total to take a percentage of
])
def test_percent_apart_adds_digits_only_where_rounding_would_hide_a_change(
    before: int, after: int, total: int, expected: tuple[str, str]
) -> None:
    """"0% -> 0%" for 124 -> 204 of 253000 tells a reader nothing; an unchanged figure stays whole."""
    assert percent_apart(before, after, total) == expected


def test_the_size_limits_are_where_their_messages_say() -> None:
    """The errors promise "at most 64" digits and an exponent "at most ±64": the limits are taken."""
    assert to_amount("memory", "9" * 64) == int("9" * 64)
    assert to_amount("memory", "1e64") == 10**64
    assert to_amount("cpu", "1e-64") == 1
    with pytest.raises(QuantityError, match="too many digits"):
        to_amount("memory", "9" * 65)
    with pytest.raises(QuantityError, match="exponent out of range"):
        to_amount("memory", "1e65")
