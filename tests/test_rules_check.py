"""Every rule case file passes: the shared ones and ours (issue 2, item 3; FORMAT.md).

Each case runs on its own (a failure names the case), and every file runs through
``companion rules check`` as a player would run it.  The shared cases live in
``../shared/cases`` beside the checkout (``COMPANION_SHARED_CASES`` overrides); a missing
folder fails the suite rather than skipping it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.rules import load
from companion.rules.cases import default_adapter_for, load_cases, run_case

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("COMPANION_SHARED_CASES", ROOT.parent / "shared" / "cases"))
OURS = ROOT / "tests" / "cases"
CASE_FILES = sorted(SHARED.glob("*.json")) + sorted(OURS.glob("*.json"))
CASES = [case for path in CASE_FILES for case in load_cases(path)]
SOURCES = {
    "enceladus": ("gardens-of-enceladus.txt", "CLARIFICATIONS.md Enceladus #"),
    "mars": ("gardens-of-mars.txt", "CLARIFICATIONS.md Mars #"),
    "uranus": ("gardens-of-uranus.txt", "CLARIFICATIONS.md Uranus #"),
}


def check(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", "rules", "check", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = run_case(case, default_adapter_for)
    assert result.status == "PASS", result.line()


@pytest.mark.parametrize("path", sorted(OURS.glob("*.json")), ids=lambda p: p.name)
def test_our_cases_have_unique_ids_and_name_their_rule_and_source(path: Path) -> None:
    cases = load_cases(path)
    assert len({case["id"] for case in CASES}) == len(CASES)  # none clashes with a shared id
    for case in cases:
        assert case["rule"], case["id"]
        assert case["source"].startswith((*SOURCES[case["game"]], "shared/cases/FORMAT.md")), case[
            "id"
        ]


def test_our_enceladus_cases_cover_every_special_action_and_variant() -> None:
    cases = load_cases(OURS / "enceladus_extra.json")
    used = {
        step["action"]
        for case in cases
        for step in case["query"].get("apply", [])
        if "action" in step
    }
    assert used == set(load("enceladus").ACTIONS)  # the ten of the text's table
    options = [case["options"] for case in cases]
    assert {"mode": "cooperative"} in options
    assert {"martians_per_player": 2} in options
    assert {"tube": False} in options


def test_the_shared_case_folder_is_there() -> None:
    assert sorted(p.name for p in SHARED.glob("*.json")) == [
        "enceladus.json",
        "mars.json",
        "uranus.json",
    ]


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_case_passes(path: Path) -> None:
    result = check(path)
    lines = result.stdout.splitlines()
    cases = json.loads(path.read_text())
    assert lines[-1] == f"{len(cases)} passed, 0 failed", result.stdout + result.stderr
    assert [line.split()[1].rstrip(":") for line in lines[:-1]] == [c["id"] for c in cases]
    assert result.returncode == 0


def test_a_failing_case_is_reported_with_what_was_expected_and_exits_1(tmp_path: Path) -> None:
    case = json.loads((SHARED / "enceladus.json").read_text())[0]
    case["expect"]["hands"]["1"] = "9-9-9-9-9"
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps([case]))
    result = check(wrong)
    assert result.returncode == 1
    first, last = result.stdout.splitlines()
    assert re.fullmatch(rf"FAIL {case['id']}: expected .*9-9-9-9-9.*, got .*3-4-5-5-6.*", first)
    assert last == "0 passed, 1 failed"


def test_a_broken_case_file_is_named_not_a_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    result = check(broken)
    assert result.returncode == 1
    assert "broken.json, line 1: not valid JSON" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_a_case_of_an_unknown_game_fails_rather_than_being_skipped(tmp_path: Path) -> None:
    case = {**json.loads((SHARED / "enceladus.json").read_text())[0], "id": "x", "game": "chess"}
    path = tmp_path / "chess.json"
    path.write_text(json.dumps([case]))
    result = check(path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "FAIL x: unknown game 'chess'; a case is of enceladus, mars, uranus", "0 passed, 1 failed"]


def test_a_malformed_position_fails_in_words_not_in_class_names(tmp_path: Path) -> None:
    case = json.loads((SHARED / "enceladus.json").read_text())[0]
    case["position"]["players"] = "two"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([case]))
    first = check(path).stdout.splitlines()[0]
    assert first.startswith(f"FAIL {case['id']}: the case could not be run:")
    assert "Error" not in first
