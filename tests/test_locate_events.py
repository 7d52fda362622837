"""``locate`` from parser events against ``locate`` from composed nodes: the same line and
column for every path into a file, or no answer where only the composer can tell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from gangplan import loader
from gangplan.errors import Position
from gangplan.model import Origin

SNAPSHOT = Path(__file__).parent.parent / "snapshots" / "small.yaml"

TEXTS = {
    "plain.yaml": "a:\n  b: [1, {c: x, d: ''}]\n  e:\n  f: {}\nlist:\n- x\n- {k: v, \"q\": 'w'}\n- - 1\n  - 2\n---\nsecond: 2\n",
    "anchors.yaml": "base: &b {k: 1, m: [1, 2]}\nuse: *b\nmerged:\n  <<: *b\n  own: 2\nname: &n k\nkeyed: {*n : 5}\n",
    "dups.json": '{"a": {"b": 1}, "c": [1, 2], "a": {"b": 2, "z": [3]}}',
    "stream.json": '{"a": 1}\n{"a": 2, "b": [1]}\n',
    "broken.yaml": "a: {b: 1}\n---\nc: [\n",
}


def walked(file: str, document: int, steps: tuple) -> yaml.Mark | None:
    """The walk's answer for one place."""
    marks = loader._walked(file, {(document, steps)})
    return None if marks is None else loader._nearest(marks, document, steps)


def composed(origin: Origin) -> Position:
    loader._walks[origin.file] = loader._WALKS_PER_FILE
    return loader.locate(origin)


@pytest.fixture(autouse=True)
def _files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(loader, "_read_spans", {})
    for name, text in TEXTS.items():
        Path(name).write_text(text)
    Path("small.yaml").write_text(SNAPSHOT.read_text())


def paths(value: object) -> st.SearchStrategy:
    """Paths into ``value``: mostly real steps, sometimes one that is not there."""
    @st.composite
    def walk(draw: st.DrawFn) -> tuple:
        node, steps = value, []
        for _ in range(draw(st.integers(0, 8))):
            if isinstance(node, dict) and node and draw(st.integers(0, 5)):
                step = draw(st.sampled_from(sorted(node, key=str)))
            elif isinstance(node, list) and node and draw(st.integers(0, 5)):
                step = draw(st.integers(0, len(node) - 1))
            else:
                step = draw(st.sampled_from(["nope", 0, 7, -1, "a"]))
            steps.append(step)
            node = node.get(step) if isinstance(node, dict) else node[step] if isinstance(node, list) and isinstance(step, int) and -1 < step < len(node) else None
        return tuple(steps)

    return walk()


SMALL = yaml.safe_load(SNAPSHOT.read_text())


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(paths(SMALL))
def test_a_kubectl_dump_is_walked_to_where_the_composer_points(steps: tuple) -> None:
    mark = walked("small.yaml", 0, steps)
    assert mark is not None  # nothing in a kubectl dump needs the composer
    assert Position("small.yaml", mark.line + 1, mark.column + 1) == composed(Origin("small.yaml", 0, steps))


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(TEXTS)), st.integers(0, 2), st.data())
def test_odd_files_are_walked_the_same_or_left_to_the_composer(name: str, document: int, data: st.DataObject) -> None:
    text = TEXTS[name]
    try:
        values = list(yaml.load_all(text, Loader=loader._Loader))
    except yaml.YAMLError:
        values = [json.loads(line) for line in text.splitlines()] if name.endswith(".json") else [{}]
    steps = data.draw(paths(values[document] if document < len(values) else {}))
    mark = walked(name, document, steps)
    expected = composed(Origin(name, document, steps))
    if mark is not None:
        assert Position(name, mark.line + 1, mark.column + 1) == expected


def test_what_the_walk_leaves_to_the_composer() -> None:
    assert walked("anchors.yaml", 0, ("use", "k")) is None  # an alias on the way
    assert walked("anchors.yaml", 0, ("merged", "k")) is None  # a merge key
    assert walked("anchors.yaml", 0, ("keyed", "k")) is None  # an alias for a key
    assert composed(Origin("anchors.yaml", 0, ("keyed", "k"))) == Position("anchors.yaml", 7, 14)  # the 5: the alias read as "k"
    assert walked("dups.json", 0, ("a", "b")) is None  # JSON keeps the last "a"
    assert composed(Origin("dups.json", 0, ("a", "b"))) == Position("dups.json", 1, 41)  # the second "b": 2
    assert walked("stream.json", 1, ("b", 0)) is None  # two JSON values: not one YAML stream
    assert walked("broken.yaml", 0, ("a", "b")) is None  # the composer cannot read it either
    assert composed(Origin("broken.yaml", 0, ("a", "b"))) == Position("broken.yaml")
    # And what it answers (0-based): an empty value's key, a quoted empty value itself, the
    # nearest node that is there, in the document asked for.
    def at(document: int, steps: tuple) -> tuple[int, int]:
        mark = walked("plain.yaml", document, steps)
        assert mark is not None
        return mark.line, mark.column

    assert at(0, ("a", "e")) == (2, 2)
    assert at(0, ("a", "b", 1, "d")) == (1, 19)
    assert at(0, ("a", "b", 5)) == at(0, ("a", "b")) == (1, 5)
    assert at(1, ("second",)) == (10, 8)


