"""Files the commands read and write, every problem said as one sentence.

:func:`read_text` reads a whole input file (a trace, a scenario, a case file);
:func:`open_output` opens a file that is written as it goes (a trace being recorded: what is
written stays, even after Ctrl-C or a power cut); :func:`replaced` writes a file that is only
worth having whole (a GIF): into a temporary file beside it, renamed over it at the end.

Errors are :class:`~companion.errors.InputFileError` and
:class:`~companion.errors.OutputFileError`, whose text names the file and what is wrong
(``"cannot read the trace file t.txt: there is no such file"``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from companion.errors import InputFileError, OutputFileError

_REASONS = {
    errno.ENOENT: "there is no such file",
    errno.EISDIR: "it is a folder",
    errno.ENOTDIR: "a part of its path is a file, not a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.ENAMETOOLONG: "the name is too long",
}


def reason_of(error: OSError) -> str:
    """Why ``error`` happened, in a few words for the end of a sentence (``"there is no such
    file"``, ``"it is a folder"``), the same for every file a command reads or writes."""
    return _REASONS.get(error.errno or 0) or (error.strerror or str(error)).lower()


def special_kind(mode: int) -> str:
    """What a file of ``mode`` is when it is neither a file nor a folder, in a few words
    (``"a named pipe"``); ``""`` for a file or a folder."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    return "a socket" if stat.S_ISSOCK(mode) else "a device"


def read_text(path: str | os.PathLike[str], what: str, *, encoding: str = "utf-8") -> str:
    """The text of the file at ``path``, the ``what`` (``"trace file"``) in messages.

    Raises :class:`InputFileError` when it cannot be read (missing, a folder, no permission,
    a named pipe or a device, which could keep it waiting for ever) or is not text in
    ``encoding``.
    """
    try:
        special = special_kind(os.stat(path).st_mode)  # before opening: a pipe's open waits
        data = b"" if special else Path(path).read_bytes()
    except OSError as error:
        reason = reason_of(error)
        raise InputFileError(f"cannot read the {what} {os.fspath(path)}: {reason}") from None
    if special:
        raise InputFileError(f"cannot read the {what} {os.fspath(path)}: it is {special}, "
                             "not a file")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise InputFileError(
            f"{os.fspath(path)} is not a {what}: it is not text (byte 0x{data[error.start]:02x} "
            f"at position {error.start})"
        ) from None


def output_error(path: str | os.PathLike[str], what: str, error: OSError) -> OutputFileError:
    """The sentence for ``error``, met while writing the ``what`` at ``path``."""
    reason = reason_of(error)
    folder = Path(path).parent
    if error.errno == errno.ENOENT:  # in a folder that is there: a kernel's one, such as /proc
        reason = (f"the folder {folder} takes no new file" if folder.is_dir()
                  else f"there is no folder {folder}")
    return OutputFileError(f"cannot write the {what} {os.fspath(path)}: {reason}")


def open_output(path: str | os.PathLike[str], what: str, *,
                encoding: str = "utf-8") -> TextIO:
    """``path`` opened for writing text (emptied first).  Raises :class:`OutputFileError`."""
    try:
        return open(path, "w", encoding=encoding)  # noqa: SIM115 - the caller closes it
    except OSError as error:
        raise output_error(path, what, error) from None


@contextlib.contextmanager
def replaced(path: str | os.PathLike[str], what: str) -> Iterator[Path]:
    """A temporary path beside ``path`` for the block to write the ``what`` to; renamed over
    ``path`` when the block ends, removed when it raises, so that ``path`` is the whole new
    file or what it was before (never half of one).

    Raises :class:`OutputFileError` when the file cannot be created or written (an
    ``OSError`` of the block included; the block's own :class:`OutputFileError`, for another
    file, as it is).
    """
    target = Path(path)
    if target.is_dir():
        raise OutputFileError(f"cannot write the {what} {target}: it is a folder")
    temp = target.with_name(f".{target.name}.{os.getpid()}.part")
    try:
        os.close(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as error:
        raise output_error(target, what, error) from None
    try:
        yield temp
        os.replace(temp, target)
    except OutputFileError:  # another file the block writes: its own sentence
        temp.unlink(missing_ok=True)
        raise
    except OSError as error:
        temp.unlink(missing_ok=True)
        raise output_error(target, what, error) from None
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
