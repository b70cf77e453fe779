"""The CLI dispatches through one command table: no subcommand without a handler, no default.

A subcommand the parser knows but no handler runs used to fall through ``main``'s ``match`` to
its default arm and silently run ``report``.
"""

from __future__ import annotations

import argparse
import io
from typing import TextIO

import attrs
import pytest

from scorecore_adapters import cli
from scorecore_adapters.cli import main
from scorecore_adapters.cli._commands import COMMANDS, Command, parser


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    found = [a for a in parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(found) == 1
    return dict(found[0].choices)


def _minimal_argv(name: str, command: argparse.ArgumentParser) -> list[str]:
    """The subcommand with a value for each positional argument and each required option."""
    argv = [name]
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):  # datasets ACTION: its first
            first, sub = next(iter(action.choices.items()))
            return argv + _minimal_argv(first, sub)
        if not action.option_strings:
            argv.append("x")
        elif action.required:
            argv += [action.option_strings[0], "x"]
    for group in command._mutually_exclusive_groups:  # eval: --data or --dataset
        if group.required:
            argv += [group._group_actions[0].option_strings[0], "x"]
    return argv


def test_every_subcommand_has_a_handler_and_every_handler_a_subcommand() -> None:
    """The parser's subcommands are exactly the command table's entries."""
    assert set(_subcommands()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_each_subcommand_runs_its_own_handler(name: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``main`` runs the handler of the subcommand given, with its parsed arguments."""
    seen: list[tuple[str, str]] = []

    def recorder(entry: str) -> Command:
        def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
            seen.append((entry, args.command))
            return 7

        return attrs.evolve(COMMANDS[entry], run=run)

    for entry in list(COMMANDS):
        monkeypatch.setitem(COMMANDS, entry, recorder(entry))
    argv = _minimal_argv(name, _subcommands()[name])
    assert main(argv, out=io.StringIO(), err=io.StringIO()) == 7
    assert seen == [(name, name)]


def test_a_subcommand_without_a_handler_is_an_error_not_another_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Were the parser ever to have a subcommand the table lacks, ``main`` fails naming it
    instead of running ``report`` (its old default arm)."""
    ran: list[str] = []
    monkeypatch.setattr(cli, "report", lambda *args: ran.append("report") or 0, raising=False)
    original = cli.parser

    def with_extra() -> argparse.ArgumentParser:
        root = original()
        sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
        sub.add_parser("extra")
        return root

    monkeypatch.setattr(cli, "parser", with_extra)
    with pytest.raises(KeyError, match="extra"):
        main(["extra"], out=io.StringIO(), err=io.StringIO())
    assert ran == []
