"""pbem: the turn processor for Risk played by email."""

__version__ = "0.1.0"
