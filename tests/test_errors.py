"""The companion raises on purpose only members of its one error tree (companion.errors), so a
caller catches :class:`CompanionError` and prints ``str(error)``: a sentence."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from companion import errors
from companion.board.link import Backoff
from companion.errors import CompanionError, InvalidArgumentError, InvalidStepError, MisuseError
from companion.sim.scenario import parse_scenario

PACKAGE = Path(errors.__file__).parent
BUILTINS = {"ValueError", "KeyError", "RuntimeError", "TypeError", "IndexError", "Exception"}


def _bare_raises(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id in BUILTINS:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {raised.id}")
    return found


def test_no_builtin_exception_is_raised_outside_the_error_tree() -> None:
    bare = [where for path in sorted(PACKAGE.rglob("*.py")) for where in _bare_raises(path)]
    assert bare == []


def test_every_error_class_is_in_the_tree_and_says_when_it_is_raised() -> None:
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if c.__module__ == errors.__name__]
    assert len(classes) > 10
    for kind in classes:
        assert issubclass(kind, CompanionError), kind
        assert kind.__doc__ and kind.__doc__.strip(), kind


def test_faults_of_the_calling_code_keep_the_builtin_a_caller_may_catch() -> None:
    with pytest.raises(InvalidArgumentError, match="0 < first <= limit") as bad:
        Backoff(first=0.0)
    assert isinstance(bad.value, ValueError)
    assert issubclass(MisuseError, RuntimeError)


def test_a_scenario_line_that_is_wrong_is_an_invalid_step_naming_its_line() -> None:
    with pytest.raises(InvalidStepError, match=r"^s, line 2: 'jump e5' is not an action"):
        parse_scenario("game enceladus\njump e5\n", "s")
