"""Pass/fail checks: small code scorers that give 1 or 0 (Mastra's ``checks``).

Text checks read the assistant messages' texts of an agent run (``shape=AGENT``, the default)
or a plain ``str`` output (``shape=TEXT``); tool checks read the tool calls of an agent run.
An agent run whose output has no messages is not scorable.

>>> from scorecore.scorers import TEXT, checks
>>> check = checks.includes("paris", shape=TEXT)
>>> check.run_sync(input="", output="Paris is the capital.").unwrap().score
1.0
"""

from scorecore.scorers.checks._text import equals, excludes, includes, matches, similarity
from scorecore.scorers.checks._tools import (
    called_tool,
    did_not_call,
    max_tool_calls,
    no_tool_errors,
    tool_order,
    used_no_tools,
)

__all__ = [
    "called_tool",
    "did_not_call",
    "equals",
    "excludes",
    "includes",
    "matches",
    "max_tool_calls",
    "no_tool_errors",
    "similarity",
    "tool_order",
    "used_no_tools",
]
