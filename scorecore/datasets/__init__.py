"""Versioned datasets: items stored under a content-addressed version.

The same items (by id and content) always make the same version, so a batch that records its
dataset's version says exactly what data it ran on.
"""

__all__: list[str] = []
