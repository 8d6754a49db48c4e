"""``make_device``: luma devices from ``luma.core.cmdline`` options, and every bad option
refused with a sentence naming it."""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path

import pytest
from PIL import Image

from companion.display import Screen, make_device, render
from companion.display.device import missing
from companion.errors import ConfigError
from tests.conftest import file_size_limit

SCREEN = Screen("mars", "mars", {}, message="Roll", scores=((1, "3 pts"),), to_move=1)


class Clock:
    """A clock the test moves on."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def solid(index: int) -> Image.Image:
    """An 8 x 8 frame of its own colour (no two alike, so the GIF keeps each)."""
    return Image.new("RGB", (8, 8), (40 * index % 256, 255 - 30 * index % 256, 90))


def test_dummy_keeps_the_last_image() -> None:
    device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
    image = render(SCREEN, width=16, height=16, mode="RGB")
    device.display(image)
    assert device.image.tobytes() == image.tobytes()


def test_max7219_chain_on_a_bus_free_interface_is_a_32x8_mono_device() -> None:
    device = make_device({"display": "max7219", "width": 32, "height": 8, "interface": "noop",
                          "block_orientation": -90, "contrast": 16})
    assert (device.width, device.height, device.mode) == (32, 8, "1")
    device.display(render(SCREEN, width=32, height=8, mode="1"))


@pytest.mark.skipif(importlib.util.find_spec("spidev") is not None
                    and os.path.exists("/dev/spidev0.0"), reason="this machine has SPI")
def test_max7219_on_spi_without_spi_names_what_to_fix() -> None:
    with pytest.raises(ConfigError, match="display='max7219'|interface='spi'"):
        make_device({"display": "max7219", "width": 32, "height": 8})


def test_capture_writes_one_png_per_frame(tmp_path: Path) -> None:
    template = str(tmp_path / "frame_{0:03}.png")
    device = make_device({"display": "capture", "width": 16, "height": 16, "scale": 1,
                          "transform": "none", "file_template": template})
    device.display(render(SCREEN, width=16, height=16, mode="RGB"))
    with Image.open(tmp_path / "frame_001.png") as png:
        assert png.size == (16, 16)


def test_capture_on_a_full_disk_raises_and_leaves_no_empty_png(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from companion.errors import OutputFileError

    template = str(tmp_path / "frame_{0:03}.png")
    device = make_device({"display": "capture", "width": 16, "height": 16, "scale": 1,
                          "transform": "none", "file_template": template})
    image = render(SCREEN, width=16, height=16, mode="RGB")

    def no_space(*args: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as full:
        full.setattr(Path, "write_bytes", no_space)
        with pytest.raises(OutputFileError, match=r"frame_001.png: the disk is full"):
            device.display(image)
    assert list(tmp_path.iterdir()) == []
    device.display(image)  # room again: the frame the matrix shows is the first PNG
    with Image.open(tmp_path / "frame_001.png") as png:
        assert png.convert("RGB").tobytes() == image.tobytes()


def test_gifanim_stops_recording_at_max_frames_instead_of_exiting(tmp_path: Path) -> None:
    from companion.display.recorder import GifRecorder

    clock = Clock()
    path = tmp_path / "anim.gif"
    device = GifRecorder(clock=clock, width=8, height=8, max_frames=2, filename=str(path))
    for frame in range(4):
        clock.now += 0.05
        device.display(solid(frame))
    device.cleanup()
    with Image.open(path) as gif:
        assert getattr(gif, "n_frames", 1) == 2


@pytest.mark.parametrize(("options", "named"), [
    ({"display": "hologram"}, "display"),
    ({"display": "capture", "brightness": 3}, "brightness"),
    ({"display": "max7219", "block_orientation": 45}, "block_orientation"),
    ({"display": "max7219", "rotate": "sideways"}, "rotate"),
    ({"display": "dummy", "width": 0}, "width"),
    ({"display": "dummy", "mode": "CMYK"}, "mode"),
    ({"display": "max7219", "interface": "noop", "contrast": 300}, "contrast"),
    ({"display": "max7219", "interface": "noop", "width": 30}, "width"),
])
def test_a_bad_option_is_refused_by_name(options: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named) as error:
        make_device(options)
    assert str(error.value)[0].isupper() and str(error.value).endswith(".")


def test_a_terminal_emulator_needs_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdout", io.StringIO())
    with pytest.raises(ConfigError, match="asciiblock.*not one"):
        make_device({"display": "asciiblock", "width": 16, "height": 16})


def test_the_emulators_own_options_reach_them_from_the_configuration(tmp_path: Path) -> None:
    from companion.config import parse_config

    luma = parse_config(f'[display]\ndisplay = "capture"\nwidth = 16\nheight = 16\n'
                        f'file_template = "{tmp_path}/m{{0:02}}.png"\n').display.luma
    device = make_device(luma)
    device.display(render(SCREEN, width=16, height=16, mode="RGB"))
    assert (tmp_path / "m01.png").exists()


def test_missing_names_a_framebuffer_that_is_not_there() -> None:
    assert missing({"display": "linux_framebuffer", "framebuffer_device": "/dev/fb99"}) == [
        ("framebuffer_device", "there is no framebuffer /dev/fb99 here")]
    ((key, sentence),) = missing({"display": "linux_framebuffer", "framebuffer_device": "/dev/fd0"})
    assert key == "framebuffer_device" and 'named like "/dev/fb0"' in sentence


def test_missing_names_spidev_for_a_matrix_on_spi() -> None:
    if importlib.util.find_spec("spidev") is not None:
        pytest.skip("spidev is installed here")
    assert missing({"display": "max7219", "interface": "spi"}) == [
        ("interface", 'display = "max7219" on SPI needs the Python package spidev '
                      "(python3-spidev on Raspberry Pi OS), which is not installed")]
    assert missing({"display": "max7219", "interface": "noop"}) == []


def test_missing_names_pygame_without_a_desktop_and_a_terminal_emulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(variable, raising=False)
    ((_, sentence),) = missing({"display": "pygame"})
    assert sentence.startswith('display = "pygame" opens a window, but there is no desktop')
    monkeypatch.setenv("DISPLAY", ":0")
    assert missing({"display": "pygame"}) == []
    ((_, sentence),) = missing({"display": "asciiart"})
    assert "started by systemd it has none" in sentence
    assert missing({"display": "dummy"}) == []


def test_a_display_closed_for_a_reload_leaves_its_matrix_lit() -> None:
    from companion.display import Display

    for switch_off in (True, False):
        device = make_device({"display": "dummy", "width": 16, "height": 16, "mode": "RGB"})
        display = Display(device)
        display.show(SCREEN)
        assert display.wait_frames(1, timeout=5)
        display.close(switch_off=switch_off)
        lit = device.image.getbbox() is not None
        assert lit is not switch_off  # luma's cleanup clears the matrix unless it persists


@pytest.mark.parametrize("contrast", [64, 255])
def test_emulators_draw_at_full_brightness_whatever_the_contrast(tmp_path: Path,
                                                                 contrast: int) -> None:
    template = str(tmp_path / "frame_{0:03}.png")
    device = make_device({"display": "capture", "width": 16, "height": 16, "scale": 1,
                          "transform": "none", "file_template": template, "contrast": contrast})
    image = render(SCREEN, width=16, height=16, mode="RGB")
    device.display(image)
    with Image.open(tmp_path / "frame_001.png") as png:
        assert png.convert("RGB").tobytes() == image.tobytes()


def test_a_gif_frame_lasts_as_long_as_it_stood_on_the_matrix(tmp_path: Path) -> None:
    from companion.display.recorder import GifRecorder

    clock = Clock()
    path = tmp_path / "real-time.gif"
    recorder = GifRecorder(clock=clock, width=8, height=8, transform="none", scale=1,
                           filename=str(path), duration=0.01)
    for frame, at in enumerate([0.0, 0.05, 0.10, 2.6, 2.605]):  # seconds from the first
        clock.now = 100.0 + at
        recorder.display(solid(frame))
    clock.now = 100.0 + 3.605
    recorder.cleanup()
    with Image.open(path) as gif:
        durations = []
        for index in range(getattr(gif, "n_frames", 1)):
            gif.seek(index)
            durations.append(gif.info["duration"])
    # 50 ms frames at the display's frame interval, a still screen for its 2.5 s; a frame
    # replaced within 5 ms (too short for a GIF) gives its time to the next
    assert sum(durations) == 3610 and durations[:2] == [50, 50] and 2500 in durations
    assert len(durations) == 4


def test_a_gif_given_up_while_it_is_written_leaves_the_one_before(tmp_path: Path) -> None:
    """A stop while a long GIF is written does not wait for it: the write ends at the next
    frame, nothing of it is left and the GIF there before stays."""
    from companion.display.recorder import GifRecorder

    clock = Clock()
    path = tmp_path / "matrix.gif"
    path.write_bytes(b"GIF89a the one before")
    recorder = GifRecorder(clock=clock, width=8, height=8, transform="none", scale=1,
                           filename=str(path))
    for frame in range(8):
        clock.now = 100.0 + frame
        recorder.display(solid(frame))
    recorder.abandon()  # no GIF being written yet: nothing to give up
    read: list[int] = []

    class Stopping(Image.Image):
        """Frame 3, at whose reading by the GIF writer the companion is stopped."""

        def copy(self) -> Image.Image:
            read.append(3)
            recorder.abandon()
            return super().copy()

    recorder._images[3].__class__ = Stopping
    recorder.cleanup()
    assert read == [3]
    assert path.read_bytes() == b"GIF89a the one before"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["matrix.gif"]


def test_durations_are_measured_in_the_gifs_hundredths() -> None:
    from companion.display.recorder import durations_ms

    assert durations_ms([0.0, 0.05, 0.1], 0.3) == [50, 50, 200]
    assert durations_ms([0.0, 0.004, 0.05], 0.1) == [0, 50, 50]


def test_missing_gives_the_install_command_for_an_emulator_without_luma_emulator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    find_spec = importlib.util.find_spec
    absent = ("luma.emulator", "pygame")
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name in absent else find_spec(name, *rest))
    assert missing({"display": "gifanim"}) == [
        ("display", 'display = "gifanim" is a luma.emulator device, which is not installed: '
                    "pip install 'gardens-companion[emulator]'")]


def test_the_default_framebuffer_is_the_first_framebuffer_not_the_floppy_drive() -> None:
    from pathlib import Path

    from companion.config import luma_defaults

    shipped = Path(__file__).parents[1] / "config" / "companion.toml"
    assert 'framebuffer_device = "/dev/fb0"' in shipped.read_text(encoding="utf-8")
    assert luma_defaults()["framebuffer_device"] == "/dev/fb0"


def test_an_unknown_display_type_lists_every_type_dummy_and_the_emulators_too() -> None:
    with pytest.raises(ConfigError) as caught:
        make_device({"display": "banana"})
    assert str(caught.value).startswith('Display settings: [display] display must be one of '
                                        '"max7219", ')
    assert str(caught.value).endswith(', not "banana".')
    for display in ("dummy", "gifanim", "capture", "pygame", "linux_framebuffer"):
        assert display in str(caught.value)


def test_a_gif_that_cannot_be_written_whole_leaves_the_one_before(tmp_path: Path) -> None:
    from companion.display import Display
    from companion.display.recorder import GifRecorder
    from companion.errors import OutputFileError

    path = tmp_path / "game.gif"
    path.write_bytes(b"GIF89a the earlier game")
    clock = Clock()
    recorder = GifRecorder(clock=clock, width=64, height=64, transform="none", scale=4,
                           filename=str(path))
    display = Display(recorder, clock=clock)
    for frame in range(20):
        clock.now += 1.0
        recorder.display(Image.effect_noise((64, 64), 60 + frame).convert("RGB"))
    with file_size_limit(4096), pytest.raises(OutputFileError) as raised:
        display.close()  # the noise makes a GIF far larger
    assert str(raised.value) == f"cannot write the GIF {path}: file too large"
    assert path.read_bytes() == b"GIF89a the earlier game"
    assert [p.name for p in tmp_path.iterdir()] == ["game.gif"]
