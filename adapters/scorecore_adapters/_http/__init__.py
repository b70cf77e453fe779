"""The HTTP judges' shared plumbing, one concept a module: ``errors`` (every failure as a
JudgeError), ``scrub`` (credentials kept out of what comes back), ``clients`` (one client per
event loop), ``nulls`` (the reply repair), ``exchange`` (one POST), ``transport`` (a judge's
public route to its server) and ``judge`` (the base class of the HTTP judges)."""
