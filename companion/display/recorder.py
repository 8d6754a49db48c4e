"""A GIF-recording emulator that fits a long-running daemon (imports ``luma.emulator``).

luma.emulator's ``gifanim`` writes its GIF only from an ``atexit`` hook and calls
``sys.exit`` from ``display()`` once ``max_frames`` are recorded, which inside a display thread
would end only that thread.  :class:`GifRecorder` writes on ``cleanup()`` (what
``Display.close`` calls) and stops recording at ``max_frames`` instead.
"""

from __future__ import annotations

import atexit
from typing import Any

from luma.emulator.device import gifanim
from PIL import Image


class GifRecorder(gifanim):  # type: ignore[misc]
    """``gifanim`` with the same arguments (``filename``, ``duration`` in seconds, ``loop``,
    ``max_frames``...), writing the GIF on :meth:`cleanup`."""

    _max_frames: int | None
    _count: int

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        atexit.unregister(self.write_animation)

    def display(self, image: Image.Image) -> None:
        """Record a frame; frames past ``max_frames`` are dropped."""
        if self._max_frames and self._count >= self._max_frames:
            return
        limit, self._max_frames = self._max_frames, None  # luma would sys.exit() at the limit
        try:
            super().display(image)
        finally:
            self._max_frames = limit

    def cleanup(self) -> None:
        """Write the GIF of the frames recorded so far (once), then forget them."""
        self.write_animation()
        self._images.clear()
