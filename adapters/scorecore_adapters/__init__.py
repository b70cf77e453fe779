"""scorecore_adapters: everything that touches the world.

HTTP judges (:mod:`scorecore_adapters.openai`, :mod:`scorecore_adapters.anthropic`), fake
judges and virtual time for tests (:mod:`scorecore_adapters.testing`), retry processors and
delay policies (:mod:`scorecore_adapters.retry`, :mod:`scorecore_adapters.delays`), score
storage and the ``scorecore`` command.
"""

__all__: list[str] = []
