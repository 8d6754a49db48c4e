"""The board controller's side of the companion.

- :mod:`companion.board.protocol`: wire protocol v1 (``hardware/PROTOCOL.md``): message
  types, the incremental line parser and the encoder; pure, no I/O.
- :mod:`companion.board.link`: the pyserial transport that feeds the daemon's event queue and
  reconnects a lost board.
"""
