"""The daemon with ``[mqtt]`` on, against a real Mosquitto (the ``broker`` fixture): built
as ``companion run`` builds it, on the simulated board with its virtual players, its
journal published step by step; and the configuration's refusals.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import WAIT_S, Broker, DaemonThread, Listener
from test_mqtt import journal_steps, same_as_journal, steps_heard

from companion import journal as journal_mod
from companion.cli import EX_CONFIG, main
from companion.config import MqttConfig, broker_address, load_config
from companion.display import make_device
from companion.errors import ConfigError
from companion.events import StartGame
from companion.mqtt.publisher import ACKED
from companion.sim.demo import demo_config
from companion.sim.table import seat


def test_the_daemon_publishes_each_step_it_commits(tmp_path: Path, broker: Broker) -> None:
    config = demo_config("enceladus", 2, 5, "hexagonal", tmp_path / "journal")
    config = replace(config, mqtt=MqttConfig(broker=broker.url, table="t1"))
    stack = ExitStack()
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    table = seat(config, stack, device=device, speed=8.0)
    heard = Listener(broker.url)
    try:
        with DaemonThread(table.service, stack) as running:
            table.players.start()
            assert running.wait(lambda: len(running.commits) >= 3), table.players.error
            table.players.stop()
            journal = running.service.journal
            assert journal is not None

            def caught_up() -> bool:  # the last state heard is that of the journal's end
                states = heard.on("gardens/t1/state")
                if not states:
                    return False
                state = json.loads(states[-1])
                record = journal_mod.read(journal.path)
                return (same_as_journal(heard, journal.path)
                        and (state["seq"], state["steps"]) == (len(record.lines),
                                                              len(record.steps)))

            assert heard.wait(caught_up)
            state = json.loads(heard.on("gardens/t1/state")[-1])
            assert state["steps"] >= 3
            assert state["game_id"] == journal.path.name.removesuffix(".jsonl")
            # a new game at the table (the live page's New game): its journal is published
            running.service.events.put(StartGame(running.service.clock(), players=3, seed=9))
            assert heard.wait(lambda: len(heard.on("gardens/t1/game")) == 2)
            game = json.loads(heard.on("gardens/t1/game")[-1])
            assert game["players"] == 3 and game["seed"] == 9
            assert heard.wait(lambda: json.loads(heard.on("gardens/t1/state")[-1])["game_id"]
                              == game["game_id"] != state["game_id"])
        assert heard.wait(lambda: heard.on("gardens/t1/status")[-1:] == [b"offline"])
    finally:
        heard.close()


@pytest.mark.parametrize(("content", "problem"), [
    (None, "cannot be read (there is no such file)"),
    (b"\nsecret\n", "holds no password on its first line"),
    (b"\xff\xfe", "cannot be read (not UTF-8 text)"),
])
def test_a_password_file_without_a_password_stops_the_start(
    tmp_path: Path, broker: Broker, content: bytes | None, problem: str
) -> None:
    config = demo_config("enceladus", 2, 5, "hexagonal", tmp_path / "journal")
    secret = tmp_path / "secret"
    if content is not None:
        secret.write_bytes(content)
    config = replace(config, mqtt=MqttConfig(broker=broker.url, table="t1", username="u",
                                             password_file=str(secret)))
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    with ExitStack() as stack, pytest.raises(ConfigError) as refused:
        seat(config, stack, device=device)
    assert str(refused.value) == f"[mqtt] password_file {secret} {problem}"
    assert list((tmp_path / "journal").glob("*.jsonl")) == []  # no game that never began


@pytest.mark.parametrize(("lines", "problem"), [
    ('broker = "tcp://10.0.0.1:1883"', 'line 2: [mqtt] broker must be "mqtt://host:port" or '
     '"mqtts://host:port" (TLS), such as "mqtt://192.168.1.10:1883", or "" for no '
     'publishing, not "tcp://10.0.0.1:1883"'),
    ('broker = "mqtt://10.0.0.1:0"', 'line 2: [mqtt] broker must be'),
    ('table = "table 3"', 'line 2: [mqtt] table must be a name of 1 to 40 letters, digits, '
     '"_" or "-", such as "table-3", or "" for this machine\'s host name, not "table 3"'),
    ('table = "' + "t" * 41 + '"', "line 2: [mqtt] table must be a name of 1 to 40"),
    ('topic = "gardens/#"', 'line 2: [mqtt] topic must be a topic prefix of letters'),
    ('topic = "/gardens"', 'line 2: [mqtt] topic must be a topic prefix of letters'),
    ('password = "x"', "line 2: [mqtt] password is set but username is empty"),
    ('username = "t1"\npassword = "x"\npassword_file = "p"',
     "line 4: [mqtt] password and password_file are both set; keep one of them"),
    ('broker = "mqtt://h"\nca_file = "ca.pem"', "line 3: [mqtt] ca_file is for a broker "
     'reached over TLS; write the broker as "mqtts://host:port"'),
    ('brokers = "mqtt://h"', "line 2: [mqtt] brokers is not a known key; did you mean broker?"),
])
def test_a_bad_mqtt_key_is_named_with_its_file_and_line(tmp_path: Path, lines: str,
                                                         problem: str) -> None:
    path = tmp_path / "companion.toml"
    path.write_text(f"[mqtt]\n{lines}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert [p for p in refused.value.problems if p.startswith(f"{path}, {problem}")], \
        refused.value.problems


def test_check_config_names_a_password_or_ca_file_that_run_would_not_find(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "companion.toml"
    (tmp_path / "certs").mkdir()
    path.write_text('[mqtt]\nbroker = "mqtts://broker.club"\nusername = "t1"\n'
                    'password_file = "secret"\nca_file = "certs"\n')
    assert main(["check-config", str(path)]) == EX_CONFIG
    assert capsys.readouterr().out.splitlines() == [
        f"{path}, line 4: [mqtt] password_file {tmp_path / 'secret'} does not exist",
        f"{path}, line 5: [mqtt] ca_file {tmp_path / 'certs'} is a folder, not a file"]
    (tmp_path / "secret").write_text("pw\n")
    path.write_text('[mqtt]\nbroker = "mqtt://broker.club"\nusername = "t1"\n'
                    'password_file = "secret"\n')
    assert load_config(path).mqtt.password_file == str(tmp_path / "secret")


def test_broker_urls_give_the_scheme_s_port_when_they_name_none(tmp_path: Path) -> None:
    path = tmp_path / "companion.toml"
    (tmp_path / "secret").write_text("pw\n")
    (tmp_path / "ca.pem").write_text("")
    path.write_text('[mqtt]\nbroker = "mqtts://broker.club"\nusername = "t1"\n'
                    'password_file = "secret"\nca_file = "ca.pem"\n')
    mqtt = load_config(path).mqtt
    assert broker_address(mqtt.broker) == (True, "broker.club", 8883)
    assert (mqtt.password_file, mqtt.ca_file) == (str(tmp_path / "secret"),
                                                  str(tmp_path / "ca.pem"))
    assert broker_address("mqtt://[::1]:1884") == (False, "::1", 1884)
    assert broker_address("mqtt://10.0.0.2") == (False, "10.0.0.2", 1883)


SEATED = (
    "import sys\n"
    "from contextlib import ExitStack\n"
    "from dataclasses import replace\n"
    "from pathlib import Path\n"
    "from companion.config import MqttConfig\n"
    "from companion.errors import ConfigError\n"
    "from companion.sim.demo import demo_config, MATRIX\n"
    "from companion.sim.table import seat\n"
    "from companion.display import make_device\n"
    "config = demo_config('enceladus', 2, 1, 'hexagonal', Path({folder!r}))\n"
    "config = replace(config, mqtt=MqttConfig(broker={broker!r}, table='t1'))\n"
    "try:\n"
    "    with ExitStack() as stack:\n"
    "        seat(config, stack, device=make_device({{'display': 'dummy', **MATRIX}}))\n"
    "except ConfigError as error:\n"
    "    print(error)\n"
    "print(sorted(m for m in sys.modules if m.startswith(('paho', 'companion.mqtt'))))\n"
)


def test_without_mqtt_neither_the_publisher_nor_paho_is_imported(tmp_path: Path) -> None:
    code = SEATED.format(folder=str(tmp_path), broker="")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_mqtt_without_paho_installed_is_a_config_error_naming_the_extra(tmp_path: Path) -> None:
    code = ("import sys\nsys.modules['paho'] = None  # as if the mqtt extra were not installed\n"
            + SEATED.format(folder=str(tmp_path), broker="mqtt://127.0.0.1:1"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.splitlines()[0] == (
        "[mqtt] broker is set but the table cannot be published: paho-mqtt is not installed "
        "(pip install 'gardens-companion[mqtt]')")
    assert list(tmp_path.glob("*.jsonl")) == []  # no journal of a game that never began


TABLE_PROCESS = """\
import signal, sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from companion import journal as journal_mod
from companion.cli import EX_CONFIG, main
from companion.config import MqttConfig
from companion.display import make_device
from companion.sim.demo import MATRIX, demo_config
from companion.sim.table import seat

