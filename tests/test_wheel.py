"""The companion as the service install puts it on a Pi: the wheel, installed non-editable into a
fresh venv and run from outside the checkout, plays every game from what it ships alone.

The venv gets the wheel (built from this checkout, as ``pip install .`` builds it) and nothing
of the checkout; its dependencies are the installed distributions the wheel's own metadata
asks for, linked file by file from the test environment, so that the test needs no network and
a dependency missing from ``pyproject.toml`` fails here.  The ``emulator`` extra is left out,
as in the README's service install.
"""

from __future__ import annotations

import email.parser
import os
import queue
import subprocess
import sys
import sysconfig
import threading
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
NO_GIF = ("The matrix is not drawn: display gifanim needs luma.emulator, which is not "
          "installed (pip install 'gardens-companion[emulator]').")
WAIT_S = 60  # bound on every wait for a process; a healthy run needs a fraction of it


def _git_status() -> list[str] | None:
    """The checkout's ``git status`` with ignored files; ``None`` outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--ignored"],
                              capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sorted(done.stdout.splitlines())


def _dependencies(requires: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions that ``requires`` (Requires-Dist lines, no extra wanted)
    needs, with theirs, and so on."""
    found: dict[str, metadata.Distribution] = {}
    todo = [(line, "") for line in requires]
    seen: set[tuple[str, str]] = set()
    while todo:
        line, extra = todo.pop()
        requirement = Requirement(line)
        if requirement.marker and not requirement.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(requirement.name)
        wanted = [(name, e) for e in ("", *requirement.extras) if (name, e) not in seen]
        seen.update(wanted)
        dist = found.setdefault(name, metadata.distribution(name))
        todo += [(r, e) for _, e in wanted for r in dist.requires or ()]
    return list(found.values())


def _link(dists: Iterable[metadata.Distribution], into: Path) -> None:
    """Symlink every file the distributions installed in site-packages under ``into``."""
    for dist in dists:
        assert dist.files is not None, f"{dist.name} has no RECORD"
        for file in dist.files:
            source = Path(str(dist.locate_file(file)))
            if file.parts[0] == ".." or not source.is_file():  # scripts in bin/, gone files
                continue
            target = into / file
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                target.symlink_to(source)


