"""The board's side of the companion: where the data path starts.

- :mod:`companion.board.protocol`: wire protocol v1 (``hardware/PROTOCOL.md``): message
  types, the incremental line parser and the encoder; pure, no I/O.
- :mod:`companion.board.link`: the pyserial transport that feeds the daemon's event queue and
  reconnects a lost board.
- :mod:`companion.board.gpio_matrix`: a presence board scanned from the Pi's GPIO instead.
- :mod:`companion.board.pins`: the gpiozero pin factory and pin claims every GPIO part shares.
- :mod:`companion.board.debounce`: the one debounce of readings, cell by cell or button by
  button.

May import the rules (cells and pieces), the configuration and the shared modules (errors,
events, bursts); never the referee, the display or the daemon.
"""
