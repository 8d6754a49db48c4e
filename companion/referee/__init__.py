"""Move recognition: the observed board against the rules; guidance; undo."""
