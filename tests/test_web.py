"""The live page in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, which ``make test`` installs) driven by Selenium.

A whole simulated game of each game (the demo's table, :func:`companion.sim.table.seat`, with
``[web] listen`` on a free loopback port) is followed by the page: after every committed step
the board drawn in the page (its cells' ``data-cell``/``data-piece``) is the referee's board and
the scores are the referee's, and the end shows the ranking.  The referee thread waits for the
page in these tests only (a screen listener added after the page's), so no state is skipped.
A page whose server restarted catches up by itself.  Screenshots of each game at phone and
desktop size go to ``out/web/``.
"""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from companion.config import layout_name
from companion.daemon.service import game_extensions, referee_settings
from companion.display import make_device
from companion.events import Event
from companion.referee.effects import Committed, Show
from companion.referee.screen import Screen
from companion.rules import load
from companion.sim.demo import MATRIX, demo_config
from companion.sim.harness import VirtualTable
from companion.sim.perform import PEOPLE
from companion.sim.table import seat

if TYPE_CHECKING:
    from companion.web.server import WebView

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SHOTS = Path(__file__).resolve().parent.parent / "out" / "web"
PHONE = (390, 844)
DESKTOP = (1280, 900)
WAIT_S = 10.0
STEPS = 8
"""Steps the real-time table plays with the page watching."""

# The page's state in one call: what tests compare with the referee's.
READ_PAGE = """
const body = document.body;
const cells = {};
for (const g of document.querySelectorAll('#board [data-cell]')) {
  cells[g.dataset.cell] = g.dataset.piece;
}
const roles = {};
for (const g of document.querySelectorAll('#board [data-role]')) {
  roles[g.dataset.cell] = g.dataset.role;
}
const steps = [...document.querySelectorAll('#record-steps li')].map((li) => li.textContent);
const players = [...document.querySelectorAll('#players tbody tr')].map(
  (tr) => [Number(tr.dataset.player), tr.dataset.score, tr.dataset.rank]);
return {seq: Number(body.dataset.seq), cells, roles, players, steps,
        to_move: Number(body.dataset.toMove), link: body.dataset.link,
        message: document.getElementById('message').textContent,
        over: body.dataset.over, connection: body.dataset.connection};
"""

