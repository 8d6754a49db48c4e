"""``companion rules check`` on every case file: the shared ones and ours (issue 2, item 3).

The shared cases live in ``../shared/cases`` beside the checkout (``COMPANION_SHARED_CASES``
overrides); a missing folder fails the suite rather than skipping it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("COMPANION_SHARED_CASES", ROOT.parent / "shared" / "cases"))
OURS = ROOT / "tests" / "cases"
CASE_FILES = sorted(SHARED.glob("*.json")) + sorted(OURS.glob("*.json"))


def check(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "companion.cli", "rules", "check", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


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
