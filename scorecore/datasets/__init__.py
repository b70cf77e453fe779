"""Versioned datasets: items stored under a content-addressed version.

The same items (by id and content) always make the same version, so a batch that records its
dataset's version says exactly what data it ran on.
"""

from scorecore.datasets._digest import item_digest, version_digest

__all__ = ["item_digest", "version_digest"]