# Resolves once the page shows state ``seq`` or a later one (the page's own "snapshot" event).
WAIT_FOR_SEQ = """
const [seq, done] = arguments;
const shown = () => Number(document.body.dataset.seq) >= seq;
if (shown()) { done(true); return; }
window.addEventListener('snapshot', function seen() {
  if (shown()) { window.removeEventListener('snapshot', seen); done(true); }
});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)):
        message = "needs Debian's chromium and chromium-driver (make test installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service as DriverService

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", f"--window-size={PHONE[0]},{PHONE[1]}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=DriverService(DRIVER))
    driver.set_script_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def read_page(browser: Any) -> dict[str, Any]:
    page: dict[str, Any] = browser.execute_script(READ_PAGE)
    return page


def wait_for_seq(browser: Any, seq: int) -> dict[str, Any]:
    browser.execute_async_script(WAIT_FOR_SEQ, seq)
    return read_page(browser)


def console_errors(browser: Any) -> list[str]:
    """The browser's console errors since the last call (a resource that failed to load, such
    as an icon the page does not name and the server does not have, included)."""
    return [entry["message"] for entry in browser.get_log("browser")
            if entry["level"] == "SEVERE"]


def screenshots(browser: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, (width, height) in (("phone", PHONE), ("desktop", DESKTOP)):
        browser.set_window_size(width, height)
        browser.save_screenshot(str(SHOTS / f"{name}-{label}.png"))
    browser.set_window_size(*PHONE)


class Follower:
    """A screen listener after the page's: at the first screen after each step committed (and
    at the end), waits until the page shows it and compares the page with the referee."""

    def __init__(self, service: Any, browser: Any) -> None:
        self.service = service
        self.browser = browser
        self.rules = service.referee.rules
        self.steps_seen = 0
        self.checked = 0
        self.settled = 0
        self.waits: list[float] = []
        """Seconds from each state published to the page showing it, Selenium's round trip
        included (printed with ``-s``; not asserted: no test depends on machine speed)."""
        self.errors: list[str] = []
        self.shot_at = 0
        self.name = ""
        self.ended = threading.Event()

    def __call__(self, screen: Screen) -> None:
        if self.errors:  # the first difference says it all: the game goes on unwatched
            return
        referee = self.service.referee
        over = bool(screen.ranking) and not screen.highlights
        if referee.steps_committed == self.steps_seen and not over:
            return
        self.steps_seen = referee.steps_committed
        try:
            started = time.perf_counter()
            page = wait_for_seq(self.browser, self.service.web._latest[0])
            self.waits.append(time.perf_counter() - started)
        except Exception as error:  # a timeout: said in the test's failure, the game goes on
            self.errors.append(f"step {self.steps_seen}: the page did not follow ({error})")
            return
        self.checked += 1
        # The page draws what the matrix shows; once the board has settled, that is the
        # referee's board (a step already under way shows the cells as they stand).
        drawn = dict(screen.cells)
        if page["cells"] != drawn:
            self.errors.append(f"step {self.steps_seen}: the page is not the matrix's board")
        board = dict(self.rules.board(referee.state))
        if drawn == board:
            self.settled += 1
        elif not screen.message.endswith("go on"):
            wrong = sorted(c for c in board if page["cells"].get(c) != board[c])
            shown = {c: (page["cells"].get(c), board[c]) for c in wrong[:5]}
            self.errors.append(f"step {self.steps_seen}: cells (page, referee) {shown} differ "
                               f"({screen.message!r})")
        scores = [[p, text] for p, text in self.rules.status(referee.state)]
        if [row[:2] for row in page["players"]] != scores and not over:
            self.errors.append(f"step {self.steps_seen}: scores {page['players']} != {scores}")
        made = [f"P{self.rules.to_move(before)} {self.rules.format_step(before, step)}"
                for before, step in referee.history]
        if page["steps"][1:] != made:
            self.errors.append(f"step {self.steps_seen}: the steps listed {page['steps'][-3:]}")
        if page["to_move"] != screen.to_move:
            self.errors.append(f"step {self.steps_seen}: to move {page['to_move']}")
        if self.shot_at and self.steps_seen == self.shot_at:
            screenshots(self.browser, self.name)
        if over:
            ranking = [[p, text, str(rank)] for rank, (p, text) in enumerate(screen.ranking, 1)]
            if page["players"] != ranking or page["over"] != "true":
                self.errors.append(f"end: ranking {page['players']} != {ranking}")
            if self.name:
                screenshots(self.browser, f"{self.name}-end")
            self.ended.set()


class WatchedTable(VirtualTable):
    """The virtual-time table with the page watching: every screen the referee shows is
    published to ``view`` as the service publishes it, then checked by ``follower``."""

    def __init__(self, *args: Any, view: WebView, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.web = view
        self.follower = Follower(self, view.browser)  # type: ignore[attr-defined]

    def deliver(self, event: Event) -> list[Any]:
        effects = super().deliver(event)
        for effect in effects:
            if isinstance(effect, Committed):
                self.web.commit(effect)
            if isinstance(effect, Show):
                self.web.publish(effect.screen, "up", self.referee.steps_committed)
                self.follower(effect.screen)
        return effects


@pytest.mark.parametrize(("game", "seed"), [("enceladus", 3), ("mars", 2), ("uranus", 1)])
def test_the_page_follows_a_whole_game_of_each_game(
    browser: Any, tmp_path: Path, game: str, seed: int
) -> None:
    from companion.web.server import WebView

    config = demo_config(game, 2, seed, "hexagonal", tmp_path / "journal")
    rules = load(game).RULES
    state = rules.new_game(2, seed, config.game.rules_options())
    view = WebView("127.0.0.1:0", title=f"Gardens of {game.capitalize()}")
    view.browser = browser  # type: ignore[attr-defined]
    try:
        browser.get(view.address)
        # People's noise, but each step left to settle: every step has its settled screen.
        table = WatchedTable(rules, state, layout_name(config), seed=seed,
                             noise=replace(PEOPLE, reach_in=0.0),
                             settings=referee_settings(config),
                             extensions=game_extensions(config), view=view)
        table.follower.name, table.follower.shot_at = game, 8
        report = table.play()
    finally:
        view.close()
    assert report.over and len(report.committed) == len(report.performed)
    assert table.follower.errors == []
    assert table.follower.ended.is_set()
    # The page is compared after every step, and again after a step taken back by hand.
    assert table.follower.checked >= len(report.committed)
    assert table.follower.settled > 0
    waits = sorted(table.follower.waits)
    print(f"\n{game}: {len(waits)} states, published -> shown in the page (ms): median "
          f"{1000 * waits[len(waits) // 2]:.1f}, max {1000 * waits[-1]:.1f}")


def test_the_page_follows_the_demo_game_in_real_time(browser: Any, tmp_path: Path) -> None:
    """The daemon as the demo builds it, ``[web] listen`` on: its page follows the first
    steps through the pseudo-terminal and the service's screens (a whole game takes minutes
    in real time; the games above are whole)."""
    config = demo_config("enceladus", 2, 3, "hexagonal", tmp_path / "journal",
                         web="127.0.0.1:0")
    with ExitStack() as stack:
        seated = seat(config, stack, device=make_device({"display": "dummy", **MATRIX}),
                      speed=6.0)
        service = seated.service
        assert service.web is not None and service.web.address.startswith("http://127.0.0.1:")
        follower = Follower(service, browser)
        service.screen_listeners.append(follower)
        errors: list[str] = []

        def enough(screen: object) -> None:
            if follower.steps_seen >= STEPS:
                errors.extend(console_errors(browser))  # before the stop cuts the event stream
                service.stop("enough steps")

        service.screen_listeners.append(enough)
        console_errors(browser)
        browser.get(service.web.address)
        seated.players.start()
        service.run()
    assert seated.players.error is None
    assert follower.errors == []
    assert errors == []
    assert follower.checked >= STEPS and follower.steps_seen >= STEPS


def test_a_page_catches_up_after_the_server_restarts(browser: Any) -> None:
    from companion.web.server import WebView

    first = WebView("127.0.0.1:0")
    port = first.address.rsplit(":", 1)[1].rstrip("/")
    cells = {"0,0": "", "1,0": "red", "0,1": "M1"}
    first.publish(Screen("mars", "mars", cells, message="first", to_move=1), "up", 3)
    browser.get(first.address)
    assert wait_for_seq(browser, 1)["message"] == "first"
    first.close()
    # While the page is cut off the table goes on; the new server knows only the new state.
    second = WebView(f"127.0.0.1:{port}")
    try:
        moved = {**cells, "1,0": "M1+red", "0,1": ""}
        second.publish(Screen("mars", "mars", moved, message="between", to_move=1), "up", 3)
        second.publish(Screen("mars", "mars", moved, message="second", to_move=2), "up", 4)
        page = wait_for_seq(browser, 2)
        assert page["message"] == "second"
        assert page["cells"] == moved and page["to_move"] == 2
        assert page["connection"] == "open"
    finally:
        second.close()


def test_a_question_is_answered_on_the_page_with_the_pin_and_a_wrong_pin_is_refused(
    browser: Any,
) -> None:
    """The payment colour the referee asks (no tray) answered with the page's Select and OK:
    the presses arrive on the event queue as the buttons make them, and the referee takes
    them; a wrong PIN presses nothing."""
    import queue

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait
    from test_referee import PAY, enceladus

    from companion.events import Button
    from companion.referee.referee import RefereeSettings
    from companion.web.server import WebView

    table = enceladus(PAY, reserves={"1": {"blue": 3, "red": 3}, "2": {}},
                      settings=RefereeSettings(tray=False))
    table.put("A4", "D1")  # the disc on the Pick slot
    table.put("f5", "")  # the flower picked: which colour was paid?
    events: queue.Queue[Any] = queue.Queue()
    view = WebView("127.0.0.1:0", events=events, pin="2468")
    assert view.mark(table.screens()[-1]).extra["web"] == "PIN 2468"  # on the matrix
    try:
        view.publish(table.screens()[-1], "up", 0)
        browser.get(view.address)
        page = wait_for_seq(browser, 1)
        assert "which one" in page["message"] and "2468" not in browser.page_source
        said = browser.find_element(By.ID, "pressed")

        def press(pin: str, button: str) -> str:
            field = browser.find_element(By.ID, "pin")
            field.clear()
            field.send_keys(pin)
            before = said.text
            browser.find_element(By.CSS_SELECTOR, f'[data-button="{button}"]').click()
            WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until(
                lambda _: said.text != before or said.get_attribute("data-refused"))
            return str(said.text)

        assert press("1111", "ok") == "Wrong PIN: the matrix shows it"
        assert said.get_attribute("data-refused") == "true" and events.empty()
        question = table.screens()[-1]
        wanted = question.menu.index("pay red")
        for button in ["select"] * ((wanted - question.menu_index) % 2) + ["ok"]:
            press("2468", button)
            pressed, released = events.get(timeout=WAIT_S), events.get(timeout=WAIT_S)
            assert isinstance(pressed, Button) and (pressed.name, pressed.pressed) == (
                button, True)
            assert (released.name, released.pressed) == (button, False)
            for event in (pressed, released):
                table.time.deliver(event)
            view.publish(table.screens()[-1], "up", len(table.commits()))
        assert table.commits() == ["pick:red:f5"]
        assert said.get_attribute("data-refused") == "false"
    finally:
        view.close()


def test_the_game_record_page_steps_through_a_journal_both_ways(
    browser: Any, tmp_path: Path
) -> None:
    """``companion replay --html``: one self-contained file (opened from disk, nothing else
    fetched) whose board, at every step reached with Back and Next, is the journal's."""
    from selenium.webdriver.common.by import By
    from test_replay import _game

    from companion import journal
    from companion.cli import main
    from companion.tools.replay import replay_game

    path = _game(tmp_path, steps=12)
    page = tmp_path / "record.html"
    assert main(["replay", str(path), "--no-gif", "--html", str(page)]) == 0
    text = page.read_text()
    assert "<script src" not in text  # every asset inline, the icon a data: address
    assert re.findall(r"<link[^>]*>", text) == ['<link rel="icon" href="data:,">']
    rules = load("enceladus").RULES
    moments = list(replay_game(journal.read(path).checked(rules), rules))
    browser.get(page.as_uri())
    read = read_page(browser)
    assert read["connection"] == "record" and read["cells"] == dict(
        rules.board(moments[-1].state))
    assert browser.find_element(By.ID, "chart").find_elements(By.TAG_NAME, "polyline")
    steps = browser.find_elements(By.CSS_SELECTOR, "#record-steps li")
    assert [li.text for li in steps][1:] == [f"P{m.player} {m.step}" for m in moments[1:]]
    back = browser.find_element(By.CSS_SELECTOR, '[data-go="back"]')
    forward = browser.find_element(By.CSS_SELECTOR, '[data-go="next"]')
    for at in range(len(moments) - 2, -1, -1):
        back.click()
        read = read_page(browser)
        assert read["cells"] == dict(rules.board(moments[at].state)), at
        assert [row[:2] for row in read["players"]] == [list(s) for s in moments[at].scores]
    back.click()  # nothing before the setup
    assert read_page(browser)["cells"] == dict(rules.board(moments[0].state))
    for at in (1, 2):
        forward.click()
        assert read_page(browser)["cells"] == dict(rules.board(moments[at].state))
    screenshots(browser, "record")


