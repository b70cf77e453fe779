"""docs/cli.md's synopsis lists every subcommand, argument and flag the parser has, and no other.

The first ```sh block of docs/cli.md is the synopsis: one ``scorecore COMMAND …`` per command,
continued on indented lines. Each flag there (``--cache``, ``-o``) must be an option of that
command's parser and each option of the parser (by any of its names) must be there; each
positional argument's metavar (``SCORERS``, ``BATCH``) must be there too.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from scorecore_adapters.cli._commands import parser

ROOT = Path(__file__).resolve().parents[3]
FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")


def _synopsis() -> dict[str, str]:
    text = (ROOT / "docs" / "cli.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.DOTALL)
    assert block is not None, "docs/cli.md has no ```sh synopsis"
    commands: dict[str, str] = {}
    name = ""
    for line in block.group(1).splitlines():
        if line.startswith("scorecore "):
            name = line.split()[1]
            assert name not in commands, f"{name} is in the synopsis twice"
            commands[name] = line
        else:
            assert line.startswith(" "), f"not a synopsis line: {line!r}"
            assert name, f"a continuation before any command: {line!r}"
            commands[name] += " " + line.strip()
    return commands


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(found) == 1
    return dict(found[0].choices)


def _actions(command: argparse.ArgumentParser) -> list[argparse.Action]:
    """The command's arguments, and those of its own sub-commands (``datasets add``)."""
    found: list[argparse.Action] = []
    for action in command._actions:
        found.append(action)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_actions(sub))
    return found


SYNOPSIS = _synopsis()
COMMANDS = _subcommands()


def test_the_synopsis_has_every_command() -> None:
    """Each subcommand of the parser has a synopsis line, and each line a subcommand."""
    assert set(SYNOPSIS) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_synopsis_lists_exactly_the_commands_flags(command: str) -> None:
    """Every option and positional argument of the command is in its synopsis, and every flag
    of its synopsis is one of its options (a hidden, deprecated flag is in neither)."""
    line = SYNOPSIS.get(command, "")
    shown = set(FLAG.findall(line))
    actions = [a for a in _actions(COMMANDS[command])
               if not isinstance(a, argparse._HelpAction) and a.help != argparse.SUPPRESS]
    names = {name for a in actions for name in a.option_strings}
    missing = sorted(
        "/".join(a.option_strings) for a in actions
        if a.option_strings and not shown.intersection(a.option_strings))
    assert not missing, f"scorecore {command}: not in the docs/cli.md synopsis: {missing}"
    unknown = sorted(shown - names)
    assert not unknown, f"scorecore {command}: the synopsis shows unknown flags {unknown}"
    words = set(re.findall(r"[A-Z][A-Z_]*", line))
    # a sub-command's ACTION is shown by its names (checked below), not by its metavar
    positional = {word for a in actions if not a.option_strings
                  and not isinstance(a, argparse._SubParsersAction)
                  for word in re.findall(r"[A-Z][A-Z_]*", str(a.metavar or a.dest))}
    assert positional <= words, (command, sorted(positional - words))
    subcommands = {name for a in actions if isinstance(a, argparse._SubParsersAction)
                   for name in a.choices}
    assert subcommands <= set(line.split()), (command, sorted(subcommands - set(line.split())))
