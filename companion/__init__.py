"""Gardens Companion: a referee and score keeper beside a physical board of the Gardens games."""

__version__ = "0.1.0"