class Venv:
    """The fresh venv with the wheel installed; ``run`` and ``start`` its ``companion``."""

    def __init__(self, path: Path, cwd: Path) -> None:
        self.path, self.cwd = path, cwd
        self.python = path / "bin" / "python"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
        self.env |= {"PYTHONUNBUFFERED": "1", "PYGAME_HIDE_SUPPORT_PROMPT": "1",
                     "GPIOZERO_PIN_FACTORY": "mock"}

    def start(self, *args: str, stderr: int = subprocess.PIPE) -> subprocess.Popen[str]:
        return subprocess.Popen([str(self.path / "bin" / "companion"), *args], cwd=self.cwd,
                                env=self.env, text=True, stdout=subprocess.PIPE, stderr=stderr)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.path / "bin" / "companion"), *args], cwd=self.cwd,
                              env=self.env, text=True, capture_output=True, timeout=WAIT_S,
                              check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    tmp = tmp_path_factory.mktemp("wheel")
    before = _git_status()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--wheel-dir", str(tmp / "dist"),
                    str(ROOT)], check=True, timeout=WAIT_S)
    # the build leaves nothing behind (build/, *.egg-info would be root's after `sudo pip`)
    assert not (ROOT / "build").exists() and not list(ROOT.glob("*.egg-info"))
    if before is not None:
        assert _git_status() == before
    (wheel,) = (tmp / "dist").glob("gardens_companion-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = email.parser.Parser().parsestr(archive.read(name).decode()).get_all(
            "Requires-Dist") or []
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=WAIT_S)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    _link(_dependencies(requires), tmp / "dependencies")
    (Path(site) / "dependencies.pth").write_text(f"{tmp / 'dependencies'}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=WAIT_S)
    (tmp / "here").mkdir()
    yield Venv(venv, tmp / "here")


def test_the_build_backend_in_the_test_environment_is_the_one_pyproject_names() -> None:
    with open(ROOT / "pyproject.toml", "rb") as file:
        (backend,) = tomllib.load(file)["build-system"]["requires"]
    requirement = Requirement(backend)
    assert requirement.specifier.contains(metadata.version(requirement.name))


def test_the_companion_comes_from_the_wheel_alone(installed: Venv) -> None:
    done = subprocess.run(
        [str(installed.python), "-c", "import companion, luma.core, sys; "
         "print(companion.__file__); print(*sys.path, sep='\\n'); "
         "import importlib.util as u; print(u.find_spec('luma.emulator'))"],
        cwd=installed.cwd, env=installed.env, capture_output=True, text=True, check=True)
    where, *path, emulator = done.stdout.splitlines()
    assert Path(where).is_relative_to(installed.path)
    assert str(ROOT) not in path and emulator == "None"
    assert sysconfig.get_path("purelib") not in path  # the test venv's own site-packages


def test_check_config_and_every_games_demo_run_from_the_wheel(installed: Venv) -> None:
    config = installed.cwd / "uranus.toml"
    # a dummy display: what this machine lacks for a real matrix is not what is tested here
    config.write_text('[game]\nname = "uranus"\n[board]\ncards = "reader"\n'
                      '[display]\ndisplay = "dummy"\n')
    checked = installed.run("check-config", str(config))
    assert (checked.returncode, checked.stdout) == (0, f"{config}: no problems\n")
    demos = {game: installed.start("demo", "--game", game, "--speed", "20", "--out", "out")
             for game in ("enceladus", "mars", "uranus")}
    for game, demo in demos.items():
        out, err = demo.communicate(timeout=WAIT_S)
        assert demo.returncode == 0, err
        assert f"Gardens of {game.capitalize()}" in out and "Winner: " in out
        assert out.count(NO_GIF) == 1 and "Matrix animation" not in out
    assert not list((installed.cwd / "out").glob("*.gif"))


def test_the_default_display_needs_no_emulator_options(installed: Venv) -> None:
    # luma's parser knows the emulators' options only with luma.emulator installed: a MAX7219
    # must not be refused for options the user never wrote
    done = subprocess.run(
        [str(installed.python), "-c", "from companion.config import Config\n"
         "from companion.display import make_device\n"
         "from companion.errors import ConfigError\n"
         "for display in ('max7219', 'gifanim'):\n"
         "    try:\n"
         "        make_device({**Config().display.luma, 'display': display})\n"
         "    except ConfigError as error:\n"
         "        print(error)\n"],
        cwd=installed.cwd, env=installed.env, capture_output=True, text=True, check=True)
    assert "Unknown display option" not in done.stdout
    assert ("Display option display='gifanim' is a luma.emulator device, which is not "
            "installed: pip install 'gardens-companion[emulator]'.") in done.stdout


def _wait_for(stream: Iterable[str] | None, text: str) -> str:
    """The first line of ``stream`` with ``text`` in it, read by a thread so that the wait is
    bounded; fails on the end of the stream or after :data:`WAIT_S`."""
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        for line in stream or ():
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    seen: list[str] = []
    while (line := lines.get(timeout=WAIT_S)) is not None:
        if text in line:
            return line
        seen.append(line)
    raise AssertionError(f"no line with {text!r}; the process said: {''.join(seen)}")


def test_the_daemon_referees_uranus_with_the_card_reader_from_the_wheel(installed: Venv) -> None:
    sim = installed.start("sim", "--serve", "pty", "--game", "uranus", "--seed", "1",
                          stderr=subprocess.DEVNULL)
    try:
        port = _wait_for(sim.stdout, " on /dev/").split(" on ")[-1].strip()
        config = installed.cwd / "daemon.toml"
        config.write_text(f'[game]\nname = "uranus"\nseed = 1\n[board]\ncards = "reader"\n'
                          f'port = "{port}"\n[display]\ndisplay = "dummy"\n'
                          f'[journal]\ndirectory = "{installed.cwd / "journals"}"\n')
        assert installed.run("check-config", str(config)).returncode == 0
        daemon = installed.start("run", "--config", str(config))
        try:
            _wait_for(daemon.stderr, "says hello")
        finally:
            daemon.terminate()
            daemon.wait(timeout=WAIT_S)
        assert daemon.returncode == 0
        assert list((installed.cwd / "journals").glob("*.jsonl"))
    finally:
        sim.terminate()
        sim.wait(timeout=WAIT_S)
