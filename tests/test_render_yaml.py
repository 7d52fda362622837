"""``render.to_yaml``'s direct writer against PyYAML's emitter: byte for byte on every value,
whether the writer takes it or hands it to PyYAML, with long strings folded at every depth."""

from __future__ import annotations

import yaml
from hypothesis import given, settings, strategies as st

from gangplan.render import _Dumper, _block_yaml, to_yaml


def pyyaml(data: object) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False)


WORDS = ["a", "web-0", "nvidia.com/gpu", "it's", "a: b", "#x", "-", "- x", "? q", "y", "no", "1e3", "0o17",
         "1_0", "~", "null", "<<", "2024-06-13T08:03:11Z", "100m", "''", '"', "é", "日本", "\U0001f600", "{a}",
         "[b]", "&x", "*x", "!t", "%p", "@", "`", "|", ">", "x\\y", "1.5", "true", "=", ",", "", "  ", " lead",
         "trail ", "x\ty"]
# Strings of words and spaces, up to three times a line's width: folded wherever they stand.
TEXT = st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join) | st.sampled_from(WORDS) | st.text(max_size=30)
KEYS = st.sampled_from(["apiVersion", "kind", "metadata", "name", "a b", "it's", "y", "1", "", "k" * 99, "k" * 130]) | TEXT
SCALARS = TEXT | st.integers(-(2**70), 2**70) | st.booleans() | st.none()


def trees(scalars: st.SearchStrategy, keys: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
        max_leaves=30,
    )


@st.composite
def sharing(draw: st.DrawFn, data: st.SearchStrategy) -> object:
    """A tree, and sometimes one of its lists or mappings (an empty one too) put in twice."""
    tree = draw(data)
    if draw(st.booleans()):
        shared = draw(st.sampled_from([{}, [], {"a": 1}]))
        tree = {"first": shared, "then": [tree, shared]}
    return tree


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(sharing(trees(SCALARS | st.floats(allow_nan=False), KEYS)))
def test_to_yaml_is_pyyaml_byte_for_byte(data: object) -> None:
    assert to_yaml(data) == pyyaml(data)


# What gangplan writes: names, quantities, messages; every one the direct writer's to write.
SIMPLE_TEXT = st.lists(st.sampled_from(["a", "web-0", "it's", "nvidia.com/gpu", "(3)", "é", "1e3", "y", "[b]"]), min_size=1, max_size=40).map(" ".join)
SIMPLE = trees(SIMPLE_TEXT | st.integers(-(2**70), 2**70) | st.booleans() | st.none(), SIMPLE_TEXT.filter(lambda k: len(k) < 90))


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(SIMPLE_TEXT.filter(lambda k: len(k) < 90), SIMPLE, min_size=1, max_size=4))
def test_what_gangplan_writes_takes_the_direct_way_and_reads_back(data: dict) -> None:
    written = _block_yaml(data)
    assert written is not None and written == pyyaml(data)
    assert yaml.safe_load(written) == data


def test_the_direct_writer_hands_pyyaml_what_it_does_not_write_itself() -> None:
    shared: dict[str, int] = {"a": 1}
    empty: dict[str, int] = {}
    data: object
    for data in ({"x": 1.5}, {"x": "line\nbreak"}, {"x": "\x07"}, {1: "a"}, {"x": shared, "y": shared}, {"x": empty, "y": [empty]},
                 {"k" * 100: 1}, {"": 1}, {}, [], "text"):
        assert _block_yaml(data) is None
        assert to_yaml(data) == pyyaml(data)
    # Single quotes never fold at their first or last character: a trailing space past the
    # width, a leading one after a long key.
    for data in ({"m": "it's " * 30}, {"k" * 85: " lead word"}, {"m": ["x" * 90 + " "]}):
        assert _block_yaml(data) == pyyaml(data)
    # Folding follows the column: the same message folds differently two levels down.
    message = " ".join(["lost to higher-priority groups"] * 5)
    assert _block_yaml({"m": message}) == pyyaml({"m": message}) != pyyaml({"a": {"b": {"m": message}}})[len("a:\n  b:\n    "):]


# Names, numbers, dates and words YAML resolves: the strings the writer styles without PyYAML.
NAMELIKE = st.text("0123456789_./-abexyonulTFNIY", min_size=1, max_size=12) | st.sampled_from(
    ["1e3", "1_0", "0x_", "0x1F", "0o17", "0b101", "1.5", "1.", "12.3.4", "2024-06-13", "2024-06-13T08:03:11Z",
     "yes", "on", "Off", "null", "NULL", "y", "n", "nan", ".inf", "_", "_1", "1_000", "190_0", "web-0", "a/b.c-d",
     "-", "--", "---", "...", "-a", "-1", ".x", "/x"]
)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(NAMELIKE)
def test_strings_styled_without_pyyaml_are_written_as_pyyaml_writes_them(text: str) -> None:
    assert to_yaml({"k": text, text: [text]}) == pyyaml({"k": text, text: [text]})


# YAML 1.1 line breaks beyond \n and \r: PyYAML wrote them raw in single quotes, where readers fold them.
BREAKS = st.lists(st.sampled_from(["a", " ", "\x85", "\u2028", "\u2029", "b c"]), min_size=1, max_size=12).map("".join)


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(trees(TEXT | BREAKS, KEYS | BREAKS))
def test_every_string_reads_back_as_written(data: object) -> None:
    """`-o yaml` and `-o json` must hold the same objects: an env value "a\\x85b" came back
    from the YAML as "a b" (a review's case)."""
    assert yaml.safe_load(to_yaml(data)) == data