def test_locate_walks_the_first_few_places_then_composes_the_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    composing: list[str] = []
    real = loader._composed

    def noted(file: str) -> list[Any] | None:
        composing.append(file)
        return real(file)

    monkeypatch.setattr(loader, "_composed", noted)
    loader._walks.pop("small.yaml", None)
    places = [loader.locate(Origin("small.yaml", 0, ("items", i, "metadata", "name"))) for i in range(5)]
    assert composing == ["small.yaml", "small.yaml"]  # the fourth and fifth, from one composition (cached)
    assert places == [composed(Origin("small.yaml", 0, ("items", i, "metadata", "name"))) for i in range(5)]


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(paths(SMALL), min_size=1, max_size=12), st.data())
def test_many_places_are_found_in_one_walk(many: list[tuple], data: st.DataObject) -> None:
    """Places sharing prefixes, repeated, or in documents of other files, found together
    without composing any file that one walk can read."""
    places = [(Origin("small.yaml", 0, steps[:cut]), steps[cut:]) for steps in many for cut in [data.draw(st.integers(0, len(steps)))]]
    places += [(Origin("plain.yaml", 1, ()), ("second",)), (Origin("plain.yaml", 0, ("list",)), (2, 1))]
    expected = [composed(Origin(origin.file, origin.document, origin.path + more)) for origin, more in places]
    composing: list[str] = []
    real = loader._composed

    def noted(file: str) -> list[Any] | None:
        composing.append(file)
        return real(file)

    with pytest.MonkeyPatch.context() as patched:  # not the fixture: hypothesis runs this many times
        patched.setattr(loader, "_composed", noted)
        assert loader.locate_all(places) == expected
    assert composing == []


def test_files_one_walk_cannot_read_are_composed_for_every_place() -> None:
    places = [
        (Origin("anchors.yaml", 0, ()), ("merged", "k")),
        (Origin("anchors.yaml", 0, ()), ("name",)),
        (Origin("dups.json", 0, ()), ("a", "b")),
        (Origin("dups.json", 0, ()), ("c", 1)),
        (Origin("stream.json", 1, ()), ("b", 0)),
        (Origin("plain.yaml", 2, ()), ()),  # no third document
        (Origin("plain.yaml", 0, ()), ("a", "b", 1, "c")),
    ]
    assert loader._walked("anchors.yaml", {(0, ("merged", "k")), (0, ("name",))}) is None
    assert loader._walked("dups.json", {(0, ("c", 1))}) is not None  # the twice-given key is off the way
    assert loader._walked("dups.json", {(0, ("a", "b")), (0, ("c", 1))}) is None
    assert loader.locate_all(places) == [composed(Origin(o.file, o.document, o.path + more)) for o, more in places]
    assert loader.locate_all(places)[2] == Position("dups.json", 1, 41)  # the second "b", as JSON reads it


# A List whose items are written every way YAML allows one to be: block scalars holding a
# line that starts with "- ", a quoted scalar over lines, nested and flow items, an item that
# starts on the line after its dash, comments between items, a plain scalar over lines.
ODD_LIST = """apiVersion: v1
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: "x"}
  data:
    block: |
      line one
      - not an item
    folded: >-
      folded
      text
    quoted: "multi
      line - here"
- - nested
  - [1, {k: v}]
-
  next: line
  empty:
  deep: {a: [1, 2, {b: ''}]}
- "scalar item"
- {flow: item,
   spans: lines}
# a comment at column 0
- plain scalar
  continued
-   spaced: out
    more: 1
- last:
  - item
kind: List
metadata:
  resourceVersion: ""
"""
ODD_VALUE = yaml.safe_load(ODD_LIST)
ODD_FILES = {
    "odd.yaml": ODD_LIST,
    "indented.yaml": "".join(
        f"  {line}" if 2 < number < ODD_LIST.count("\n") - 2 else line
        for number, line in enumerate(ODD_LIST.splitlines(keepends=True), 1)
    ),
    "odd.json": json.dumps(ODD_VALUE),  # one line
    "odd-indented.json": json.dumps(ODD_VALUE, indent=4),
    "dups.json": '{"items": [{"a": 1}], "kind": "List", "items": [{"b": 1}, {"c": [1, {"d": 2}]}]}',
}


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(ODD_FILES)), st.data())
def test_a_place_in_a_list_item_is_found_from_that_items_text(name: str, data: st.DataObject) -> None:
    """Where each item is written comes from loading (YAML's events) or from JSON's decoder;
    a place inside one is read from that item's text alone, no walk of the whole file, and
    lands where the composer points."""
    Path(name).write_text(ODD_FILES[name])
    assert loader.read_documents(name)
    items = json.loads(ODD_FILES[name])["items"] if name.endswith(".json") else ODD_VALUE["items"]
    index = data.draw(st.integers(0, len(items) - 1))
    steps = ("items", index, *data.draw(paths(items[index])))
    walked: list[str] = []
    real = loader._walk

    def noted(text: str, wanted: set[tuple[int, tuple[str | int, ...]]]) -> loader._Marks | None:
        walked.append(text)
        return real(text, wanted)

    with pytest.MonkeyPatch.context() as patched:  # not the fixture: hypothesis runs this many times
        patched.setattr(loader, "_walk", noted)
        found = loader._in_items(name, [(0, steps)])
    assert found == [composed(Origin(name, 0, steps))]
    assert len(walked) == 1 and "resourceVersion" not in walked[0]  # the item's text, not the List's