@pytest.mark.parametrize("steps", [12, None], ids=["unfinished", "finished"])
def test_the_game_record_page_of_an_unfinished_game_says_it_is_in_progress(
    browser: Any, tmp_path: Path, steps: int | None
) -> None:
    """Its caption does not read as a whole game's record: the game goes on."""
    from selenium.webdriver.common.by import By
    from test_replay import _game

    from companion.cli import main

    page = tmp_path / "record.html"
    assert main(["replay", str(_game(tmp_path, steps=steps)), "--no-gif", "--html",
                 str(page)]) == 0
    browser.get(page.as_uri())
    said = browser.find_element(By.ID, "connection").text
    assert said == ("game in progress" if steps else "game record")


def test_a_long_step_of_the_game_record_stays_in_its_column(
    browser: Any, tmp_path: Path
) -> None:
    """The list of steps is set in columns; a step that is one long word, such as Uranus's
    end-of-game scoring ``P5 score:biggest_group:purple/2``, wraps inside its column on a
    phone and a desktop rather than running over the step beside it, and each column's step
    numbers have room in the gap before it."""
    from selenium.webdriver.common.by import By
    from test_replay import _game

    from companion.cli import main

    page = tmp_path / "record.html"
    assert main(["replay", str(_game(tmp_path, steps=12)), "--no-gif", "--html", str(page)]) == 0
    browser.get(page.as_uri())
    first = browser.find_elements(By.CSS_SELECTOR, "#record-steps li")[1]
    browser.execute_script("arguments[0].textContent = arguments[1];", first,
                           "P5 score:biggest_group:purple/2")
    for size in (PHONE, DESKTOP):
        browser.set_window_size(*size)
        over = browser.execute_script(
            "return [...document.querySelectorAll('#record-steps li')]"
            ".filter((li) => li.scrollWidth > li.clientWidth).map((li) => li.textContent);")
        assert over == [], size
        assert browser.execute_script(NUMBERS_FIT) == [], size


