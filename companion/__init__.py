"""Gardens Companion: a referee and score keeper beside a physical board of the Gardens games.

The packages follow the data path: :mod:`.board` (the sensor board's messages) ->
:mod:`.referee` (steps recognised from them) -> :mod:`.rules` (the games), :mod:`.journal`
(the record) and :mod:`.display` (the LED matrix); :mod:`.daemon` composes them into the
service ``companion run`` starts.  Beside them: :mod:`.tools` (monitor, trace, replay),
:mod:`.sim` (the simulated board and players) and :mod:`.web` (the live page).  At the root,
what all share: :mod:`.errors`, :mod:`.extras` (which optional parts are installed),
:mod:`.events`, :mod:`.files`, :mod:`.bursts`, the configuration (:mod:`.config`) and the
command line (:mod:`.cli`).  What each package may import is checked by
``tests/test_layout.py``.
"""

__version__ = "0.1.0"
