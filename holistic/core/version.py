"""The package's own version, in one place (``holistic.__version__`` re-exports it)."""

__version__ = "0.1.0"