NUMBERS_FIT = """
const items = [...document.querySelectorAll('#record-steps li')];
const number = document.createElement('span');
number.textContent = items.length + '. ';
number.style.font = getComputedStyle(items[0]).font;
document.body.append(number);
const wide = number.getBoundingClientRect().width;
number.remove();
const boxes = items.map((li) => li.getBoundingClientRect());
const lefts = [...new Set(boxes.map((box) => Math.round(box.left)))].sort((a, b) => a - b);
return lefts.slice(1).map((left, i) => left - Math.max(
  ...boxes.filter((box) => Math.round(box.left) === lefts[i]).map((box) => box.right)))
  .filter((gap) => gap < wide);
"""
"""The gaps between the columns of the list of steps too narrow for a step's number, which
stands in the gap before its column (empty when every number has room)."""


def test_the_live_page_steps_through_the_game_so_far_and_opens_a_finished_game(
    browser: Any, tmp_path: Path
) -> None:
    """Back and Next on the live page show the positions of the referee's history, on that
    page alone: the table's next state waits until Live; a finished journal of the folder
    opens from the list."""
    import random

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait
    from test_replay import _game

    from companion.sim.players import choose_step
    from companion.tools.replay import read_game
    from companion.web.server import WebView

    rules = load("mars").RULES
    state = rules.new_game(2, 7, {})
    rng = random.Random(7)
    history: list[tuple[Any, Any]] = []
    for _ in range(6):
        step = choose_step(rules, state, rng)
        history.append((state, step))
        state = rules.apply(state, step)
    positions = [before for before, _ in history] + [state]
    finished = _game(tmp_path, seed=4)
    view = WebView("127.0.0.1:0", journals=tmp_path)
    try:
        live = Screen("mars", "mars", rules.board(state), message="P1: your turn", to_move=1)
        view.publish(live, "up", len(history), (rules, "mars", tuple(history), state))
        browser.get(view.address)
        assert wait_for_seq(browser, 1)["message"] == "P1: your turn"
        back = browser.find_element(By.CSS_SELECTOR, '[data-go="back"]')
        forward = browser.find_element(By.CSS_SELECTOR, '[data-go="next"]')
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until

        def at(n: int) -> dict[str, Any]:
            until(lambda _: browser.execute_script("return document.body.dataset.at") == str(n))
            return read_page(browser)

        for n in range(len(positions) - 2, -1, -1):
            back.click()
            assert at(n)["cells"] == dict(rules.board(positions[n])), n
        view.publish(replace(live, message="the table goes on"), "up", len(history))
        for n in (1, 2, 3):
            forward.click()
            assert at(n)["cells"] == dict(rules.board(positions[n])), n
        assert read_page(browser)["message"] != "the table goes on"  # stepping is local
        browser.find_element(By.ID, "live").click()
        until(lambda _: read_page(browser)["message"] == "the table goes on")
        assert read_page(browser)["cells"] == dict(rules.board(state))

        browser.find_element(By.CSS_SELECTOR, "#games summary").click()
        until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-journal]"))
        browser.find_element(By.CSS_SELECTOR, f'[data-journal="{finished.name}"]').click()
        _, enceladus, moments = read_game(finished)
        page = at(len(moments) - 1)
        assert page["cells"] == dict(enceladus.board(moments[-1].state))
        assert page["over"] == "true"
        back.click()
        assert at(len(moments) - 2)["cells"] == dict(enceladus.board(moments[-2].state))
        screenshots(browser, "live-record")
    finally:
        view.close()


