"""The configuration file: defaults, the commented sample, every problem named key by key
(pins two parts want among them), and what check-config warns this machine lacks."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from companion.config import (
    EMULATORS,
    RELOADABLE,
    BoardConfig,
    ButtonPins,
    Config,
    DisplayConfig,
    GameConfig,
    JournalConfig,
    LogConfig,
    MqttConfig,
    changed_sections,
    check_config,
    config_warnings,
    display_changes,
    known_keys,
    load_config,
    luma_defaults,
    parse_config,
    pin_uses,
)
from companion.errors import ConfigError, UnreadableConfigError

SAMPLE = Path(__file__).resolve().parent.parent / "config" / "companion.toml"
CATALOGUE = SAMPLE.parents[1] / "companion" / "data" / "missions.toml"


def problems_of(text: str, source: str = "test.toml") -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source)
    return caught.value.problems


def only_problem(text: str) -> str:
    problems = problems_of(text)
    assert len(problems) == 1, problems
    return problems[0]


# --- defaults and the commented sample ------------------------------------------------------


def test_empty_file_is_the_builtin_defaults() -> None:
    assert parse_config("") == Config()


def test_defaults_drive_a_32x8_max7219_on_spi_for_two_player_enceladus() -> None:
    config = Config()
    assert (config.game.name, config.game.players) == ("enceladus", 2)
    luma = config.display.luma
    assert (luma["display"], luma["width"], luma["height"], luma["interface"]) == (
        "max7219", 32, 8, "spi",
    )  # fmt: skip
    assert luma["block_orientation"] == -90


def test_sample_file_equals_the_builtin_defaults() -> None:
    assert load_config(SAMPLE) == Config()
    assert check_config(SAMPLE) == []


def _sections(text: str) -> dict[str, list[str]]:
    """The lines of each [section] of the sample, by section name."""
    sections: dict[str, list[str]] = {"": []}
    current = ""
    for line in text.splitlines():
        if header := re.fullmatch(r"\[([a-z.]+)\]", line):
            current = header[1]
            sections[current] = []
        else:
            sections[current].append(line)
    return sections


def test_sample_file_shows_every_key_under_a_comment() -> None:
    sections = _sections(SAMPLE.read_text())
    for section, keys in known_keys().items():
        lines = sections[section]
        for key in keys:
            if key == "options":
                assert sections[f"{section}.{key}"][0].startswith("# "), key
                continue
            at = [i for i, line in enumerate(lines) if re.match(rf"(# )?{key} = ", line)]
            assert at, f"[{section}] {key} is missing from the sample"
            above = lines[at[0] - 1]
            assert above.startswith("# ") and not re.match(r"# \w+ = ", above), (section, key)


def test_known_keys_are_exactly_the_model_fields() -> None:
    keys = known_keys()

    def names(model: type) -> set[str]:
        return {f.name for f in fields(model)}

    assert set(keys["game"]) == names(GameConfig)
    assert set(keys["board"]) == names(BoardConfig)
    assert set(keys["buttons"]) == names(ButtonPins) | {"bounce_ms"}
    # luma.emulator's command-line options are known even where it is not installed
    emulator_cmdline = {"transform", "scale", "duration", "loop", "max_frames"}
    assert set(keys["display"]) == (set(luma_defaults()) | names(DisplayConfig) - {"luma"}
                                    | emulator_cmdline)
    assert set(keys["journal"]) == names(JournalConfig)
    assert set(keys["log"]) == names(LogConfig)
    assert set(keys["mqtt"]) == names(MqttConfig)
    assert set(keys) == names(Config)


def _luma_actions() -> dict[str, Any]:
    cmdline = pytest.importorskip("luma.core.cmdline")
    parser = cmdline.create_parser("test", autocomplete=False)
    return {a.dest: a for a in parser._actions if a.dest not in ("help", "config")}


def test_luma_options_are_those_of_luma_cmdline_with_its_defaults() -> None:
    luma = _luma_actions()
    assert set(luma) <= set(luma_defaults())
    # framebuffer_device: luma's "/dev/fd0" is the floppy drive; ours is the first framebuffer
    ours = {"display", "width", "height", "interface", "block_orientation", "framebuffer_device"}
    for name, action in luma.items():
        if name not in ours:
            assert luma_defaults()[name] == action.default, name


def test_every_choice_of_luma_s_parser_is_accepted_and_nothing_else() -> None:
    for name, action in _luma_actions().items():
        for choice in action.choices or ():
            line = f"{name} = {choice}" if isinstance(choice, int) else f'{name} = "{choice}"'
            assert parse_config(f"[display]\n{line}\n").display.luma[name] == choice, line
        if action.choices:
            assert "must be one of" in only_problem(f'[display]\n{name} = "none of them"\n')
    for display in ("dummy", *EMULATORS):  # luma's parser lists the emulators if installed
        assert parse_config(f'[display]\ndisplay = "{display}"\n').display.luma["display"]


def test_luma_option_types_are_those_of_luma_s_parser() -> None:
    luma = _luma_actions()
    assert luma["num_segments"].type is int
    assert "[display] num_segments must be a whole number, not 2.5" in only_problem(
        "[display]\nnum_segments = 2.5\n")
    assert luma["gpio_reset_hold_time"].type is float
    assert parse_config("[display]\ngpio_reset_hold_time = 1\n").display.luma[
        "gpio_reset_hold_time"] == 1.0
    assert luma["bgr"].nargs == 0  # a flag on luma's command line, true or false here
    assert "[display] bgr must be true or false, not 1" in only_problem("[display]\nbgr = 1\n")
    assert "[display] ftdi_device must be text, not 3" in only_problem(
        "[display]\nftdi_device = 3\n")
    assert luma["spi_mode"].default is None  # unset, luma decides: "" in the file
    assert parse_config('[display]\nspi_mode = ""\n').display.luma["spi_mode"] is None
    assert parse_config("[display]\nspi_mode = 3\n").display.luma["spi_mode"] == 3


def test_the_other_luma_options_are_those_luma_emulators_devices_take_with_their_defaults(
) -> None:
    emulator = pytest.importorskip("luma.emulator.device")
    known = set(_luma_actions())
    taken = {}
    for name in EMULATORS:
        for parameter in inspect.signature(getattr(emulator, name)).parameters.values():
            if parameter.name not in known and parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
                taken[parameter.name] = parameter.default
    assert {k: v for k, v in luma_defaults().items() if k not in known} == taken
    assert set(taken) == {"file_template", "filename", "frame_rate"}


def test_emulator_file_names_are_accepted_and_a_template_needs_the_frame_number() -> None:
    config = parse_config('[display]\ndisplay = "capture"\nfile_template = "f{0:04}.png"\n'
                          'filename = "out/matrix.gif"\nframe_rate = 30\n')
    luma = config.display.luma
    assert (luma["file_template"], luma["filename"], luma["frame_rate"]) == (
        "f{0:04}.png", "out/matrix.gif", 30)
    assert "with {} where the frame number goes" in only_problem(
        '[display]\nfile_template = "frame.png"\n')
    assert "with {} where the frame number goes" in only_problem(
        '[display]\nfile_template = "frame{1}.png"\n')


# --- values ---------------------------------------------------------------------------------


def test_a_full_file_is_read_into_the_models() -> None:
    config = parse_config(
        """
        [game]
        name = "uranus"
        players = 5
        seed = 42
        board = "rhombus"
        [game.options]
        triangle_points = "one_side"
        [board]
        port = "socket://localhost:7777"
        sensing = "presence"
        tray = false
        settle_ms = 250
        heartbeat_timeout_s = 3
        [buttons]
        ok = 5
        roll = "BOARD11"
        status_led = "J8:12"
        bounce_ms = 10
        pull_up = false
        [display]
        display = "gifanim"
        width = 16
        height = 16
        mode = "RGB"
        max_frames = 500
        contrast = 200
        [journal]
        directory = "/tmp/journals"
        fsync = false
        [log]
        level = "debug"
        """
    )
    assert config.game == GameConfig("uranus", 5, 42, "rhombus", {"triangle_points": "one_side"})
    assert config.board.port == "socket://localhost:7777"
    assert (config.board.sensing, config.board.tray, config.board.settle_ms) == (
        "presence", False, 250,
    )  # fmt: skip
    assert config.board.heartbeat_timeout_s == 3.0
    assert config.buttons.pins == ButtonPins(
        ok="GPIO5", roll="GPIO17", status_led="GPIO18", pull_up=False
    )
    assert config.buttons.bounce_ms == 10
    assert config.display.luma["display"] == "gifanim"
    assert (config.display.luma["width"], config.display.luma["max_frames"]) == (16, 500)
    assert config.display.luma["spi_bus_speed"] == 8_000_000  # untouched keys keep defaults
    assert config.display.contrast == 200
    assert config.journal == JournalConfig("/tmp/journals", fsync=False)
    assert config.log.level == "debug"


def test_settle_ms_that_is_not_a_number_names_file_line_key_and_range() -> None:
    problems = problems_of('[game]\nplayers = 2\n\n[board]\nsettle_ms = "fast"\n', "companion.toml")
    assert problems == [
        'companion.toml, line 5: [board] settle_ms must be a whole number of milliseconds '
        'from 0 to 10000, not "fast"'
    ]


SHORT_DEBOUNCE = (
    "[board] debounce_ms must be a whole number of milliseconds from 8 to 1000, not {}; a "
    "shorter one lets a 3 ms sensor glitch through as a piece lifted, and steps nobody made "
    "get committed"
)


@pytest.mark.parametrize("ms", [0, 3, 7])
def test_a_debounce_shorter_than_a_glitch_is_refused_with_the_smallest_safe_value(
    ms: int,
) -> None:
    problems = problems_of(f"[board]\nport = \"loop://\"\ndebounce_ms = {ms}\n", "c.toml")
    assert problems == ["c.toml, line 3: " + SHORT_DEBOUNCE.format(ms)]
    assert parse_config("[board]\ndebounce_ms = 8\n").board.debounce_ms == 8


def test_the_smallest_debounce_is_a_glitch_stretched_by_the_readers_wait() -> None:
    import sys

    from companion.config import CONTACT_GLITCH_MS, MIN_DEBOUNCE_MS, READER_WAIT_MS
    from companion.sim.perform import GLITCH_S

    assert round(GLITCH_S * 1000) == CONTACT_GLITCH_MS  # the glitch the virtual players make
    assert round(sys.getswitchinterval() * 1000) == READER_WAIT_MS
    assert MIN_DEBOUNCE_MS == 8 < BoardConfig().debounce_ms


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_check_config_and_run_refuse_a_debounce_of_zero(command: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "companion.toml"
    path.write_text('[board]\nport = "loop://"\ndebounce_ms = 0\n'
                    f'[journal]\ndirectory = "{tmp_path / "journals"}"\n')
    args = [command, str(path)] if command == "check-config" else [command, "--config", str(path)]
    # A run that accepted the file would referee on loop:// until the timeout.
    done = subprocess.run([sys.executable, "-m", "companion.cli", *args], capture_output=True,
                          text=True, timeout=60, env={"GPIOZERO_PIN_FACTORY": "mock"})
    assert done.returncode == 78
    assert f"{path}, line 3: " + SHORT_DEBOUNCE.format(0) in done.stdout + done.stderr
    assert not (tmp_path / "journals").exists()


def test_every_problem_is_reported_not_just_the_first() -> None:
    problems = problems_of(
        '[game]\nname = "venus"\nplayers = 7\n'
        '[board]\nsensing = "camera"\ntray = "yes"\n'
        '[log]\nlevel = "loud"\n'
    )
    assert [p.split(": ")[0] for p in problems] == [
        f"test.toml, line {n}" for n in (2, 3, 5, 6, 8)
    ]
    assert 'not "venus"' in problems[0] and '"enceladus", "mars" or "uranus"' in problems[0]
    assert "from 2 to 5, not 7" in problems[1]
    assert '"identity" or "presence"' in problems[2]
    assert 'must be true or false, not "yes"' in problems[3]


def test_true_is_not_a_number_of_players() -> None:
    assert "not true" in only_problem("[game]\nplayers = true\n")


def test_a_fraction_of_a_millisecond_is_refused() -> None:
    assert "whole number" in only_problem("[buttons]\nbounce_ms = 2.5\n")


def test_seconds_accept_whole_numbers_and_fractions() -> None:
    config = parse_config("[board]\nready_timeout_s = 3\nheartbeat_timeout_s = 0.5\n")
    assert (config.board.ready_timeout_s, config.board.heartbeat_timeout_s) == (3.0, 0.5)


def test_unknown_key_suggests_the_nearest_known_key() -> None:
    problem = only_problem("[board]\n\nsetle_ms = 300\n")
    assert problem == (
        "test.toml, line 3: [board] setle_ms is not a known key; did you mean settle_ms?"
    )


def test_unknown_key_without_a_near_one_points_to_the_sample() -> None:
    assert "config/companion.toml lists the keys" in only_problem("[log]\ncolour = 1\n")


def test_key_in_the_wrong_section_says_where_it_belongs() -> None:
    problem = only_problem("[board]\ncontrast = 10\n")
    assert problem.endswith("[board] contrast is not a key of [board]; it belongs in [display]")


def test_key_outside_any_section_says_where_it_belongs() -> None:
    problem = only_problem('port = "/dev/ttyACM0"\n')
    assert problem == "test.toml, line 1: port is outside any section; it belongs in [board]"


def test_unknown_section_suggests_the_nearest_section() -> None:
    problem = only_problem("[game]\n[buttns]\nok = 4\n")
    assert problem == "test.toml, line 2: [buttns] is not a known section; did you mean [buttons]?"


def test_section_that_is_not_a_table() -> None:
    assert only_problem("log = 3\n").endswith("log must be a section [log], not 3")


def test_dotted_keys_are_found_on_their_line() -> None:
    problem = only_problem('\nboard.sensing = "camera"\n')
    assert problem.startswith("test.toml, line 2: [board] sensing must be")


def test_key_inside_a_multiline_string_is_not_mistaken_for_a_key() -> None:
    text = '[journal]\ndirectory = """\nfsync = 1\n"""\nfsync = "no"\n'
    assert only_problem(text).startswith("test.toml, line 5: [journal] fsync")


def test_toml_syntax_error_names_the_line() -> None:
    problem = only_problem("[board]\nbaudrate = 115200\nsettle_ms = = 3\n")
    assert problem.startswith("test.toml, line 3: this is not valid TOML (")


def test_toml_syntax_error_at_the_end_of_the_file() -> None:
    assert only_problem("[log]\nlevel = ").startswith("test.toml, line 2: this is not valid TOML")


def test_config_error_is_a_value_error_with_every_problem_in_its_text() -> None:
    with pytest.raises(ConfigError, match="players") as caught:
        parse_config("[game]\nplayers = 1\nseed = -1\n")
    assert isinstance(caught.value, ValueError)
    assert str(caught.value) == "\n".join(caught.value.problems)
    assert len(caught.value.problems) == 2


# --- game -----------------------------------------------------------------------------------


def test_game_options_pass_through_unchanged() -> None:
    config = parse_config("[game.options]\nmode = 'cooperative'\ntube = false\n")
    assert dict(config.game.options) == {"mode": "cooperative", "tube": False}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[game]\nplayers = 3\n[game.options]\nmartians_per_player = 2\n", 4,
         "martians_per_player"),
        ("[game.options]\nmode = 'coop'\n", 2, "mode"),
        ("[game.options]\nfoo = 1\n", 2, "foo"),
        ("[game]\nname = 'mars'\n[game.options]\nplant_score = 'all'\n", 4, "plant_score"),
    ],
)
def test_game_options_the_rules_refuse_are_named_by_line_and_key(
    text: str, line: int, words: str
) -> None:
    # check-config finds what `companion run` would refuse: the rules core judges the options
    problem = only_problem(text)
    assert problem.startswith(f"test.toml, line {line}: [game] "), problem
    assert words in problem


def test_game_options_must_be_single_values() -> None:
    problem = only_problem("[game.options]\ncolours = ['blue', 'red']\n")
    assert problem.startswith("test.toml, line 2: [game.options] colours must be a single value")
    assert "not 2026-01-01" in only_problem("[game.options]\nstart = 2026-01-01\n")


def test_game_options_must_be_a_table() -> None:
    assert "must be a table [game.options]" in only_problem("[game]\noptions = 3\n")


def test_uranus_board_must_be_one_of_the_three() -> None:
    problem = only_problem('[game]\nname = "uranus"\nboard = "square"\n')
    assert '"hexagonal", "trapezoid" or "rhombus", not "square"' in problem


# --- board ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "port",
    ["/dev/serial/by-id/usb-Raspberry_Pi_Pico_E6614-if00", "/dev/ttyAMA0", "loop://",
     "socket://192.168.1.20:7777", "rfc2217://board.local:2217?ign_set_control",
     "spy:///dev/ttyACM0?file=/tmp/spy.txt", "hwgrep://2e8a:000a"],
)  # fmt: skip
def test_serial_ports_that_are_accepted(port: str) -> None:
    assert parse_config(f'[board]\nport = "{port}"\n').board.port == port


@pytest.mark.parametrize("port", ["ttyACM0", "/", "ftp://x", "socket://localhost", ""])
def test_serial_ports_that_are_refused(port: str) -> None:
    assert "a device path such as" in only_problem(f'[board]\nport = "{port}"\n')


# --- buttons --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "pin"),
    [("17", "GPIO17"), ('"GPIO17"', "GPIO17"), ('"gpio4"', "GPIO4"), ('"BCM26"', "GPIO26"),
     ('"BOARD11"', "GPIO17"), ('"J8:40"', "GPIO21")],
)  # fmt: skip
def test_pin_forms_gpiozero_knows_are_stored_as_gpio_names(written: str, pin: str) -> None:
    assert parse_config(f"[buttons]\nok = {written}\n").buttons.pins.ok == pin


@pytest.mark.parametrize("written", ["28", '"GPIO40"', '"BOARD6"', '"pin 3"', "true", '""'])
def test_pins_that_are_refused(written: str) -> None:
    assert "a GPIO pin such as" in only_problem(f"[buttons]\nok = {written}\n")


def test_ground_pin_of_the_header_is_named_as_not_a_gpio() -> None:
    assert "header pin 6 is GND, not a GPIO pin" in only_problem('[buttons]\nundo = "BOARD6"\n')


def test_optional_parts_are_none_when_empty() -> None:
    pins = parse_config('[buttons]\nroll = ""\nbuzzer = ""\nstatus_led = ""\n').buttons.pins
    assert (pins.roll, pins.buzzer, pins.status_led) == (None, None, None)


def test_every_header_pin_is_named_as_gpiozero_names_it() -> None:
    mock = pytest.importorskip("gpiozero.pins.mock")
    board = mock.MockFactory().board_info
    for number in range(1, 41):
        ((_, info),) = board.find_pin(f"BOARD{number}")
        undo, select = [p for p in ("GPIO5", "GPIO6", "GPIO12") if p != info.name][:2]
        text = (
            f'[buttons]\nok = "BOARD{number}"\nundo = "{undo}"\nselect = "{select}"\n'
            'buzzer = ""\n[display]\ndisplay = "dummy"\n'
        )
        if info.name.startswith("GPIO"):
            assert parse_config(text).buttons.pins.ok == info.name, number
        else:
            assert f"is {info.name}, not a GPIO pin" in only_problem(text), number


def test_two_parts_on_one_pin() -> None:
    problem = only_problem('[buttons]\nok = 17\nundo = "BOARD11"\n')
    assert problem == (
        "test.toml, line 3: [buttons] undo and [buttons] ok both use GPIO17; "
        "each needs its own pin"
    )


def test_button_on_the_pins_of_the_displays_spi_port() -> None:
    problem = only_problem("[buttons]\nselect = 10\n")
    assert problem == (
        "test.toml, line 2: [buttons] select uses GPIO10 (SPI0 MOSI), which the display "
        "needs; choose another pin"
    )


PRESENCE = '[board]\nsensing = "presence"\n'


def test_a_switch_matrix_on_a_button_pin_and_too_small_for_the_board_is_refused() -> None:
    problems = problems_of(
        f'{PRESENCE}[switches]\nrows = ["GPIO5", "GPIO6"]\ncolumns = ["GPIO17"]\n')
    assert problems == [
        "test.toml, line 5: [switches] columns (column 1) and [buttons] ok both use GPIO17; "
        "each needs its own pin",
        "test.toml, line 4: [switches] 2 rows x 1 columns make 2 switches, but the enceladus "
        "board has 146 cells, one switch each; wire at least 12 rows x 13 columns",
    ]


def test_rows_and_columns_may_not_share_a_pin_however_it_is_written() -> None:
    rows = ", ".join(f'"GPIO{n}"' for n in (4, 5, 6, 12, 13, 16, 19, 20, 21, 26))
    problem = only_problem(
        f'{PRESENCE}[game]\nname = "mars"\n[buttons]\nbuzzer = ""\n'
        f'[switches]\nrows = [{rows}]\ncolumns = [2, 3, "BOARD29", 14, 15, 18, 24, 25, 0, 1]\n')
    assert problem == (
        "test.toml, line 9: [switches] columns (column 3) and [switches] rows (row 2) both "
        "use GPIO5; each needs its own pin"
    )


def test_a_matrix_just_big_enough_for_its_board_is_accepted() -> None:
    rows = ", ".join(f'"GPIO{n}"' for n in (4, 5, 6, 12, 13, 16, 19, 20))
    config = parse_config(f'{PRESENCE}[game]\nname = "uranus"\n[switches]\nrows = [{rows}]\n'
                          'columns = [2, 3, 14, 15, 18, 24, 25, 26]\n')
    assert len(config.switches.rows) * len(config.switches.columns) == 64  # 61 cells


def test_a_switch_matrix_needs_presence_sensing() -> None:
    rows = ", ".join(f'"GPIO{n}"' for n in (4, 5, 6, 12, 13, 16, 19, 20, 21, 26))
    problem = only_problem(f'[game]\nname = "mars"\n[buttons]\nbuzzer = ""\n[switches]\n'
                           f'rows = [{rows}]\ncolumns = [2, 3, 14, 15, 18, 24, 25, 0, 1, 23]\n')
    assert problem.endswith('set [board] sensing = "presence"')


def test_columns_without_rows_are_refused() -> None:
    assert "columns are set but rows are empty" in only_problem(
        '[switches]\ncolumns = ["GPIO5"]\n')


def test_a_ws2812_holds_gpio18() -> None:
    problem = only_problem('[display]\ndisplay = "ws2812"\n[buttons]\nbuzzer = "BOARD12"\n')
    assert problem.endswith(
        "[buttons] buzzer uses GPIO18 (the WS2812 data line), which the display needs; "
        "choose another pin"
    )


def test_the_pis_uart_holds_gpio14_and_15_unless_a_switch_matrix_replaces_the_board() -> None:
    problem = only_problem('[board]\nport = "/dev/serial0"\n[buttons]\nstatus_led = 15\n')
    assert problem.endswith(
        "[buttons] status_led uses GPIO15 (UART RXD), which the board on /dev/serial0 needs; "
        "choose another pin"
    )
    assert parse_config('[board]\nport = "/dev/ttyACM0"\n[buttons]\nstatus_led = 15\n')


def test_spi1_holds_its_bus_and_the_chip_selects_up_to_the_displays() -> None:
    spi1 = '[display]\nspi_port = 1\n'
    assert parse_config(spi1).buttons.pins.ok == "GPIO17"  # CE1 is free with one chip select
    problem = only_problem(spi1 + "spi_device = 1\n")
    assert problem.endswith(
        "[buttons] ok uses GPIO17 (SPI1 CE1), which the display needs; choose another pin")


def test_pin_uses_list_the_fixed_pins_first() -> None:
    config = parse_config('[board]\nport = "/dev/ttyAMA0"\n')
    uses = [(u.pin, u.part, u.role) for u in pin_uses(config)]
    assert uses[:7] == [
        ("GPIO7", "the display", "SPI0 CE1"), ("GPIO8", "the display", "SPI0 CE0"),
        ("GPIO9", "the display", "SPI0 MISO"), ("GPIO10", "the display", "SPI0 MOSI"),
        ("GPIO11", "the display", "SPI0 SCLK"),
        ("GPIO14", "the board on /dev/ttyAMA0", "UART TXD"),
        ("GPIO15", "the board on /dev/ttyAMA0", "UART RXD"),
    ]
    assert uses[7:] == [("GPIO17", "[buttons] ok", ""), ("GPIO27", "[buttons] undo", ""),
                        ("GPIO22", "[buttons] select", ""), ("GPIO23", "[buttons] buzzer", "")]


def test_spi_pins_are_free_when_the_display_does_not_use_spi() -> None:
    config = parse_config('[buttons]\nselect = 10\n[display]\ndisplay = "gifanim"\n')
    assert config.buttons.pins.select == "GPIO10"


# --- display --------------------------------------------------------------------------------


def test_display_keys_outside_luma_are_our_own() -> None:
    config = parse_config("[display]\ncontrast = 10\nframe_interval_ms = 100\nrotate = 2\n")
    assert (config.display.contrast, config.display.frame_interval_ms) == (10, 100)
    assert config.display.luma["rotate"] == 2
    assert "contrast" not in config.display.luma


def test_display_luma_options_hold_every_cmdline_option_for_make_device() -> None:
    luma = parse_config('[display]\ndisplay = "dummy"\n').display.luma
    assert set(luma) == set(luma_defaults())
    assert luma["spi_mode"] is None and luma["gpio"] is None


@pytest.mark.parametrize(
    ("line", "allowed"),
    [("block_orientation = 45", "0, 90, -90 or 180"), ("rotate = true", "0, 1, 2 or 3"),
     ('mode = "grey"', '"1", "RGB" or "RGBA"'), ("contrast = 300", "from 0 to 255"),
     ('i2c_address = "0xZZ"', 'such as "0x3C"'), ('display = "ssd9999"', '"max7219"'),
     ("spi_bus_speed = 3000000", "500000, 1000000, 2000000"),
     ("i2c_port = -1", "i2c_port must be an I2C bus number from 0 to 255"),
     ('i2c_port = "1"', "i2c_port must be an I2C bus number"),
     ("spi_port = 9", "spi_port must be an SPI bus number from 0 to 6"),
     ("spi_device = -1", "spi_device must be an SPI chip select from 0 to 3"),
     ("spi_transfer_size = 0", "spi_transfer_size must be a whole number of bytes"),
     ("spi_mode = 4", "spi_mode must be an SPI mode from 0 to 3"),
     ("gpio_data_command = 99", "gpio_data_command must be a BCM GPIO number"),
     ("gpio_chip_select = -2", "gpio_chip_select must be a BCM GPIO number"),
     ("gpio_reset = 28", "gpio_reset must be a BCM GPIO number of the 40-pin header"),
     ("gpio_backlight = 1.5", "gpio_backlight must be a BCM GPIO number"),
     ("h_offset = -1", "h_offset must be a whole number of pixels from 0 to 255"),
     ("v_offset = 1000", "v_offset must be a whole number of pixels from 0 to 255")],
)  # fmt: skip
def test_display_values_that_are_refused(line: str, allowed: str) -> None:
    assert allowed in only_problem(f"[display]\n{line}\n")


# --- files and reloading --------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="there is no configuration file here"):
        load_config(tmp_path / "nope.toml")


def test_directory_instead_of_a_file(tmp_path: Path) -> None:
    with pytest.raises(UnreadableConfigError) as caught:
        check_config(tmp_path)
    assert str(caught.value) == f"{tmp_path}: this is a directory, not a configuration file"


def test_file_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[log]\nlevel = "info"\n# caf\xe9\n')
    with pytest.raises(UnreadableConfigError) as caught:
        check_config(path)
    assert str(caught.value) == f"{path}, line 3: this is not UTF-8 text"


def test_file_saved_with_a_byte_order_mark_says_so(tmp_path: Path) -> None:
    """Windows editors save "UTF-8 with BOM"; TOML readers refuse the mark at column 1."""
    path = tmp_path / "bom.toml"
    path.write_bytes(b'\xef\xbb\xbf[log]\nlevel = "info"\n')
    with pytest.raises(UnreadableConfigError) as caught:
        check_config(path)
    assert str(caught.value) == (f"{path}, line 1: the file begins with a byte order mark "
                                 '(saved as "UTF-8 with BOM"); save it as plain UTF-8')


def test_check_config_lists_problems_with_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "companion.toml"
    path.write_text('[board]\ndice = "cup"\n[log]\nlevel = 3\n')
    problems = check_config(path)
    assert [p.split(": ")[0] for p in problems] == [f"{path}, line 2", f"{path}, line 4"]


def test_reload_applies_a_new_display_and_keeps_the_game() -> None:
    old = parse_config("[game]\nplayers = 3\n")
    new = parse_config("[game]\nplayers = 4\n[display]\ncontrast = 5\n")
    assert display_changes(old, new)
    assert changed_sections(old, new) == ("game", "display")
    assert [s for s in changed_sections(old, new) if s not in RELOADABLE] == ["game"]
    reloaded = old.replace_display(new.display)
    assert reloaded.display.contrast == 5 and reloaded.game.players == 3


def test_no_display_change_when_only_the_game_changes() -> None:
    old, new = Config(), parse_config('[game]\nname = "mars"\n')
    assert not display_changes(old, new)
    assert changed_sections(old, new) == ("game",)


def test_display_config_equality_follows_its_options() -> None:
    assert DisplayConfig() == parse_config("[display]\nwidth = 32\n").display
    assert DisplayConfig() != parse_config("[display]\nwidth = 64\n").display


def test_the_smallest_switch_matrix_is_the_one_the_wiring_guide_gives() -> None:
    from companion.config import matrix_too_small

    wiring = (SAMPLE.parents[1] / "hardware" / "WIRING.md").read_text(encoding="utf-8")
    table = {m[1]: (m[2], m[3]) for m in re.finditer(
        r"^\| `(enceladus|mars)` \| \d+ \| (\d+) x (\d+) \|", wiring, re.MULTILINE)}
    table |= {f"uranus-{b}": table_row for b in ("hexagonal", "trapezoid", "rhombus")
              for table_row in re.findall(r"^\| `uranus-hexagonal`.*? \| (\d+) x (\d+) \|",
                                          wiring, re.MULTILINE)}
    assert len(table) == 5
    for layout, (rows, columns) in table.items():
        sentence = matrix_too_small(1, 1, layout)
        assert sentence is not None
        assert sentence.endswith(f"wire at least {rows} rows x {columns} columns"), layout


def test_check_config_warns_of_what_this_machine_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "companion.toml"
    path.write_text('[buttons]\nbuzzer = ""\n[display]\ndisplay = "linux_framebuffer"\n'
                    'framebuffer_device = "/dev/fb99"\n')
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "tin")
    assert config_warnings(path) == [
        f"{path}, line 1: warning: GPIOZERO_PIN_FACTORY=tin is not a gpiozero pin factory "
        "installed here; run would referee without the buttons, the buzzer and the status LED "
        "until one is (off a Raspberry Pi, set GPIOZERO_PIN_FACTORY=mock)",
        f"{path}, line 5: warning: [display] there is no framebuffer /dev/fb99 here; run would "
        "referee without the matrix and try it again",
    ]
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    path.write_text('[display]\ndisplay = "dummy"\n[journal]\ndirectory = "journals"\n')
    assert config_warnings(path) == []


@pytest.mark.parametrize(("directory", "warning"), [
    ("{file}", "the journal folder {file} is a file, not a folder"),
    ("{file}/games", "the journal folder {file}/games cannot be made: {file} is a file"),
    ("/proc/1", "the journal folder /proc/1 takes no new file (it is not a folder for files)"),
    # a folder to be made in a kernel's folder, which takes none even from root
    ("/proc/games", "the journal folder /proc/games cannot be made in /proc: it is not a "
                    "folder for files"),
])
def test_check_config_warns_of_a_journal_folder_run_could_not_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, directory: str, warning: str,
) -> None:
    if directory.startswith("/proc/") and not Path("/proc/1").is_dir():
        pytest.skip("needs Linux's /proc")
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    file = tmp_path / "a-file"
    file.write_text("")
    path = tmp_path / "companion.toml"
    path.write_text(f'[display]\ndisplay = "dummy"\n[journal]\n'
                    f'directory = "{directory.format(file=file)}"\n')
    assert config_warnings(path) == [
        f"{path}, line 4: warning: [journal] {warning.format(file=file)}; run would referee "
        "without saving the games"]


def test_relative_journal_folder_and_catalogue_are_from_the_config_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # not the config's folder
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "cards.toml").write_bytes(CATALOGUE.read_bytes())
    path = folder / "companion.toml"
    path.write_text('[game]\nname = "uranus"\n[board]\nmissions = "cards.toml"\n'
                    '[journal]\ndirectory = "games"\n')
    config = load_config(Path("etc") / "companion.toml")
    assert config.board.missions == str(folder / "cards.toml")
    assert config.journal.directory == str(folder / "games")
    path.write_text('[board]\nmissions = "/etc/companion/missions.toml"\n')
    assert load_config(path).board.missions == "/etc/companion/missions.toml"


def test_check_config_warns_of_a_matrix_on_spi_without_spidev(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib.util

    from companion.cli import main

    if importlib.util.find_spec("spidev") is not None:
        pytest.skip("spidev is installed here")
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    assert main(["check-config", str(SAMPLE)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{SAMPLE}, line ") and "warning: [display] display = " in out[0]
    assert "needs the Python package spidev" in out[0]
    assert out[1:] == [f"{SAMPLE}: no problems in the file"]


# --- keys read by their declared types; luma's options from luma's parser -------------------


@pytest.mark.parametrize(("text", "status", "sentence"), [
    ("[log]\nlevel = \n", 78, "line 2: this is not valid TOML ("),
    ("[log]\nlevl = 'info'\n", 78, "line 2: [log] levl is not a known key; did you mean level?"),
    ("[board]\ntray = 'yes'\n", 78, 'line 2: [board] tray must be true or false, not "yes"'),
    ("[board]\n\nbaudrate = 10\n", 78, "line 3: [board] baudrate must be a whole number of "
     "bits per second from 50 to 4000000, not 10"),
    ("[display]\nrotate = 5\n", 78, "line 2: [display] rotate must be one of 0, 1, 2 or 3, not 5"),
    (None, 66, "there is no configuration file here"),
])  # fmt: skip
def test_check_config_says_each_problem_in_one_sentence_and_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | None, status: int,
    sentence: str,
) -> None:
    from companion.cli import main

    path = tmp_path / "companion.toml"
    if text is not None:
        path.write_text(text)
    assert main(["check-config", str(path)]) == status
    said = capsys.readouterr()
    lines = (said.out + said.err).splitlines()
    assert len(lines) == 1 and f"{path}" in lines[0] and sentence in lines[0], lines
    assert "Traceback" not in said.err


def test_a_wrong_pin_in_a_list_is_named_by_its_place_in_the_list() -> None:
    assert only_problem('[switches]\nrows = ["GPIO5", "GPIO40"]\n') == (
        'test.toml, line 2: [switches] rows must be a GPIO pin such as "GPIO17" (also 17, '
        '"BCM17", "BOARD11" or "J8:11"); the header has GPIO0 to GPIO27, not "GPIO40" '
        "(pin 2 of the list)")


def test_the_pins_named_in_messages_are_the_headers_gpiozero_knows() -> None:
    mock = pytest.importorskip("gpiozero.pins.mock")
    board = mock.MockFactory().board_info
    names: set[str] = set()
    for number in range(1, 41):
        names |= {info.name for _, info in board.find_pin(f"BOARD{number}")}
    gpios = sorted(int(name[4:]) for name in names if name.startswith("GPIO"))
    assert f"the header has GPIO{gpios[0]} to GPIO{gpios[-1]}" in only_problem(
        "[buttons]\nok = 99\n")


@pytest.fixture
def luma_parser(monkeypatch: pytest.MonkeyPatch) -> Any:
    """luma.core.cmdline, whose parser the test may change; what the configuration read from
    it is read again before and after the test."""
    import companion.config

    cmdline = pytest.importorskip("luma.core.cmdline")
    cached = (companion.config._luma_options, companion.config._luma_defaults)
    for function in cached:
        function.cache_clear()
    yield cmdline
    monkeypatch.undo()
    for function in cached:
        function.cache_clear()


def test_a_new_option_of_luma_s_parser_is_a_key_of_display(
    luma_parser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_parser = luma_parser.create_parser

    def with_a_new_option(*args: Any, **kwargs: Any) -> Any:
        parser = create_parser(*args, **kwargs)
        parser.add_argument("--fade-steps", type=int, default=5, choices=[1, 5, 10])
        return parser

    monkeypatch.setattr(luma_parser, "create_parser", with_a_new_option)
    assert Config().display.luma["fade_steps"] == 5
    assert parse_config("[display]\nfade_steps = 10\n").display.luma["fade_steps"] == 10
    assert only_problem("[display]\nfade_steps = 3\n").endswith(
        "[display] fade_steps must be one of 1, 5 or 10, not 3")


def test_without_luma_emulator_its_options_are_accepted_and_left_out(
    luma_parser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    display_types = luma_parser.get_display_types

    def without_the_emulator() -> Any:  # what luma finds where luma.emulator is absent
        return {**display_types(), "emulator": []}

    monkeypatch.setattr(luma_parser, "get_display_types", without_the_emulator)
    luma = parse_config('[display]\ntransform = "none"\nscale = 1\n').display.luma
    assert "transform" not in luma and "scale" not in luma
    assert check_config(SAMPLE) == []  # the shipped file, which sets them, still loads
    # the emulators are still display types, so that make_device can say what to install
    assert parse_config('[display]\ndisplay = "gifanim"\n').display.luma["display"] == "gifanim"


def test_make_device_refuses_an_option_with_the_sentence_check_config_gives() -> None:
    from companion.display import make_device

    problem = only_problem("[display]\nwidth = 0\n")
    assert problem.endswith(
        "[display] width must be a whole number of pixels from 1 to 4096, not 0")
    with pytest.raises(ConfigError) as caught:
        make_device({"display": "dummy", "width": 0})
    assert str(caught.value) == (
        "Display settings: [display] width must be a whole number of pixels from 1 to 4096, not 0.")


@pytest.mark.parametrize("key", ["width", "height"])
def test_a_matrix_too_large_to_draw_is_a_configuration_problem(key: str) -> None:
    """A size no image can have (a C long overflows in the drawing) is found by check-config,
    not by the daemon's drawing failing at every frame."""
    problem = only_problem(f"[display]\n{key} = 99999999999999999999\n")
    assert problem.endswith(f"[display] {key} must be a whole number of pixels from 1 to "
                            "4096, not 99999999999999999999")
    assert parse_config(f"[display]\n{key} = 4096\n").display.luma[key] == 4096


