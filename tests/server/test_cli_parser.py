"""The parser of one command (what a cold start builds) parses as the whole parser."""

from __future__ import annotations

import argparse

import pytest

from server.cli import build_parser
from server.commands import COMMAND_MODULES

COMMANDS = [name.rpartition(".")[2] for name in COMMAND_MODULES]


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_each_module_adds_the_command_named_after_it() -> None:
    assert list(_subparsers(build_parser())) == COMMANDS
    for command in COMMANDS:
        assert list(_subparsers(build_parser(command))) == [command]


@pytest.mark.parametrize("command", COMMANDS)
def test_one_commands_parser_is_the_whole_parsers(command: str) -> None:
    whole, alone = _subparsers(build_parser())[command], _subparsers(build_parser(command))[command]
    assert alone.format_help() == whole.format_help()
    assert alone.format_usage() == whole.format_usage()
    assert build_parser(command).format_usage() == build_parser().format_usage()


def test_check_arguments_parse_alike() -> None:
    argv = ["check", "c.yaml", "--boundary", "b.yaml", "-o", "json", "--timeout", "2s"]
    assert vars(build_parser("check").parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_an_unknown_command_builds_the_whole_parser() -> None:
    assert list(_subparsers(build_parser("chek"))) == COMMANDS