def test_a_file_of_one_byte_characters_is_not_read_again_only_its_items(monkeypatch: pytest.MonkeyPatch) -> None:
    places: list[tuple[int, tuple[str | int, ...]]] = [(0, ("items", index)) for index in range(8)] + [(0, ("items", 0, "data", "quoted")), (0, ("items", 7, "last", 0))]
    for name, text, read_again in [("ascii.yaml", ODD_LIST, False), ("accented.yaml", ODD_LIST.replace("line one", "líne one"), True)]:
        Path(name).write_text(text, encoding="utf-8")
        loader.read_documents(name)
        reads: list[str] = []
        real = loader._text

        def noted(file: str) -> str | None:
            reads.append(file)
            return real(file)

        with monkeypatch.context() as patched:
            patched.setattr(loader, "_text", noted)
            found = loader._in_items(name, places)
        assert found == [composed(Origin(name, 0, steps)) for _, steps in places]
        assert reads == ([name] if read_again else [])


def test_item_places_from_a_file_changed_since_it_was_read_are_found_the_old_way() -> None:
    Path("odd.yaml").write_text(ODD_LIST)
    loader.read_documents("odd.yaml")
    Path("odd.yaml").write_text("# one more line\n" + ODD_LIST)
    steps = ("items", 2, "next")
    assert loader._in_items("odd.yaml", [(0, steps)]) == [None]
    assert loader.locate(Origin("odd.yaml", 0, steps)) == Position("odd.yaml", 19, 9)


_ODD_TEXT = st.text(alphabet=st.sampled_from(list("ab -:#'\"{}[],\n é\t&*!|>%@`?")), max_size=12)
_ITEM_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | _ODD_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ODD_TEXT, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(
    st.lists(_ITEM_VALUES, min_size=1, max_size=4),
    st.sampled_from(["block", "block-crlf", "mixed", "flow", "json", "json-indented", "json-second-line"]),
    st.sampled_from([12, 80]),
    st.booleans(),
    st.data(),
)
def test_any_items_written_any_way_are_found_where_the_composer_points(
    items: list, style: str, width: int, items_first: bool, data: st.DataObject
) -> None:
    """Items of every shape, written by PyYAML's emitter in each style (folded and quoted
    scalars over lines at a narrow width) or by ``json.dumps``: a place in each item, all
    asked for at once, is found from its item's text where the composer points, and always
    when the items are a block sequence or the file is one JSON object."""
    document: dict[str, object] = {"items": items, "apiVersion": "v1"} if items_first else {"apiVersion": "v1", "items": items}
    document.update(kind="List", metadata={"resourceVersion": ""})
    if style.startswith("json"):
        name = "list.json"
        text = json.dumps(document, indent=2 if style == "json-indented" else None, ensure_ascii=width == 80)
        text = "{\n" + text[1:] if style == "json-second-line" else text
    else:
        name = "list.yaml"
        flow = {"block": False, "block-crlf": False, "mixed": None, "flow": True}[style]
        text = yaml.safe_dump(document, default_flow_style=flow, width=width, allow_unicode=True, sort_keys=False)
        text = text.replace("\n", "\r\n") if style == "block-crlf" else text
    Path(name).write_bytes(text.encode())
    loader.read_documents(name)
    if loader._composed(name) is None:
        return  # the composer cannot read this JSON as YAML; nothing to hold it to
    places = [(0, ("items", index, *data.draw(paths(item)))) for index, item in enumerate(items)]
    for (_, steps), found in zip(places, loader._in_items(name, places)):  # all at once
        if found is None:
            assert style in ("mixed", "flow") and not text.startswith("items:\n-", text.index("items:"))
        else:
            assert found == composed(Origin(name, 0, steps))
