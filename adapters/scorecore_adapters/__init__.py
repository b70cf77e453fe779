"""scorecore_adapters: everything that touches the world.

HTTP judges (:mod:`scorecore_adapters.openai`, :mod:`scorecore_adapters.anthropic`), fake
judges and virtual time for tests (:mod:`scorecore_adapters.testing`), retry processors and
delay policies (:mod:`scorecore_adapters.retry`, :mod:`scorecore_adapters.delays`), score
storage and the ``scorecore`` command.

Real HTTP judges refuse to run inside a pytest session unless allowed:

>>> from scorecore_adapters import allow_model_requests, model_requests_allowed
>>> with allow_model_requests():
...     model_requests_allowed()
True
"""

from scorecore_adapters._guard import (
    ALLOW_MODEL_REQUESTS_ENV,
    allow_model_requests,
    model_requests_allowed,
    set_allow_model_requests,
)

__all__ = [
    "ALLOW_MODEL_REQUESTS_ENV",
    "allow_model_requests",
    "model_requests_allowed",
    "set_allow_model_requests",
]