@pytest.mark.parametrize("value", ["-1", "inf", "nan", "3601"])
@pytest.mark.parametrize("key", ["gpio_reset_hold_time", "gpio_reset_release_time"])
def test_a_reset_time_luma_cannot_sleep_is_a_configuration_problem(key: str, value: str) -> None:
    """luma sleeps these times as they are when it opens an SPI device with a reset line (the
    MAX7219 by default): a negative one, infinity or not-a-number would fail there, after
    check-config said nothing."""
    problem = only_problem(f"[display]\n{key} = {value}\n")
    assert f"[display] {key} must be " in problem and "from 0 to 3600" in problem, problem
    assert parse_config(f"[display]\n{key} = 0.5\n").display.luma[key] == 0.5


@pytest.mark.parametrize("value", ["0", "-1", "65"])
def test_an_emulator_scale_that_cannot_draw_is_a_configuration_problem(value: str) -> None:
    """luma.emulator asserts a scale of 1 or more at every frame drawn (and a huge one makes
    an image of no possible size): found by check-config, not by a traceback at every frame
    of the daemon's gifanim, capture or pygame matrix."""
    problem = only_problem(f'[display]\ndisplay = "gifanim"\nscale = {value}\n')
    assert problem.endswith(f"[display] scale must be a whole number of emulator pixels per "
                            f"matrix pixel from 1 to 64, not {value}"), problem
    assert parse_config("[display]\nscale = 64\n").display.luma["scale"] == 64