def test_a_new_game_of_three_started_on_the_page_is_on_the_matrix_and_the_page(
    browser: Any, tmp_path: Path, pin_factory: Any
) -> None:
    """The daemon as ``companion run`` builds it, ``[web] listen`` on: the page's New game
    with the matrix's PIN reaches it as an event and the 3-player game is set up on the
    matrix, on the page and in a new journal, with the seats' names; an option the rules
    core refuses is said in its words and starts nothing."""
    from conftest import DaemonThread
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from companion import journal
    from companion.config import load_config
    from companion.daemon.notify import Notifier
    from companion.daemon.service import build

    path = tmp_path / "companion.toml"
    path.write_text(f'[game]\nname = "mars"\nseed = 5\n[board]\nport = "loop://"\n'
                    f'[journal]\ndirectory = "{tmp_path}"\nfsync = false\n'
                    '[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
                    '[web]\nlisten = "127.0.0.1:0"\n')
    stack = ExitStack()
    service = build(load_config(path), stack, pin_factory=pin_factory, notifier=Notifier())
    daemon = DaemonThread(service, stack)
    daemon.start()
    try:
        assert daemon.wait(lambda: service.last_screen is not None)
        assert len(service.last_screen.scores) == 2
        browser.get(service.web.address)
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until
        until(lambda _: browser.find_element(By.ID, "new-game").is_displayed())
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
        assert "built for this game alone" in browser.find_element(By.ID, "new-game-for").text
        browser.find_element(By.ID, "pin").send_keys(service.web.pin)
        players = browser.find_element(By.ID, "new-players")
        players.clear()
        players.send_keys("3")
        names = browser.find_element(By.ID, "new-names")
        names.clear()
        names.send_keys("Ann, , Cy")
        said = browser.find_element(By.ID, "new-said")
        score = browser.find_element(By.CSS_SELECTOR, '[data-option="plant_score"]')
        score.clear()
        score.send_keys("biggest")
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text)
        assert said.text == ("Option 'plant_score' must be 'group_size' or 'connected_only', "
                             "not 'biggest'.")
        assert said.get_attribute("data-refused") == "true" and service.games == 0
        score.clear()
        score.send_keys("group_size")
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text == "new game started")
        assert daemon.wait(lambda: len(service.referee.rules.status(service.referee.state)) == 3)
        assert daemon.wait(lambda: len(service.last_screen.scores) == 3)  # on the matrix
        until(lambda _: len(read_page(browser)["players"]) == 3)  # and on the page
        assert service.journal is not None
        header = journal.read(service.journal.path).header
        assert (header["players"], header["names"]) == (3, ["Ann", "", "Cy"])
    finally:
        daemon.stop()


