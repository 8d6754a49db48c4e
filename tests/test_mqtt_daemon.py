"""The daemon with ``[mqtt]`` on, against a real Mosquitto (the ``broker`` fixture): built
as ``companion run`` builds it, on the simulated board with its virtual players, its
journal published step by step; and the configuration's refusals.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import Broker, DaemonThread, Listener
from test_mqtt import same_as_journal

from companion.config import MqttConfig
from companion.display import make_device
from companion.errors import ConfigError
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
            assert heard.wait(lambda: same_as_journal(heard, journal.path))
        assert heard.wait(lambda: heard.on("gardens/t1/status")[-1:] == [b"offline"])
    finally:
        heard.close()
    state = json.loads(heard.on("gardens/t1/state")[-1])
    assert state["steps"] == len(running.commits)
    assert state["game_id"] == journal.path.name.removesuffix(".jsonl")


def test_a_password_file_that_cannot_be_read_stops_the_start(tmp_path: Path,
                                                              broker: Broker) -> None:
    config = demo_config("enceladus", 2, 5, "hexagonal", tmp_path / "journal")
    missing = tmp_path / "nowhere"
    config = replace(config, mqtt=MqttConfig(broker=broker.url, table="t1", username="u",
                                             password_file=str(missing)))
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    with ExitStack() as stack, pytest.raises(ConfigError) as refused:
        seat(config, stack, device=device)
    assert str(refused.value) == (f"[mqtt] password_file {missing} cannot be read (No such "
                                  "file or directory)")


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
    from companion.config import load_config

    path = tmp_path / "companion.toml"
    path.write_text(f"[mqtt]\n{lines}\n")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    assert [p for p in refused.value.problems if p.startswith(f"{path}, {problem}")], \
        refused.value.problems


def test_broker_urls_give_the_scheme_s_port_when_they_name_none(tmp_path: Path) -> None:
    from companion.config import broker_address, load_config

    path = tmp_path / "companion.toml"
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
    import subprocess
    import sys

    code = SEATED.format(folder=str(tmp_path), broker="")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_mqtt_without_paho_installed_is_a_config_error_naming_the_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import sys\nsys.modules['paho'] = None  # as if the mqtt extra were not installed\n"
            + SEATED.format(folder=str(tmp_path), broker="mqtt://127.0.0.1:1"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.splitlines()[0] == (
        "[mqtt] broker is set but the table cannot be published: paho-mqtt is not installed "
        "(pip install 'gardens-companion[mqtt]')")
    assert list(tmp_path.glob("*.jsonl")) == []  # no journal of a game that never began