def test_an_emulator_scale_the_default_transform_cannot_draw_is_a_configuration_problem(
) -> None:
    """luma.emulator's default transform, scale2x, asserts a scale of 2 at every frame: a
    gifanim matrix at scale 8 drew no frame and wrote no GIF after check-config said
    nothing."""
    assert only_problem('[display]\ndisplay = "gifanim"\nscale = 8\n').endswith(
        'line 3: [display] scale 8 needs a transform other than "scale2x" (the default), '
        'which draws at scale 2 only; set transform = "identity"')
    luma = parse_config('[display]\ndisplay = "gifanim"\nscale = 8\ntransform = "identity"\n'
                        ).display.luma
    assert (luma["scale"], luma["transform"]) == (8, "identity")
    assert parse_config('[display]\ndisplay = "max7219"\nscale = 8\n')  # no emulator


@pytest.mark.parametrize("value", ["-1", "65536"])
def test_a_gif_loop_count_a_gif_cannot_hold_is_a_configuration_problem(value: str) -> None:
    """A GIF holds its repeat count in 16 bits, written when the daemon stops: a count
    outside them is found by check-config, not by the GIF lost at the stop with a
    traceback."""
    problem = only_problem(f'[display]\ndisplay = "gifanim"\nloop = {value}\n')
    assert problem.endswith(f"[display] loop must be a whole number of repeats from 0 to "
                            f"65535, not {value}"), problem
    assert parse_config("[display]\nloop = 65535\n").display.luma["loop"] == 65535


