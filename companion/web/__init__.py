"""The table on a phone: a live web page served by the companion (``[web] listen``).

:mod:`companion.web.page` draws the page from the screens the matrix shows (no server, no
network); :mod:`companion.web.server` serves it live with Tornado, imported only when
``[web] listen`` is set (the web extra: ``pip install 'gardens-companion[web]'``).
"""

WEB_INSTALL = "pip install 'gardens-companion[web]'"
"""How to install what the live page needs."""
