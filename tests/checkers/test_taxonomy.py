"""The taxonomy is the one list of anomaly types: every type a checker can
report is declared there, and docs/checkers.md has a row for each."""
from pathlib import Path

from checkers.verdict import consistency
from checkers.verdict.taxonomy import CYCLE_BASES, TYPES, _DECLARED, words_for

DOCS = Path(__file__).resolve().parents[2] / "docs" / "checkers.md"


def test_every_declared_type_has_a_row_in_the_docs_table():
    text = DOCS.read_text()
    missing = [t.name for t in _DECLARED if f"| `{t.name}` |" not in text]
    assert missing == []


def test_variants_are_derived_for_every_cycle_type():
    """A cycle that needs process order is forbidden by a session model, one that
    needs real-time order by a "strong" one, each at least as strong as what
    forbids the base type."""
    for base in CYCLE_BASES:
        process, realtime = TYPES[base + "-process"].forbidden_by, TYPES[base + "-realtime"].forbidden_by
        assert process[0].startswith("strong-session-")
        assert realtime[0].startswith("strong-") and not realtime[0].startswith("strong-session-") \
            or realtime == ("strict-serializable",)
        assert set(TYPES[base].forbidden_by) & consistency.weaker(process[0])
        assert consistency.weaker(process[0]) <= consistency.weaker(realtime[0])
        assert words_for(base + "-realtime").startswith(words_for(base))


def test_every_list_append_type_is_forbidden_by_strict_serializable_and_some_weaker_model():
    strict = consistency.proscribed("strict-serializable")
    for t in TYPES.values():
        if "list-append" in t.workloads:
            assert t.name in strict
            assert all(m in consistency.MODELS for m in t.forbidden_by)


def test_future_read_words_say_what_the_checker_finds():
    # the report once said future-read meant reading a value written after completion
    assert "appends only later, itself" in words_for("future-read")
