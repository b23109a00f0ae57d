__version__ = "0.9"

from .readability import Document