def test_players_names_are_read_and_go_into_each_new_games_journal_header(
        tmp_path: Path) -> None:
    from companion.daemon.service import new_game
    from companion.rules import load

    config = parse_config('[game]\nplayers = 3\n[players]\nnames = ["Ann", " Bob  Lee "]\n')
    assert config.players.seat_names(3) == ["Ann", "Bob Lee", ""]
    config = replace(config, journal=replace(config.journal, directory=str(tmp_path)))
    _, journal = new_game(config, load("enceladus").RULES, tmp_path, fsync=False)
    assert journal is not None
    header = json.loads(journal.path.read_text().splitlines()[0])
    assert header["names"] == ["Ann", "Bob Lee", ""]
    for text, said in (('names = "Ann"', "[players] names must be"),
                       (f'names = ["{"x" * 41}"]', "[players] names must be"),
                       ('names = ["a", "b", "c", "d", "e", "f"]', "[players] names must be")):
        assert said in only_problem(f"[players]\n{text}\n"), text


def test_more_players_names_than_players_are_refused_with_the_key_named() -> None:
    """Names past the last seat would be dropped without a word; blank ones at the end of
    the list name no seat and are let be, as on the live page's form."""
    assert only_problem('[game]\nplayers = 2\n[players]\nnames = ["Ann", "Bob", "Cy"]\n') == (
        "test.toml, line 4: [players] names lists 3 names but [game] players is 2; give at "
        "most one name per player")
    config = parse_config('[game]\nplayers = 2\n[players]\nnames = ["Ann", "Bob", " "]\n')
    assert config.players.seat_names(2) == ["Ann", "Bob"]


