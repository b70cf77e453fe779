"""llama.cpp for the local judge: the worker process and its client, one native run, the
OpenAI-compatible server, its guard and the watch on its life (public face:
:mod:`scorecore_adapters.local`)."""
