"""The package layout is the architecture: the data path board -> referee -> rules, journal,
display; the daemon composing them; the tools, the simulator and the live page beside them.

Each package may import only what :data:`ALLOWED` lists (what its docstring says), whether
at the top of a module or inside a function (an optional part imported lazily); imports
under ``TYPE_CHECKING`` only name types and are not counted.  And no module imports itself
back through others at import time: the modules' top-level imports have no cycle.
"""

from __future__ import annotations

import ast
import functools
import graphlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "companion"

SHARED = frozenset({"errors", "extras", "files", "bursts", "events"})
"""The modules every part may use: the error tree, which optional parts are installed, file
writing, burst logging, the events."""

ALLOWED: Mapping[str, frozenset[str]] = {
    "errors": frozenset(),
    "extras": frozenset(),
    "files": frozenset({"errors"}),
    "bursts": frozenset(),
    "events": frozenset(),
    "rules": frozenset({"errors", "files"}),
    "board": SHARED | {"rules", "config"},
    "referee": SHARED | {"rules", "board", "opponent"},
    # The companion as a player: it chooses from the rules alone.
    "opponent": SHARED | {"rules"},
    "journal": SHARED | {"rules"},
    "display": SHARED | {"rules", "referee", "config"},
    # The configuration checks a file the parts' own way (a card catalogue, a display type,
    # a pin factory), importing them lazily.
    "config": SHARED | {"rules", "board", "referee", "display"},
    "daemon": SHARED | {"rules", "board", "referee", "journal", "display", "config", "web",
                        "mqtt"},
    # The table published to a broker: read from the journal, in the rules' own terms.
    "mqtt": SHARED | {"rules", "journal", "config"},
    # An event's tables from the broker, drawn with the table page's drawing.
    "scoreboard": SHARED | {"rules", "referee", "config", "web", "mqtt"},
    # The live page shows finished games with the replay's reading; the replay writes the
    # page's record of a game.
    "web": SHARED | {"rules", "referee", "journal", "display", "config", "tools"},
    "tools": SHARED | {"rules", "board", "referee", "journal", "display", "config", "web"},
    "sim": SHARED | {"rules", "board", "referee", "journal", "display", "config", "daemon",
                     "tools", "web", "opponent"},
    "cli": SHARED | {"rules", "board", "referee", "journal", "display", "config", "daemon",
                     "tools", "web", "sim", "scoreboard", "opponent"},
    "__main__": frozenset({"cli"}),
}
"""Package (or module at the package's root) -> the others it may import."""


@functools.cache
def modules(root: Path = PACKAGE) -> dict[str, ast.Module]:
    """Every module under ``root``, by dotted name (``companion.board.link``), parsed."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes inside ``if TYPE_CHECKING:`` blocks."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside |= {id(sub) for statement in node.body for sub in ast.walk(statement)}
    return inside


def imports(tree: ast.Module, *, top_level: bool) -> Iterator[str]:
    """The ``companion`` modules ``tree`` imports (``from companion import events`` names
    ``companion.events``): at import time only (``top_level``), or anywhere."""
    skip = _type_checking_only(tree)
    nodes = ast.iter_child_nodes(tree) if top_level else ast.walk(tree)
    for node in nodes:
        if id(node) in skip:
            continue
        if isinstance(node, ast.If | ast.Try) and top_level:
            yield from (name for statement in ast.walk(node) if id(statement) not in skip
                        for name in _names(statement))
            continue
        yield from _names(node)


def _names(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names if alias.name.startswith("companion"))
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and (
            node.module == "companion" or node.module.startswith("companion.")):
        # A name imported from a package may be a module of it (resolve() tells).
        yield from (f"{node.module}.{alias.name}" for alias in node.names)


def package(module: str) -> str:
    """The part a module belongs to: ``companion.board.link`` -> ``board``."""
    return module.split(".")[1] if "." in module else "__init__"


def layering_breaches(found: Mapping[str, ast.Module],
                      allowed: Mapping[str, frozenset[str]]) -> list[str]:
    """Every import of a package that :data:`ALLOWED` does not list, as ``"a.b imports c.d"``."""
    breaches = []
    for name, tree in found.items():
        here = package(name)
        for target in (resolve(t, found) for t in imports(tree, top_level=False)):
            there = package(target)
            if there not in (here, "__init__") and there not in allowed.get(here, frozenset()):
                breaches.append(f"{name} imports {target}")
    return breaches


def resolve(target: str, found: Mapping[str, ast.Module]) -> str:
    """The module an import loads: ``companion.display.Display`` is no module, its package is."""
    while target not in found and "." in target:
        target = target.rpartition(".")[0]
    return target


def import_cycle(found: Mapping[str, ast.Module]) -> list[str]:
    """A cycle of top-level imports among ``found``, ``[]`` when there is none."""
    graph = {name: {resolve(t, found) for t in imports(tree, top_level=True)} - {name}
             for name, tree in found.items()}
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        cycle: list[str] = error.args[1]
        return cycle
    return []


def test_every_package_imports_only_what_it_may() -> None:
    found = modules()
    assert {package(name) for name in found} - {"__init__"} <= ALLOWED.keys()
    assert layering_breaches(found, ALLOWED) == []


def test_no_import_cycle() -> None:
    assert import_cycle(modules()) == []


def test_the_checks_catch_a_backward_import_and_a_cycle(tmp_path: Path) -> None:
    root = tmp_path / "companion"
    (root / "rules").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "rules" / "__init__.py").write_text("")
    (root / "rules" / "base.py").write_text("from companion.daemon.service import build\n")
    (root / "daemon").mkdir()
    (root / "daemon" / "__init__.py").write_text("")
    (root / "daemon" / "service.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from companion import cli\n"
        "from companion.rules import base\n")
    found = modules(root)
    assert layering_breaches(found, ALLOWED) == [
        "companion.rules.base imports companion.daemon.service"]
    assert sorted(set(import_cycle(found))) == ["companion.daemon.service",
                                                "companion.rules.base"]


@pytest.mark.parametrize("name", sorted(n for n in modules() if n.count(".") == 1
                                        and (PACKAGE / n.split(".")[1]).is_dir()))
def test_every_package_says_what_lives_there(name: str) -> None:
    assert ast.get_docstring(modules()[name]), f"{name} has no docstring"
