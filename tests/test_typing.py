"""``Any`` only at the edges: the companion's own values have their own types, and what a
library hands over untyped (gpiozero's pin factory, pyserial's port, luma's device, a JSON
tree before it is checked) is named once, in a type alias that says whose object it is.

So ``Any`` may appear in the package only in an ``import`` and on the right of a
``Name: TypeAlias = ...`` line; every other use names one of those aliases.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "companion"


def _is_alias(node: ast.stmt) -> bool:
    return (isinstance(node, ast.AnnAssign) and isinstance(node.annotation, ast.Name)
            and node.annotation.id == "TypeAlias")


def _loose_any(path: Path) -> list[str]:
    """``file:line`` of each ``Any`` in ``path`` outside an import and a type alias."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_alias(node):
            continue
        if not isinstance(node, ast.stmt) or hasattr(node, "body"):
            continue  # a compound statement: its own statements are walked one by one
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and child.id == "Any":
                found.append(f"{path.relative_to(PACKAGE.parent)}:{child.lineno}")
    return found


def _loose_any_in_signatures(path: Path) -> list[str]:
    """``file:line`` of each ``Any`` in a function's or class's own signature or bases."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        parts: list[ast.AST] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            parts = [a.annotation for a in (*arguments.posonlyargs, *arguments.args,
                                            *arguments.kwonlyargs) if a.annotation]
            parts += [a.annotation for a in (arguments.vararg, arguments.kwarg)
                      if a is not None and a.annotation is not None]
            parts += [node.returns] if node.returns is not None else []
        elif isinstance(node, ast.ClassDef):
            parts = [*node.bases, *node.keywords]
        for part in parts:
            for child in ast.walk(part):
                if isinstance(child, ast.Name) and child.id == "Any":
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{child.lineno}")
    return found


def test_any_appears_only_in_the_aliases_that_name_a_library_edge() -> None:
    loose = [where for path in sorted(PACKAGE.rglob("*.py"))
             for where in _loose_any(path) + _loose_any_in_signatures(path)]
    assert loose == []


def test_the_check_finds_a_loose_any(tmp_path: Path) -> None:
    module = tmp_path / "companion" / "m.py"
    module.parent.mkdir()
    module.write_text("from typing import Any, TypeAlias\n"
                      "Port: TypeAlias = Any\n"
                      "def f(x: Any) -> Port:\n    y: dict[str, Any] = {}\n    return y\n",
                      encoding="utf-8")
    global PACKAGE
    kept, PACKAGE = PACKAGE, tmp_path / "companion"
    try:
        assert _loose_any(module) + _loose_any_in_signatures(module) == [
            "companion/m.py:4", "companion/m.py:3"]
    finally:
        PACKAGE = kept
