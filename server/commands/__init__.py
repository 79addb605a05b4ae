"""The subcommands of ``policy-prover``, one module each.

A command module exposes ``add_parser(subparsers) -> None``, which adds its subparser and
sets ``run`` as the parser default, and ``run(args) -> int``, which returns the exit
status. To add a command, write its module and list it in :data:`COMMAND_MODULES`; the
parsing in :mod:`server.cli` does not change. Command modules must stay cheap to import
(heavy imports go inside ``run``), because every invocation builds the whole parser.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any, Protocol, cast

#: Command modules in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "server.commands.check",
    "server.commands.assess",
    "server.commands.explain",
    "server.commands.environment",
    "server.commands.hook",
    "server.commands.serve",
    "server.commands.demo",
)


class CommandModule(Protocol):
    def add_parser(self, subparsers: argparse._SubParsersAction[Any]) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


RunFn = Callable[[argparse.Namespace], int]


def load_commands(only: str | None = None) -> list[CommandModule]:
    """Every command module, or just the one whose command is ``only`` when there is one
    (each module's command is its module's name)."""
    names = COMMAND_MODULES
    if only is not None and f"{__name__}.{only}" in COMMAND_MODULES:
        names = (f"{__name__}.{only}",)
    return [cast(CommandModule, importlib.import_module(name)) for name in names]
