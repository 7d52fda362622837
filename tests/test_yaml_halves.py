"""A large kubectl List dump is read in two halves at once, the second in a forked child
(loader._halves). Wherever the split falls and whatever the text holds, the answer is the
text read in one piece (PyYAML's composer, here), or None, and then the text is read in one
piece: a split must never turn bad YAML into objects, or read good YAML differently."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from gangplan import loader
from gangplan.errors import InputError
from gangplan.generate import generate
from gangplan.loader import _can_fork, _halves, _Loader, load_snapshot
from test_yaml_events import _canonical

SNAPSHOTS = Path(__file__).parent.parent / "snapshots"
SMALL = (SNAPSHOTS / "small.yaml").read_text()


def _first_items(text: str, count: int) -> str:
    """A kubectl dump cut down to its first ``count`` items, still a List."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith("- ")]
    tail = [i for i, line in enumerate(lines) if line.startswith("kind: List")][0]
    return "".join(lines[: starts[count]] + lines[tail:])


KUBECTL = _first_items(SMALL, 6)


def splits(text: str) -> list[int]:
    return [i + 1 for i in range(len(text)) if text.startswith("\n- ", i)]


def whole(text: str) -> list[Any] | None:
    try:
        return list(yaml.load_all(text, Loader=_Loader))
    except (yaml.YAMLError, ValueError, RecursionError):
        return None


def halves(text: str, at: int) -> Any | None:
    """``_halves``, held to the whole text's reading: the same document, or None."""
    got = _halves(text, at)
    if got is not None:
        expected = whole(text)
        assert expected is not None and len(expected) == 1, "a split read text that is not one good document"
        assert _canonical(got) == _canonical(expected[0])
    return got


def test_every_item_of_a_kubectl_dump_is_a_place_to_split() -> None:
    places = splits(KUBECTL)
    assert len(places) == 6
    # The first `- ` opens the sequence: the first half would hold `items:` and nothing.
    assert halves(KUBECTL, places[0]) is None
    for at in places[1:]:
        assert halves(KUBECTL, at) is not None


@pytest.mark.parametrize(
    ("text", "readable"),
    [
        ("items:\n- a\n- b\nother:\n- c\n- d\n", [False, True, False, False]),  # only items' own
        ("kind: List\nitems:\n- a\n- b\nkind: List\n", [False, False]),  # a key given twice
        ("items:\n- a\n...\n- b\n", [False, False]),  # a document's end, then no document
        ("items:\n- a\n---\nitems:\n- b\n", [False, False]),  # two documents
        ('a: "x\nitems:\n- y"\nitems:\n  - z\n- w\n', [False, False]),  # items indented; a bad `- w`
        ('items:\n- "a\n- b"\n- c\n', [False, False, True]),  # a quoted string over lines
        ("items:\n- [a,\n  b]\n- c\n", [False, True]),  # a flow sequence over lines
        ("items:\n- [a,\n- b]\n- c\n", [False, False, False]),  # a `- ` in it: bad YAML
        ("items:\n- |\n  x\n- b\n", [False, True]),  # a block scalar ends at column 0
        ("items:\n- a\n  b\n- c\n", [False, True]),  # so does a plain one
        ("items:\n- &x a\n- *x\n", [False, False]),  # an alias of the first half's anchor
        ("- a\n- b\n", [False]),  # a sequence, not a List
        ("items: # items\n- a\n- b # c\n- c\nkind: List\n", [False, True, True]),
    ],
)
def test_a_split_reads_the_whole_or_nothing(text: str, readable: list[bool]) -> None:
    assert [halves(text, at) is not None for at in splits(text)] == readable


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(KUBECTL) - 1),
            st.sampled_from(list(":-\n #&*!{}[]'\"\t|>?,%@`x1.")),
            st.integers(0, 2),
        ),
        min_size=1,
        max_size=4,
    ),
    st.data(),
)
def test_a_damaged_dump_split_anywhere_reads_as_a_whole_or_not_at_all(edits: list[tuple[int, str, int]], data: st.DataObject) -> None:
    text = KUBECTL
    for at, char, how in edits:
        text = text[:at] + char + text[at + (how == 1) :] if how < 2 else text[:at] + text[at + 1 :]
    if places := splits(text):
        halves(text, data.draw(st.sampled_from(places)))


def test_a_large_dump_is_read_in_halves_as_it_is_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(generate(shape=(1, 2, 4, 8), groups=20, seed=3), sort_keys=False))
    monkeypatch.setattr(loader, "PARALLEL_FROM", 10**12)
    read_whole = load_snapshot([str(path)])
    spans_whole = loader._read_spans[str(path)]
    joined: list[bool] = []
    real = loader._halves

    def recorded(text: str, at: int, spans: Any = None) -> Any | None:
        got = real(text, at, spans)
        joined.append(got is not None)
        return got

    monkeypatch.setattr(loader, "_halves", recorded)
    monkeypatch.setattr(loader, "_can_fork", lambda: True)
    monkeypatch.setattr(loader, "PARALLEL_FROM", 0)
    assert load_snapshot([str(path)]) == read_whole
    assert joined == [True]
    assert loader._read_spans[str(path)] == spans_whole  # where each item is, for locate
    assert len(spans_whole[1][0]) == loader._ITEM * len(yaml.safe_load(path.read_text())["items"])
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # the child was waited for


@pytest.mark.parametrize("where", [0.25, 0.9])
def test_bad_yaml_in_either_half_is_the_same_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: float) -> None:
    text = SMALL
    at = text.index("\n    name: ", int(len(text) * where)) + 1
    path = tmp_path / "bad.yaml"
    path.write_text(text[:at] + "    name: [x\n" + text[at:])
    monkeypatch.setattr(loader, "_can_fork", lambda: True)
    errors = []
    for threshold in (10**12, 0):
        monkeypatch.setattr(loader, "PARALLEL_FROM", threshold)
        with pytest.raises(InputError) as raised:
            load_snapshot([str(path)])
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and f"{path}:" in errors[0]


def test_no_fork_while_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert _can_fork()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not _can_fork()
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert not _can_fork()  # one core: nothing to gain


def test_the_shipped_gpu_cluster_is_read_in_halves_as_it_is_whole() -> None:
    """The README's larger example is over the threshold: on two cores it takes this path."""
    text = (SNAPSHOTS / "gpu-cluster.yaml").read_text()
    assert len(text) >= loader.PARALLEL_FROM
    at = text.find("\n- ", loader._middle(text)) + 1
    assert _halves(text, at) == list(loader._from_events(text))[0]
