"""Every Gardens of Enceladus case file passes: the shared one and ours (FORMAT.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.rules.cases import check_files, load_cases

SHARED = Path(__file__).resolve().parents[2] / "shared" / "cases" / "enceladus.json"
EXTRA = Path(__file__).resolve().parent / "cases" / "enceladus_extra.json"
SOURCES = ("gardens-of-enceladus.txt", "CLARIFICATIONS.md Enceladus #", "shared/cases/FORMAT.md")


def _check(path: Path) -> list[str]:
    lines: list[str] = []
    assert check_files([path], lines.append) == 0, "\n".join(
        line for line in lines if not line.startswith("PASS")
    )
    return lines


@pytest.mark.skipif(not SHARED.exists(), reason=f"no shared cases beside the checkout ({SHARED})")
def test_shared_enceladus_cases_pass() -> None:
    assert _check(SHARED)[-1] == "24 passed, 0 failed"


def test_extra_enceladus_cases_pass() -> None:
    assert _check(EXTRA)[-1] == f"{len(load_cases(EXTRA))} passed, 0 failed"


def test_extra_enceladus_cases_name_their_rule_and_source() -> None:
    cases = load_cases(EXTRA)
    ids = [case["id"] for case in cases]
    assert len(ids) == len(set(ids))
    for case in cases:
        assert case["game"] == "enceladus"
        assert case["rule"]
        assert case["source"].startswith(SOURCES), case["id"]


def test_extra_cases_cover_every_special_action_and_variant() -> None:
    cases = load_cases(EXTRA)
    used = {
        step["action"]
        for case in cases
        for step in case["query"].get("apply", [])
        if "action" in step
    }
    assert used == {
        "tube",
        "jump",
        "diagonal",
        "pick",
        "swap_martian",
        "swap_peak_flower",
        "swap_flowers",
        "move_flower",
        "move_peak",
        "wildflower",
    }
    options = [case["options"] for case in cases]
    assert {"mode": "cooperative"} in options
    assert {"martians_per_player": 2} in options
    assert {"tube": False} in options
