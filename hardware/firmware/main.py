"""Raspberry Pi Pico entry point: a presence board on USB serial (MicroPython runs ``main.py``
at power-up).  Copy this file and ``gardenboard.py`` to the Pico::

    mpremote cp hardware/firmware/gardenboard.py hardware/firmware/main.py :

then edit the settings below to match the wiring (``hardware/WIRING.md``, "Board
controller").  Everything but the pins and the USB port is in ``gardenboard.py``, which the
companion's test suite runs on a PC against a simulated switch matrix.
"""

import select
import sys
import time

from machine import Pin, unique_id

import gardenboard

# --- settings -------------------------------------------------------------------------------
LAYOUT = "mars"  # the board's layout: enceladus, mars, uranus-hexagonal, -trapezoid, -rhombus
ROW_PINS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)  # GP numbers; driven low one at a time
COLUMN_PINS = (10, 11, 12, 13, 14, 15, 16, 17, 18, 19)  # GP numbers; inputs with pull-ups
DEBOUNCE_MS = 20  # a reading must hold this long (PROTOCOL.md, Timing)
# ---------------------------------------------------------------------------------------------


def main() -> None:
    rows = [Pin(n, Pin.OUT, value=1) for n in ROW_PINS]
    columns = [Pin(n, Pin.IN, Pin.PULL_UP) for n in COLUMN_PINS]
    cells = len(gardenboard.layout_cells(LAYOUT))
    sensor = gardenboard.SwitchMatrix(rows, columns, cells, settle=lambda: time.sleep_us(10))
    out = sys.stdout.buffer
    board_id = "pico-" + "".join("%02x" % b for b in unique_id()[-3:])
    controller = gardenboard.Controller(
        sensor, out.write, layout=LAYOUT, sensing="presence", board_id=board_id,
        debounce_ms=DEBOUNCE_MS, ticks_diff=time.ticks_diff,
    )
    incoming = select.poll()
    incoming.register(sys.stdin, select.POLLIN)
    controller.start(time.ticks_ms())
    while True:
        # Read what the Pi sent without blocking the scan: one byte per ready poll.
        while incoming.poll(0):
            controller.receive(sys.stdin.buffer.read(1))
        controller.poll(time.ticks_ms())
        time.sleep_ms(1)


main()
