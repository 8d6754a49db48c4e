"""The systemd unit (systemd/companion.service): ``systemd-analyze verify`` accepts it, it runs
as an unprivileged user and leaves GPIO, SPI and the serial port reachable."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SYSTEMD = Path(__file__).resolve().parent.parent / "systemd"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is missing")
def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    # The unit names the installed program; point it at this venv's so that verify can stat it.
    companion = Path(sys.executable).parent / "companion"
    unit = tmp_path / "companion.service"
    unit.write_text((SYSTEMD / "companion.service").read_text()
                    .replace("/opt/companion/bin/companion", str(companion)))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def test_the_unit_runs_unprivileged_and_keeps_gpio_spi_and_serial_reachable() -> None:
    lines = (SYSTEMD / "companion.service").read_text().splitlines()
    settings = [line.split("=", 1) for line in lines if "=" in line and not line.startswith("#")]
    values: dict[str, list[str]] = {}
    for key, value in settings:
        values.setdefault(key, []).append(value)
    assert values["Type"] == ["notify"] and values["Restart"] == ["on-failure"]
    assert values["User"] == ["companion"] and values["StateDirectory"] == ["companion"]
    assert values["SupplementaryGroups"] == ["gpio spi dialout"]
    assert values["PrivateDevices"] == ["no"]
    allowed = {value.split()[0] for value in values["DeviceAllow"]}
    assert {"char-gpiochip", "char-spi", "char-ttyACM"} <= allowed
    assert "WatchdogSec" in values and values["RestartPreventExitStatus"] == ["66 78"]