@pytest.mark.parametrize(("toml", "module", "sentence"), [
    ('[web]\nlisten = "127.0.0.1:8080"\n', "tornado",
     "line 2: [web] listen is set but the web page cannot be served: tornado is not installed "
     "(pip install 'gardens-companion[web]')"),
    ('[mqtt]\nbroker = "mqtt://127.0.0.1:1883"\n', "paho",
     "line 2: [mqtt] broker is set but the table cannot be published: paho-mqtt is not "
     "installed (pip install 'gardens-companion[mqtt]')"),
], ids=["web", "mqtt"])
def test_check_config_refuses_what_run_refuses_without_its_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, module: str, sentence: str
) -> None:
    import sys

    path = tmp_path / "companion.toml"
    path.write_text(toml)
    assert check_config(path) == []  # installed here, as the test extra has them
    for name in [m for m in sys.modules if m == module or m.startswith(f"{module}.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "-packages" not in p])
    assert check_config(path) == [f"{path}, {sentence}"]


def test_check_config_refuses_a_web_address_that_run_cannot_listen_on(tmp_path: Path) -> None:
    """An address that is not this machine's stops run with 78, so check-config says so; a
    port in use does not (the companion checked may be the one serving on it)."""
    import socket

    path = tmp_path / "companion.toml"
    path.write_text('[web]\nlisten = "192.0.2.1:8080"\n')  # TEST-NET-1: nobody's address
    [problem] = check_config(path)
    assert problem.startswith(
        f"{path}, line 2: [web] listen '192.0.2.1:8080' cannot be listened on: ")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        path.write_text(f'[web]\nlisten = "127.0.0.1:{taken.getsockname()[1]}"\n')
        assert check_config(path) == []
