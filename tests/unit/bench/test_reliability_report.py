"""The reliability report's table: one (figure, value) pair per row, whatever was recorded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall.bench._common import format_table
from langgraph_recall.bench.reliability_report import summarise

RUN = {"exit_code": 0, "seconds": 1.0, "tests": 3, "failures": 0, "errors": 0, "skipped": 0}


COUNTS = [
    "redis_kills",
    "erasure_ways_tried",
    "erasure_residue_rows",
    "lease_bypass_paths_tried",
    "store_bookkeeping_deadlocks",
]
SECONDS = ["frozen_redis_call_seconds", "fail_fast_seconds", "postgres_recovery_seconds"]


@given(
    st.dictionaries(st.sampled_from(COUNTS), st.integers(0, 10**6)),
    st.dictionaries(st.sampled_from(SECONDS), st.lists(st.floats(0, 100), max_size=3)),
)
def test_every_row_is_a_figure_and_its_value(
    counts: dict[str, int], seconds: dict[str, list[float]]
) -> None:
    rows = summarise({**counts, **seconds}, RUN)
    assert rows and all(len(row) == 2 and all(isinstance(c, str) for c in row) for row in rows)
    assert len({figure for figure, _ in rows}) == len(rows)  # no figure twice
    table = format_table(["figure", "value"], [list(row) for row in rows])
    assert len(table.splitlines()) == len(rows) + 2


def test_recorded_figures_reach_the_table() -> None:
    rows = dict(summarise({"erasure_ways_tried": 5, "erasure_residue_rows": 0}, RUN))
    assert (
        rows["ways of passing user_id erased by forget_user / rows, keys or pg_stats entries left"]
        == "5 / 0"
    )
