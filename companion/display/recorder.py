"""Recording emulators that fit a long-running daemon (import ``luma.emulator``).

luma.emulator's ``gifanim`` writes its GIF only from an ``atexit`` hook, shows every frame for
the same ``duration`` and calls ``sys.exit`` from ``display()`` once ``max_frames`` are
recorded, which inside a display thread would end only that thread.  :class:`GifRecorder`
writes on ``cleanup()`` (what ``Display.close`` calls), stops recording at ``max_frames``
instead, and keeps every frame in the GIF for as long as it stood on the matrix, so the GIF
plays in real time: a ticker at the display's frame interval, a still screen for as long as it
stayed.

luma.emulator's ``capture`` saves each PNG through pygame, which says nothing when the disk is
full and leaves an empty file; :class:`PngCapture` writes each PNG whole or not at all, and
raises when it cannot.
"""

from __future__ import annotations

import atexit
import io
import logging
import time
from collections.abc import Callable, Iterator, Sequence

from luma.emulator.device import capture, gifanim
from PIL import Image

from companion.errors import CompanionError
from companion.files import replaced

log = logging.getLogger("companion.display")

SHORTEST_MS = 20
"""The shortest frame a GIF keeps, in milliseconds: browsers show anything shorter for 100 ms,
so a frame replaced sooner is left out (its time goes to the next)."""


def durations_ms(stamps: Sequence[float], end: float) -> list[int]:
    """How long each frame stamped at ``stamps`` (seconds, ascending) stood, up to ``end``, in
    the GIF's hundredths of a second as milliseconds; 0 for a frame shorter than
    :data:`SHORTEST_MS`, whose time goes to the next."""
    out = []
    carried = 0.0
    for i, start in enumerate(stamps):
        stop = stamps[i + 1] if i + 1 < len(stamps) else max(end, start)
        shown = stop - start + carried
        ms = round(shown * 100) * 10
        if ms < SHORTEST_MS and i + 1 < len(stamps):
            out.append(0)
            carried = shown
        else:
            out.append(max(ms, SHORTEST_MS))
            carried = 0.0
    return out


class _Abandoned(CompanionError):
    """The GIF being written is given up (:meth:`GifRecorder.abandon`)."""


class GifRecorder(gifanim):  # type: ignore[misc]
    """``gifanim`` with the same arguments (``filename``, ``loop``, ``max_frames``...), writing
    the GIF on :meth:`cleanup` with each frame as long as it was shown; ``clock`` (seconds,
    monotonic) stamps the frames.  luma's ``duration`` is not used: the matrix's own timing is."""

    _max_frames: int | None
    _count: int
    _images: list[Image.Image]

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 **kwargs: object) -> None:
        super().__init__(**kwargs)
        atexit.unregister(self.write_animation)
        self._clock = clock
        self._stamps: list[float] = []
        self._writing = False
        self._abandoned = False

    def display(self, image: Image.Image) -> None:
        """Record a frame, stamped now; frames past ``max_frames`` are dropped."""
        if self._max_frames and self._count >= self._max_frames:
            return
        limit, self._max_frames = self._max_frames, None  # luma would sys.exit() at the limit
        try:
            super().display(image)
        finally:
            self._max_frames = limit
        self._stamps.append(self._clock())

    def write_animation(self) -> None:
        """Write the GIF of the frames recorded so far, the last one shown until now: whole or
        not at all (a GIF there before stays when the disk is full or Ctrl-C cuts it short).

        A GIF given up while it is written (:meth:`abandon`) is not written either.

        Raises :class:`~companion.errors.OutputFileError` when it cannot be written.
        """
        durations = durations_ms(self._stamps, self._clock())
        frames = [(im, ms) for im, ms in zip(self._images, durations, strict=True) if ms]
        if not frames:
            return
        first, *rest = frames

        def appended() -> Iterator[Image.Image]:  # read by Pillow one frame at a time
            for image, _ in rest:
                if self._abandoned:
                    raise _Abandoned("the GIF is given up")
                yield image

        self._writing, self._abandoned = True, False
        try:
            with replaced(self._filename, "GIF") as temp:
                first[0].save(temp, save_all=True, loop=self._loop, format="GIF",
                              append_images=appended(), duration=[ms for _, ms in frames],
                              optimize=True)
        except _Abandoned:
            log.info("the GIF %s is left unwritten: the companion was stopped while it was "
                     "written", self._filename)
        finally:
            self._writing = False

    def abandon(self) -> None:
        """Give up the GIF being written now, if one is (safe from a signal handler and from
        another thread): the write stops at its next frame and leaves no file, the GIF there
        before kept.  A stop while a GIF of thousands of frames is written does not wait for
        it.  Called when no GIF is being written, it does nothing."""
        if self._writing:
            self._abandoned = True

    def cleanup(self) -> None:
        """Write the GIF of the frames recorded so far (once), then forget them.  Raises
        :class:`~companion.errors.OutputFileError` as :meth:`write_animation` does (the frames
        forgotten all the same)."""
        try:
            self.write_animation()
        finally:
            self._images.clear()
            self._stamps.clear()


class PngCapture(capture):  # type: ignore[misc]
    """``capture`` with the same arguments (``file_template``, ``transform``, ``scale``...):
    each frame is a numbered PNG, written whole or not at all (:func:`companion.files.replaced`).

    :meth:`display` raises :class:`~companion.errors.OutputFileError` when the PNG cannot be
    written (a full disk); that frame is not numbered and no file of it is left.
    """

    _count: int
    _file_template: str
    _last_image: Image.Image

    def display(self, image: Image.Image) -> None:
        """Write ``image`` (the device's size) as the next numbered PNG."""
        assert image.size == self.size
        self._last_image = image
        png = io.BytesIO()
        self._pygame.image.save(self.to_surface(self.preprocess(image), alpha=self._contrast),
                                png, "frame.png")
        filename = self._file_template.format(self._count + 1)
        with replaced(filename, "PNG frame") as temp:
            temp.write_bytes(png.getvalue())
        self._count += 1
