"""The loader's YAML fast path (objects built from libyaml's events) against PyYAML's own
composer and constructor with the same resolvers: the same documents, and on bad input the
same error after the same documents, on YAML written the way kubectl writes it and on YAML
written every other way hypothesis can think of."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterator

import yaml
from hypothesis import given, settings, strategies as st

from gangplan.loader import _Loader, _load_all

Outcome = tuple[list[str], str | None]
SNAPSHOTS = sorted((Path(__file__).parent.parent / "snapshots").glob("*.yaml"))
# The start of a kubectl dump as it prints it: a List and its first Node.
KUBECTL = "".join(SNAPSHOTS[-1].read_text().splitlines(keepends=True)[:60])


def outcome(documents: Iterator[Any]) -> Outcome:
    """The documents read before the first error (as text, so that NaN equals NaN), and that error."""
    read: list[str] = []
    try:
        for document in documents:
            read.append(_canonical(document))
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        return read, f"{type(exc).__name__}: {exc}"
    return read, None


def _canonical(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_canonical(k)}: {_canonical(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_canonical(v) for v in value) + "]"
    return f"{type(value).__name__}:{value!r}"


def same(text: str) -> Outcome:
    fast = outcome(_load_all(text))
    assert fast == outcome(yaml.load_all(text, Loader=_Loader))
    return fast


def test_the_shipped_kubectl_dumps_are_read_as_the_composer_reads_them() -> None:
    assert [p.name for p in SNAPSHOTS] == ["gpu-cluster.yaml", "small.yaml"]
    for path in SNAPSHOTS:
        documents, problem = same(path.read_text())
        assert problem is None and len(documents) == 1 and "'Node'" in documents[0]


def test_what_the_fast_path_hands_back_and_what_it_reads_itself() -> None:
    # Plain scalars resolve as gangplan's loader resolves them: no timestamps, no base 60.
    assert list(_load_all("a: 1:30\nb: 2024-01-02T03:04:05Z\nc: 0x10\nd: yes\ne: ~\nf: '1'\n")) == [
        {"a": "1:30", "b": "2024-01-02T03:04:05Z", "c": 16, "d": True, "e": None, "f": "1"}
    ]
    # A tag, an alias, a non-string key or a key given twice: the composer decides.
    assert list(_load_all("a: &x [1]\nb: *x\n")) == [{"a": [1], "b": [1]}]
    assert same("--- [1]\n--- [*x]\n")[1].startswith("ComposerError: found undefined alias")  # type: ignore[union-attr]
    assert list(_load_all("1: a\ntrue: b\n")) == [{1: "a", True: "b"}]
    assert list(_load_all("--- a\n--- {<<: {k: 1}, j: 2}\n")) == ["a", {"k": 1, "j": 2}]
    assert outcome(_load_all("--- 1\n--- {a: 1, a: 2}\n"))[1].startswith("ConstructorError")  # type: ignore[union-attr]
    # The composer reads a whole document before constructing any of it: a syntax error comes
    # before a refused scalar earlier in the same document.
    assert same("--- 1\n--- {a: " + "9" * 5000 + "}\n")[1].startswith("ConstructorError")  # type: ignore[union-attr]
    assert same("--- 1\n--- {a: " + "9" * 5000 + ", b: [}\n")[1].startswith("ParserError")  # type: ignore[union-attr]


# Scalars written plain, so that the resolvers decide what they are.
PLAIN = [
    "a", "web-0", "nvidia.com/gpu", "100m", "1Gi", "0", "1", "-1", "017", "0o17", "0x1F", "0b101",
    "1_000", "1:30", "3.5", "1e5", "1.0e+5", ".inf", "-.inf", ".nan", "true", "false", "yes", "no",
    "on", "off", "y", "n", "null", "~", "=", "<<", "2001-12-14", "2001-12-14T21:59:43.10-05:00",
    "9" * 5000, "a b", "é", "",
]
QUOTED = ["'1'", '"true"', "'a: b'", '"\\u00e9"', '"\\ud800"', "'it''s'", '""']
TAGGED = ["!!str 1", "!!int '7'", "!!float 1", "!!binary aGk=", "!!timestamp 2001-12-14", "!x y", "!!set {a}"]


@st.composite
def yaml_text(draw: st.DrawFn, depth: int = 0) -> str:
    """A value written by hand: block or flow, with plain, quoted and tagged scalars, anchors
    and aliases, duplicate and non-string keys."""
    kind = draw(st.sampled_from(["scalar"] * 3 + ["map", "seq", "flow"] if depth < 4 else ["scalar"]))
    indent = "  " * depth
    if kind == "scalar":
        text = draw(st.sampled_from(PLAIN * 4 + QUOTED + TAGGED + ["*a"] * 8))
        return text if draw(st.integers(0, 9)) else "&a " + text
    keys = st.sampled_from(["a", "b", "c", "name", "1", "true", "null", "<<", "'a'", "? k"])
    items = draw(st.lists(st.tuples(keys, st.deferred(lambda: yaml_text(depth + 1))), max_size=4))
    if kind == "flow":
        body = ", ".join(f"{k}: {v}" if "\n" not in v and not v.startswith("?") else "x" for k, v in items)
        return "{" + body + "}" if draw(st.booleans()) else "[" + body + "]"
    lines = []
    for key, value in items:
        head = f"{indent}{key}:" if kind == "map" else f"{indent}-"
        lines.append(f"{head}\n{value}" if value.startswith("\n") else f"{head} {value}")
    return "\n" + "\n".join(lines) if lines else ("{}" if kind == "map" else "[]")


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.lists(yaml_text(), min_size=1, max_size=4))
def test_hand_written_yaml_reads_the_same_both_ways(documents: list[str]) -> None:
    same("".join(f"---{'' if d.startswith(chr(10)) else ' '}{d}\n" for d in documents))


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, len(KUBECTL) - 1), st.sampled_from(list(":-\n #&*!{}[]'\"\t|>?,%@`x1")), st.integers(0, 2)), min_size=1, max_size=4))
def test_a_damaged_kubectl_dump_fails_or_reads_the_same_both_ways(edits: list[tuple[int, str, int]]) -> None:
    text = KUBECTL + "---\n" + KUBECTL
    for at, char, how in edits:
        text = text[:at] + char + text[at + (how == 1):] if how < 2 else text[:at] + text[at + 1:]
    same(text)


def test_deep_nesting_is_the_composers_to_refuse() -> None:
    for depth in (99, 100, 101, 400, 1200):
        same("a:\n" + "".join("  " * i + "- \n" for i in range(depth)) + "  " * depth + "x\n")
        same("[" * depth + "]" * depth)
