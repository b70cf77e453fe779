"""``python -m scorecore_adapters`` runs the ``scorecore`` command."""

from __future__ import annotations

import sys

from scorecore_adapters.cli import main

sys.exit(main())
