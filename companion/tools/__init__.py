"""The makers' and organisers' tools beside the daemon, each behind a ``companion`` command:

- :mod:`.monitor`: ``companion monitor PORT``, a live view of what a board reports and the
  health of each cell;
- :mod:`.trace`: ``companion record PORT TRACE``, a board's raw stream saved, and its replay
  (``companion sim --replay``);
- :mod:`.replay`: ``companion replay FILE``, a game's journal read back as text and a GIF.

They may import the data path's parts (board, referee, rules, journal, display), the
configuration and the shared modules; none imports the daemon, nor the daemon them.
"""
