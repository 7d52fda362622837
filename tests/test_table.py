"""The plan table as text: without colour it is written column by column, not laid out by
rich (5 s for 5,000 groups), and must be the text rich prints for the same rows, so that a
script reading it sees no change whatever the route."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.table import Table

from gangplan.cli import _columns, _rendered

# What a cell can hold: names, numbers, quantities, the table's own marks, and wide characters.
_CELL = st.lists(st.sampled_from([*"abz09-./: ()%,×·…名", "GPU", "  "]), max_size=12).map("".join)


def _by_rich(rows: list[list[str]]) -> str:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in rows[0]:
        table.add_column(column, no_wrap=column not in ("REASON", "TOPOLOGY"), overflow="fold")
    for row in rows[1:]:
        table.add_row(*row)
    return _rendered(table, to_terminal=False)


@settings(max_examples=300, deadline=None)
@example([["", "", "", ":a:"]])  # rich printed an emoji code as the emoji on the terminal's route (CI's run found it)
@given(st.integers(1, 6).flatmap(lambda width: st.lists(st.lists(_CELL, min_size=width, max_size=width), max_size=8)))
def test_the_columns_are_the_text_rich_prints(body: list[list[str]]) -> None:
    header = ["GROUP", "KIND", "PRIORITY", "TOPOLOGY", "PODS", "REASON"][: len(body[0]) if body else 2]
    rows = [header, *(row[: len(header)] + [""] * (len(header) - len(row)) for row in body)]
    assert _columns(rows) == _by_rich(rows)
