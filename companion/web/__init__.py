"""The table on a phone: a live web page served by the companion (``[web] listen``).

:mod:`companion.web.page` draws the page from the screens the matrix shows (no server, no
network); :mod:`companion.web.server` serves it live with Tornado, imported only when
``[web] listen`` is set (the web extra: ``pip install 'gardens-companion[web]'``), with the
Tornado handlers of :mod:`companion.web.handlers`, which the scoreboard's page serves too.

May import the data path's parts (referee screens, rules, journal, display), the
configuration, the replay's reading of finished games and the shared modules; the daemon
opens it, it never imports the daemon.
"""

WEB_INSTALL = "pip install 'gardens-companion[web]'"
"""How to install what the live page needs."""