def test_a_game_in_progress_is_ended_from_the_page_only_once_confirmed(browser: Any) -> None:
    import queue

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from companion.config import GameConfig
    from companion.events import StartGame
    from companion.web.newgame import Choices
    from companion.web.server import WebView

    events: queue.Queue[Any] = queue.Queue()
    view = WebView("127.0.0.1:0", events=events, pin="1357",
                   choices=Choices(GameConfig(name="uranus")))
    try:
        cells = {"0,0": "", "1,0": "red"}
        view.publish(Screen("uranus", "uranus-hexagonal", cells, message="P2: your turn",
                            to_move=2), "up", 4)
        browser.get(view.address)
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until
        until(lambda _: browser.find_element(By.ID, "new-game").is_displayed())
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
        options = browser.find_elements(By.CSS_SELECTOR, "#new-options [data-option]")
        assert [o.get_attribute("data-option") for o in options] == ["triangle_points"]
        field = browser.find_element(By.ID, "pin")
        field.clear()
        field.send_keys("1357")
        said = browser.find_element(By.ID, "new-said")
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text)
        assert said.text.startswith("A game is in progress (4 steps)") and events.empty()
        end = browser.find_element(By.ID, "new-end")
        assert end.is_displayed() and not end.is_selected()
        end.click()
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text == "new game started")
        started = events.get(timeout=WAIT_S)
        assert isinstance(started, StartGame) and started.players == 2
    finally:
        view.close()


def test_reserves_dealt_by_hand_are_entered_on_the_page_and_checked_against_the_bag(
    browser: Any, tmp_path: Path, pin_factory: Any
) -> None:
    """Gardens of Mars deals flowers at random from the bag: the New game form takes each
    player's counts as dealt at the table; a deal that does not add up is said in a sentence
    and starts nothing; one that does is the new game's reserves, in its journal too."""
    from conftest import DaemonThread
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from companion import journal
    from companion.config import load_config
    from companion.daemon.notify import Notifier
    from companion.daemon.service import build
    from companion.rules import mars

    path = tmp_path / "companion.toml"
    path.write_text(f'[game]\nname = "mars"\nseed = 5\n[board]\nport = "loop://"\n'
                    f'[journal]\ndirectory = "{tmp_path}"\nfsync = false\n'
                    '[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
                    '[web]\nlisten = "127.0.0.1:0"\n')
    stack = ExitStack()
    service = build(load_config(path), stack, pin_factory=pin_factory, notifier=Notifier())
    daemon = DaemonThread(service, stack)
    daemon.start()
    dealt = [dict(zip(mars.COLOURS, (4, 6, 5, 5, 5, 5), strict=True)),
             dict(zip(mars.COLOURS, (6, 4, 5, 5, 5, 5), strict=True))]
    try:
        assert daemon.wait(lambda: service.last_screen is not None)
        browser.get(service.web.address)
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until
        until(lambda _: browser.find_element(By.ID, "new-game").is_displayed())
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
        browser.find_element(By.ID, "pin").send_keys(service.web.pin)
        rows = browser.find_elements(By.CSS_SELECTOR, "#new-reserves tbody tr")
        assert len(rows) == 2  # one a player, a count a colour
        assert [th.text for th in browser.find_elements(
            By.CSS_SELECTOR, "#new-reserves thead th")][1:] == list(mars.COLOURS)

        def enter(deal: list[dict[str, int]]) -> None:
            for player, counts in enumerate(deal, 1):
                for colour, count in counts.items():
                    box = browser.find_element(
                        By.CSS_SELECTOR, f'#new-reserves input[data-player="{player}"]'
                                         f'[data-colour="{colour}"]')
                    box.clear()
                    box.send_keys(str(count))

        said = browser.find_element(By.ID, "new-said")
        enter([dealt[0], {**dealt[1], "green": 6}])
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text)
        assert said.text == ("P2 has 31 flowers: with 2 players each is dealt 30. "
                             "The reserves hold 11 green flowers: the bag has only 10.")
        assert said.get_attribute("data-refused") == "true"
        assert service.referee.state.reserves != tuple(
            tuple(r[c] for c in mars.COLOURS) for r in dealt)
        enter(dealt)
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text == "new game started")
        wanted = tuple(tuple(r[c] for c in mars.COLOURS) for r in dealt)
        assert daemon.wait(lambda: service.referee.state.reserves == wanted)
        assert service.journal is not None
        header = journal.read(service.journal.path).header
        assert mars.RULES.parse_position(header["setup"]).reserves == wanted
    finally:
        daemon.stop()


