"""docs/CLAUSES.md, the table from every rule of the three games and every reading of
docs/RULINGS.md to the tests and rule cases that check it, is kept true: every test it names
exists, every case it names is in tests/cases, every ruling has a row, every case is filed
under some row, and no row is left without a test or a case.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "docs" / "CLAUSES.md"
RULINGS = ROOT / "docs" / "RULINGS.md"
TESTS = ROOT / "tests"
CASES = TESTS / "cases"

TEST_NAME = re.compile(r"^(test_\w+)::((?:Test\w+::)?test_\w+)(\[[^\]]+\])?$")
"""``test_module::test_name``, ``test_module::TestClass::test_name``, with an optional
parametrized id ``[...]``."""


@dataclass(frozen=True)
class Row:
    """One rule of the table: its name, section, words, and what covers it."""

    clause: str
    section: str
    rule: str
    covered_by: tuple[str, ...]


def rows(text: str) -> list[Row]:
    """The rule rows of a CLAUSES table: every Markdown table line but headers and rules."""
    found = []
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] == "clause":
            continue
        cells += [""] * (4 - len(cells))
        covered = tuple(re.findall(r"`([^`]+)`", cells[3]))
        found.append(Row(cells[0].strip("`"), cells[1], cells[2], covered))
    return found


def ruling_headings(text: str) -> list[str]:
    """The readings of docs/RULINGS.md, as their rows name them: ``Coordinates``,
    ``Enceladus #3`` (from ``### Enceladus #3: Start squares``)."""
    headings = []
    for line in text.splitlines():
        if line.startswith("### "):
            headings.append(line[4:].split(":")[0].strip())
        elif line == "## Coordinates":
            headings.append("Coordinates")
    return headings


@cache
def defined_tests(module: str) -> frozenset[str] | None:
    """Every test of ``tests/<module>.py`` (``test_x``, ``TestY::test_x``), or None when
    there is no such module."""
    path = TESTS / f"{module}.py"
    if not path.is_file():
        return None
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            names |= {
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            }
    return frozenset(n for n in names if n.split("::")[-1].startswith("test_"))


def collected_ids(modules: set[str]) -> set[str]:
    """The node ids pytest collects from ``modules`` (``test_x::test_y[id]``)."""
    if not modules:
        return set()
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         *(f"tests/{m}.py" for m in sorted(modules))],
        cwd=ROOT, capture_output=True, text=True, check=False,
    ).stdout
    return {
        line.removeprefix("tests/").replace(".py::", "::", 1)
        for line in out.splitlines()
        if line.startswith("tests/")
    }


def case_ids() -> set[str]:
    """Every case id in tests/cases."""
    return {
        case["id"]
        for path in sorted(CASES.glob("*.json"))
        for case in json.loads(path.read_text(encoding="utf-8"))
    }


def problems(table: list[Row], headings: list[str], cases: set[str]) -> list[str]:
    """Every problem of ``table``, one sentence each, naming the row: a row covered by
    nothing, without a section or words, a clause named twice, a test or case that does not
    exist, a ruling without a row, a case filed under no row."""
    said: list[str] = []
    seen: set[str] = set()
    with_ids: dict[str, list[tuple[str, str]]] = {}
    for row in table:
        where = f"row {row.clause or '(no name)'}"
        if row.clause in seen:
            said.append(f"{where}: the clause name is used by an earlier row")
        seen.add(row.clause)
        if not row.section or not row.rule:
            said.append(f"{where}: the section or the rule is blank")
        if not row.covered_by:
            said.append(f"{where}: no test and no case covers this rule")
        for item in row.covered_by:
            if "::" not in item:
                if item not in cases:
                    said.append(f"{where}: case {item} is not in tests/cases")
                continue
            match = TEST_NAME.match(item)
            if match is None:
                said.append(f"{where}: {item} is not written test_module::test_name")
                continue
            module, name, param = match.groups()
            tests = defined_tests(module)
            if tests is None:
                said.append(f"{where}: there is no test module tests/{module}.py")
            elif name not in tests:
                said.append(f"{where}: tests/{module}.py has no test {name}")
            elif param:
                with_ids.setdefault(module, []).append((where, item))
    if with_ids:
        collected = collected_ids(set(with_ids))
        for module_items in with_ids.values():
            said += [f"{where}: pytest collects no {item}" for where, item in module_items
                     if item not in collected]
    sections = {row.section for row in table}
    said += [f"ruling {h} of docs/RULINGS.md has no row" for h in headings if h not in sections]
    filed = {item for row in table for item in row.covered_by}
    said += [f"case {case} is filed under no row" for case in sorted(cases - filed)]
    return said


def test_every_rule_and_ruling_is_covered_by_tests_and_cases_that_exist() -> None:
    table = rows(TABLE.read_text(encoding="utf-8"))
    headings = ruling_headings(RULINGS.read_text(encoding="utf-8"))
    found = problems(table, headings, case_ids())
    assert not found, "docs/CLAUSES.md:\n" + "\n".join(found)
    assert len(table) > len(headings)


def test_each_game_has_its_own_rows() -> None:
    clauses = [row.clause for row in rows(TABLE.read_text(encoding="utf-8"))]
    for prefix in ("enceladus.", "mars.", "uranus.", "ruling."):
        assert sum(c.startswith(prefix) for c in clauses) >= 10, prefix


def test_a_broken_table_names_each_row_and_what_is_wrong() -> None:
    table = rows(
        "| clause | section | rule | covered by |\n"
        "| --- | --- | --- | --- |\n"
        "| `a` | Goal | a rule | |\n"
        "| `b` | Setup | another | `test_enceladus::test_no_such_test`, `no-such-case` |\n"
        "| `c` | Setup | a third | `test_no_such_module::test_x`, `enc-move-01` |\n"
        "| `c` | Setup | twice | `test_enceladus::test_setup_is_seeded[nine]` |\n"
        "| `d` | | no section | `enc-move-01` |\n"
    )
    assert problems(table, ["Enceladus #1"], {"enc-move-01", "enc-move-02"}) == [
        "row a: no test and no case covers this rule",
        "row b: tests/test_enceladus.py has no test test_no_such_test",
        "row b: case no-such-case is not in tests/cases",
        "row c: there is no test module tests/test_no_such_module.py",
        "row c: the clause name is used by an earlier row",
        "row d: the section or the rule is blank",
        "row c: pytest collects no test_enceladus::test_setup_is_seeded[nine]",
        "ruling Enceladus #1 of docs/RULINGS.md has no row",
        "case enc-move-02 is filed under no row",
    ]


def test_a_parametrized_id_that_pytest_collects_is_accepted() -> None:
    table = rows("| `a` | Setup | a rule | `test_enceladus::test_two_to_five_players[6]` |\n")
    assert problems(table, [], set()) == []


def test_the_readings_of_the_rulings_page_are_its_numbered_headings() -> None:
    headings = ruling_headings(RULINGS.read_text(encoding="utf-8"))
    assert headings[0] == "Coordinates"
    assert {"Enceladus #1", "Enceladus #8a", "Mars #10", "Uranus #6a"} <= set(headings)
    assert all(re.fullmatch(r"(Enceladus|Mars|Uranus) #\d+[a-z]?", h) for h in headings[1:])
