"""The repository stands alone: everything it cites, a reader of a fresh clone can open.

No file points outside the checkout (a folder beside it, notes kept elsewhere, a numbered
request); every relative link in the Markdown documents reaches a file of the repository (and
a heading there, for a ``#anchor``); every ruling cited as ``docs/RULINGS.md <Game> #<n>`` has
its heading in ``docs/RULINGS.md``.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Written as patterns so that this file does not match them itself.
FORBIDDEN = {
    "a folder beside the checkout": re.compile(r"\.\./shared\b|\bshared/(cases|rules)\b"),
    "notes kept outside the repository": re.compile(
        r"\b(PRODUCT|FORMAT|STYLE)\.md\b|\bCLARIFICATION[S]\b"
    ),
    "a rules text file the repository does not carry": re.compile(r"gardens-of-\w+\.txt"),
    "a numbered request": re.compile(r"\b(issue|item)\s+#?\d", re.IGNORECASE),
}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
RULING = re.compile(r"docs/RULINGS\.md (Enceladus|Mars|Uranus) #(\w+)")


def repository_files() -> list[Path]:
    """The files a clone holds: tracked ones and new ones not ignored."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=False,
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: there is no list of the repository's files")
    return [ROOT / name for name in listed.stdout.decode().split("\0") if name]


def text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError):  # an image; a file deleted, not yet staged
        return None


def texts() -> dict[str, str]:
    found = {}
    for path in repository_files():
        text = text_of(path)
        if text is not None:
            found[path.relative_to(ROOT).as_posix()] = text
    return found


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "hardware").rglob("*.md"))]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces -> '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("#")}


def test_no_file_cites_what_a_reader_of_the_repository_cannot_open() -> None:
    found = [
        f"{name}:{text.count(chr(10), 0, match.start()) + 1}: {match[0]!r} ({what})"
        for name, text in texts().items()
        for what, pattern in FORBIDDEN.items()
        for match in pattern.finditer(text)
    ]
    assert not found, "\n".join(found)


def test_the_check_catches_each_kind_of_outside_reference() -> None:
    for sample in ("../" + "shared" + "/cases/", "see PRODUCT" + ".md", "CLARIFICATION" + "S #3",
                   "gardens-of-mars" + ".txt", "issue" + " 5", "Item" + " 4", "issue" + " #2"):
        assert any(p.search(sample) for p in FORBIDDEN.values()), sample
    for fine in ("docs/RULINGS.md Enceladus #3", "tests/cases/mars.json", "the shared pool"):
        assert not any(p.search(fine) for p in FORBIDDEN.values()), fine


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_a_file_of_the_repository(path: Path) -> None:
    files = {p.resolve() for p in repository_files()}
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        name, _, anchor = target.partition("#")
        goal = (path.parent / name).resolve() if name else path.resolve()
        is_folder = any(goal in f.parents for f in files)
        if goal not in files and not is_folder:
            broken.append(f"{target}: no such file in the repository")
        elif anchor and (is_folder or goal.suffix != ".md" or anchor not in anchors(goal)):
            broken.append(f"{target}: no heading #{anchor} there")
    assert not broken, "\n".join(broken)


def test_every_ruling_cited_has_its_heading() -> None:
    rulings = (ROOT / "docs" / "RULINGS.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### (\w+ #\w+):", rulings, re.MULTILINE))
    cited = {f"{m[1]} #{m[2]}" for text in texts().values() for m in RULING.finditer(text)}
    assert cited, "nothing cites a ruling: the pattern is out of date"
    assert cited <= headings, sorted(cited - headings)


def test_make_clean_removes_what_the_tools_leave_in_the_tree() -> None:
    done = subprocess.run(["make", "-n", "clean"], cwd=ROOT, capture_output=True, text=True,
                          check=True)
    removed = done.stdout.split()
    for left in (".venv", "out", ".pytest_cache", ".hypothesis", ".mypy_cache", ".ruff_cache"):
        assert left in removed, done.stdout