journals, broker, play = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "play"
config = demo_config("enceladus", 2, 5, "hexagonal", journals)
config = replace(config, mqtt=MqttConfig(broker=broker, table="t1"))
with ExitStack() as stack:
    table = seat(config, stack, device=make_device({"display": "dummy", **MATRIX}), speed=8.0)
    service = table.service
    service.commit_listeners.append(lambda step: print("commit", step.number, flush=True))
    signal.signal(signal.SIGTERM, lambda *_: service.stop("SIGTERM"))
    if play:
        table.players.start()
        stack.callback(table.players.stop)
    print("journal", service.journal.path, flush=True)
    service.run()
"""


class TableProcess:
    """A companion in a child process on its simulated board, publishing to ``broker`` with
    its journals in ``folder``; ``play``: its virtual players play.  What it prints (its
    commits) is read as it comes."""

    def __init__(self, folder: Path, broker: Broker, *, play: bool) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", TABLE_PROCESS, str(folder), broker.url,
             "play" if play else "idle"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None

        def read() -> None:
            for line in stdout:
                self.lines.put(line.strip())
            self.lines.put("")

        threading.Thread(target=read, daemon=True).start()
        self.journal = Path(self.next_line("journal").split(" ", 1)[1])

    def next_line(self, starting: str) -> str:
        """The next line it prints that starts with ``starting`` (bounded wait)."""
        while True:
            line = self.lines.get(timeout=WAIT_S)
            assert line, f"the companion ended: {self.process.stderr.read()}"  # type: ignore
            if line.startswith(starting):
                return line


def test_a_companion_killed_between_commit_and_publish_sends_the_rest_when_started_again(
    tmp_path: Path, broker: Broker
) -> None:
    heard = Listener(broker.url)
    table = TableProcess(tmp_path, broker, play=True)
    restarted = None
    try:
        table.next_line("commit 2")
        broker.freeze()  # steps are committed, and their publishing waits for the broker
        table.next_line("commit 4")
        table.process.send_signal(signal.SIGKILL)  # the power goes
        table.process.wait(WAIT_S)
        broker.thaw()
        committed = journal_steps(table.journal)
        acked = json.loads((tmp_path / ACKED).read_text())["games"]
        game_id = table.journal.name.removesuffix(".jsonl")
        assert acked[game_id] < committed[-1][0]  # committed lines the broker never had
        restarted = TableProcess(tmp_path, broker, play=False)
        assert restarted.journal == table.journal  # the game resumed
        assert heard.wait(lambda: [s["seq"] for s in steps_heard(heard)]
                          == [seq for seq, _ in committed])
        assert heard.wait(lambda: json.loads(heard.on("gardens/t1/state")[-1])["seq"]
                          == committed[-1][0])
        restarted.process.send_signal(signal.SIGTERM)
        assert restarted.process.wait(WAIT_S) == 0
        assert heard.wait(lambda: heard.on("gardens/t1/status")[-1:] == [b"offline"])
    finally:
        heard.close()
        for process in (table.process, restarted.process if restarted else None):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
