"""The daemon around the referee: the parts the service composes.

- :mod:`.games`: the game to referee, resumed from its journal or new, and its referee;
- :mod:`.health`: readiness, watchdog and status for systemd, the status LED;
- :mod:`.record`: the journal of the game in progress and what the matrix says of it;
- :mod:`.matrix`: the matrix shown now, and the one a reload opens in its place;
- :mod:`.retry`: parts that failed to open, tried again;
- :mod:`.seams`: what the service asks of the link, the matrix, the controls and the journal.

May import every part of the data path (board, referee, rules, journal, display), the
configuration and the shared modules; nothing but the command line imports the daemon's
insides, and the tools beside it only its composition root.
"""
