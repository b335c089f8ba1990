"""holistic: holistic evaluation of language models."""

__version__ = "0.1.0"