def test_a_presence_board_s_setup_is_guided_on_the_page_at_full_size(browser: Any) -> None:
    """A presence board cannot see colours, so its players lay out the setup the companion
    shows: the page draws the garden at full size with the cells still to fill highlighted
    and counted, and they go out as the sensors see them filled."""
    from selenium.webdriver.common.by import By

    from companion.board import protocol
    from companion.events import BoardMessage, Timer
    from companion.referee.effects import Show
    from companion.referee.referee import Referee, RefereeSettings
    from companion.rules.squares import SQUARE_NAMES
    from companion.sim.handsetup import bare_board
    from companion.web.server import WebView

    rules = load("enceladus").RULES
    state = rules.new_game(2, 4, {})
    referee = Referee(rules, state, "enceladus", RefereeSettings(presence=True))
    view = WebView("127.0.0.1:0")
    seq = 0

    def publish(effects: list[Any]) -> dict[str, Any]:
        nonlocal seq
        shown = [e.screen for e in effects if isinstance(e, Show)]
        if shown:
            seq += 1
            view.publish(shown[-1], "up", 0)
        return wait_for_seq(browser, seq)

    try:
        board = {c: "occupied" if p else "" for c, p in bare_board(rules, state).items()}
        browser.get(view.address)
        dump = protocol.Dump(seq=0, pieces=tuple(board[c] for c in referee.layout))
        page = publish(referee.handle(BoardMessage(0.0, dump)))
        assert page["message"] == "Set up the board as shown"
        assert {c for c, role in page["roles"].items() if role == "place"} == set(SQUARE_NAMES)
        assert browser.find_element(By.ID, "to-fill").text == "100 cells still to fill"
        assert browser.execute_script("return document.body.dataset.settingUp") == "true"
        browser.set_window_size(*DESKTOP)  # the garden, not the scores, takes the screen
        try:
            svg = browser.find_element(By.CSS_SELECTOR, "#board svg").rect
            height = browser.execute_script("return window.innerHeight")
            width = browser.execute_script("return document.body.clientWidth")
            assert svg["height"] > 0.85 * height or svg["width"] > 0.9 * width, svg
        finally:
            browser.set_window_size(*PHONE)
        t = 1.0
        for cell in SQUARE_NAMES[:30]:  # the first three rows filled, one piece at a time
            t += 0.1
            update = protocol.FieldUpdate(seq=0, cell=cell, piece="occupied")
            referee.handle(BoardMessage(t, update))
            effects = referee.handle(Timer(t + 0.05, "debounce"))
        page = publish(effects)
        assert {c for c, role in page["roles"].items() if role == "place"} == set(
            SQUARE_NAMES[30:])
        assert browser.find_element(By.ID, "to-fill").text == "70 cells still to fill"
        for cell in SQUARE_NAMES[30:]:
            t += 0.1
            referee.handle(BoardMessage(t, protocol.FieldUpdate(seq=0, cell=cell,
                                                                piece="occupied")))
            effects = referee.handle(Timer(t + 0.05, "debounce"))
        page = publish(effects)
        assert page["message"] == "P1: your turn" and not page["roles"]
        assert browser.find_element(By.ID, "to-fill").text == ""
        assert browser.execute_script("return document.body.dataset.settingUp") == "false"
    finally:
        view.close()


def test_the_scoreboard_page_shows_every_table_live_and_an_organiser_names_a_seat(
        browser: Any) -> None:
    """``companion scoreboard``'s page: each table's board drawn as the table's page draws
    it, with its seats and scores, the standings; a step arriving is shown without a reload,
    and a seat named on the page (its prompt, then the PIN once) moves the standings."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait
    from test_scoreboard import messages, play

    from companion.scoreboard.model import Scoreboard
    from companion.scoreboard.server import ScoreboardPage

    page = ScoreboardPage("127.0.0.1:0", Scoreboard(), pin="1357")
    setup, steps, outcome = play("enceladus", 2, 9)
    sent = messages("t1", "g1", "enceladus", 2, setup, steps, ["Ann", ""])
    uranus = play("uranus", 2, 5)
    for topic, payload in [*sent[:5], *messages("t2", "g2", "uranus", 2, *uranus[:2])]:
        page.board.receive(topic, payload)
    try:
        console_errors(browser)
        browser.get(page.address)
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until
        until(lambda _: len(browser.find_elements(By.CSS_SELECTOR, ".table svg.board")) == 2)
        t1 = browser.find_element(By.CSS_SELECTOR, '[data-table="t1"]')
        assert t1.find_elements(By.CSS_SELECTOR, '[data-cell="e6"]')
        assert "4 steps" in t1.text and "t1 seat 2" in t1.text
        until(lambda _: len(browser.find_elements(By.CSS_SELECTOR, "#standings tbody tr")) == 2)
        for topic, payload in sent[5:]:
            page.board.receive(topic, payload)
        page.changed()
        until(lambda _: "Over:" in browser.find_element(By.CSS_SELECTOR, '[data-table="t1"]')
              .text)
        browser.find_element(By.CSS_SELECTOR, '[data-table="t1"] [data-seat="2"] button').click()
        until(lambda _: browser.switch_to.alert).send_keys("Bob")
        browser.switch_to.alert.accept()
        until(lambda _: browser.switch_to.alert).send_keys("1357")
        browser.switch_to.alert.accept()
        until(lambda _: "Bob" in browser.find_element(By.ID, "standings").text)
        assert len(browser.find_elements(By.CSS_SELECTOR, "#finished li")) == 2
        winner = ["Ann", "Bob"][outcome.winners[0] - 1]
        first = browser.find_element(By.CSS_SELECTOR, "#standings tbody tr").text
        assert first.startswith(f"1 {winner} 1")  # rank, name, rank points
        assert console_errors(browser) == []
    finally:
        page.close()


class CardWatcher(Follower):
    """The follower, also reading the whole page after every step: no mission card of the
    companion's hand (as it holds it then) is on the page, unless the page's message is the
    companion's announcement of that very card."""

    def __call__(self, screen: Screen) -> None:
        seen = self.steps_seen
        super().__call__(screen)
        if self.steps_seen == seen or self.errors:
            return
        from companion.referee.uranus import card_text

        referee = self.service.referee
        seats = referee.seats
        text = self.browser.execute_script("return document.body.innerText")
        message = read_page(self.browser)["message"]
        for card in seats.hand(referee.rules.core, referee.state, 2):
            for said in (card, card_text(card)):
                if said in text and not message.startswith(f"P2: companion: score {said}") \
                        and not message.startswith(f"P2: companion: show {said}"):
                    self.errors.append(f"step {self.steps_seen}: the companion's {card} "
                                       f"is on the page ({message!r})")
        self.cards_checked = getattr(self, "cards_checked", 0) + 1


