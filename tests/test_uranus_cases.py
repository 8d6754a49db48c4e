"""Every Gardens of Uranus rule case passes: the shared file and ours (``shared/cases``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion.rules.cases import default_adapter_for, load_cases, run_case

HERE = Path(__file__).resolve().parent
FILES = [HERE.parents[1] / "shared" / "cases" / "uranus.json", HERE / "cases" / "uranus_extra.json"]
CASES = [case for path in FILES if path.exists() for case in load_cases(path)]


def test_both_case_files_are_there() -> None:
    assert all(path.exists() for path in FILES), FILES


def test_case_ids_are_unique_and_cite_a_source() -> None:
    assert len({case["id"] for case in CASES}) == len(CASES)
    assert all(case["rule"] and case["source"] for case in CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = run_case(case, default_adapter_for)
    assert result.status == "PASS", result.line()
