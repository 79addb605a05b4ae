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


def load_commands() -> list[CommandModule]:
    return [cast(CommandModule, importlib.import_module(name)) for name in COMMAND_MODULES]
