"""Every Gardens of Mars case file passes: the shared ones and ours (shared/cases/FORMAT.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.rules.cases import check_files, load_cases

SHARED = Path(__file__).resolve().parents[2] / "shared" / "cases" / "mars.json"
EXTRA = Path(__file__).resolve().parent / "cases" / "mars_extra.json"


def _check(path: Path) -> list[str]:
    lines: list[str] = []
    assert check_files([path], lines.append) == 0, "\n".join(
        line for line in lines if not line.startswith("PASS")
    )
    return lines


@pytest.mark.skipif(not SHARED.exists(), reason=f"no shared cases beside the checkout ({SHARED})")
def test_shared_mars_cases_pass() -> None:
    assert _check(SHARED)[-1] == "14 passed, 0 failed"


def test_extra_mars_cases_pass() -> None:
    lines = _check(EXTRA)
    assert lines[-1] == f"{len(load_cases(EXTRA))} passed, 0 failed"


def test_extra_mars_cases_name_their_rule_and_source() -> None:
    cases = load_cases(EXTRA)
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        assert case["game"] == "mars"
        assert case["rule"] and case["source"].startswith(
            ("gardens-of-mars.txt", "CLARIFICATIONS.md Mars #", "shared/cases/FORMAT.md")
        ), case["id"]