def test_the_companions_uranus_cards_are_not_on_the_page_before_it_scores_them(
    browser: Any, tmp_path: Path
) -> None:
    from companion.config import PlayersConfig
    from companion.daemon.games import game_seats
    from companion.web.server import WebView

    config = replace(demo_config("uranus", 2, 4, "hexagonal", tmp_path / "journal"),
                     players=PlayersConfig(seats=("person", "steady")))
    rules = load("uranus").RULES
    state = rules.new_game(2, 4, config.game.rules_options())
    view = WebView("127.0.0.1:0", title="Gardens of Uranus")
    view.browser = browser  # type: ignore[attr-defined]
    try:
        browser.get(view.address)
        table = WatchedTable(rules, state, layout_name(config), seed=4,
                             noise=replace(PEOPLE, reach_in=0.0),
                             settings=referee_settings(config),
                             extensions=game_extensions(config), view=view,
                             seats=game_seats(config))
        table.follower = CardWatcher(table, browser)
        report = table.play()
    finally:
        view.close()
    assert report.over and len(report.committed) == len(report.performed)
    assert table.follower.errors == []
    # Checked at every step, and again at a step taken back by hand and made anew.
    assert table.follower.cards_checked >= len(report.committed)
    scored = [step for before, step in table.referee.history
              if rules.to_move(before) == 2 and getattr(step, "mission", None)]
    assert scored  # the companion scored or showed its cards in the game


def test_seats_are_chosen_and_a_hint_is_asked_on_the_page(
    browser: Any, tmp_path: Path, pin_factory: Any
) -> None:
    """The page's New game takes the seats (a wrong one is said in words and starts
    nothing); the page's Hint shows the strong step on the matrix and is journaled."""
    from conftest import DaemonThread
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    from companion import journal
    from companion.config import load_config
    from companion.daemon.notify import Notifier
    from companion.daemon.service import build

    path = tmp_path / "companion.toml"
    path.write_text(f'[game]\nname = "mars"\nseed = 5\n[board]\nport = "loop://"\n'
                    f'[journal]\ndirectory = "{tmp_path}"\nfsync = false\n'
                    '[display]\ndisplay = "dummy"\nwidth = 16\nheight = 16\n'
                    '[web]\nlisten = "127.0.0.1:0"\n')
    stack = ExitStack()
    service = build(load_config(path), stack, pin_factory=pin_factory, notifier=Notifier())
    daemon = DaemonThread(service, stack)
    daemon.start()
    try:
        assert daemon.wait(lambda: service.last_screen is not None)
        browser.get(service.web.address)
        until = WebDriverWait(browser, WAIT_S, poll_frequency=0.05).until
        until(lambda _: browser.find_element(By.ID, "new-game").is_displayed())
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
        browser.find_element(By.ID, "pin").send_keys(service.web.pin)
        seats = browser.find_element(By.ID, "new-seats")
        said = browser.find_element(By.ID, "new-said")
        seats.send_keys("person, best")
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text)
        assert said.text == "A seat is person, quick, steady or strong, not 'best'"
        assert service.games == 0
        seats.clear()
        seats.send_keys("person, steady")
        browser.find_element(By.ID, "new-start").click()
        until(lambda _: said.text == "new game started")
        assert daemon.wait(lambda: service.config.players.seats == ("person", "steady"))
        assert service.journal is not None
        assert journal.read(service.journal.path).header["seats"] == ["person", "steady"]
        # Set up the board (a loop:// port echoes nothing: the referee is told directly).
        from companion.board import protocol
        from companion.events import BoardMessage

        referee = service.referee
        pieces = tuple(referee.expected[c] for c in referee.layout)
        service.events.put(BoardMessage(service.clock(), protocol.Dump(seq=0, pieces=pieces)))
        assert daemon.wait(lambda: service.last_screen.message.startswith("P1"))
        browser.find_element(By.CSS_SELECTOR, '[data-button="hint"]').click()
        assert daemon.wait(lambda: service.last_screen.message.startswith("P1: hint: "))
        until(lambda _: read_page(browser)["message"].startswith("P1: hint: "))
        assert journal.read(service.journal.path).hints == {1: 1}
    finally:
        daemon.stop()
