"""The simulated board controller and virtual players.

Beside the daemon: may import every part, the daemon's composition root included (the demo
runs the real service); nothing but the command line and the tests import it.
"""
