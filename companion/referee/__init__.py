"""The referee: the observed board against the rules, as a pure state machine of events
to effects.

- :mod:`.referee`: the referee of one game (recognition, guidance, undo, questions);
- :mod:`.recognition`: diffs, the step index, guidance;
- :mod:`.effects`: what the referee asks the world to do;
- :mod:`.screen`: what the matrix should show, built by the referee;
- :mod:`.timers`: the referee's timers, and the one driver of a referee in virtual time;
- :mod:`.mars`, :mod:`.uranus`: the games' inputs that are not cells (dice, cards).

May import the rules, the board's protocol messages and the shared modules (errors,
events); never the display, the journal, the configuration or the daemon: what it needs of
the table comes in :class:`.referee.RefereeSettings`.
"""
