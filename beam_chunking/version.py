"""The package version, in a module of its own that imports nothing.

Any layer may import it (an incremental run fingerprints it; ``beam-chunking --version``
prints it), and ``setup.py`` reads it as text, without importing the package.
"""

__version__ = "0.1.0"
