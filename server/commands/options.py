"""Options shared by the commands: output format and the time limit."""

from __future__ import annotations

import argparse
from typing import Any

from server.durations import DurationError, parse_duration_ms


def timeout_ms(text: str) -> int:
    """argparse type of ``--timeout``: ``N`` with ``ms``, ``s`` or ``m``, in milliseconds."""
    try:
        return parse_duration_ms(text)
    except DurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_timeout_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--timeout",
        metavar="N(ms|s|m)",
        type=timeout_ms,
        default="10s",
        help=f"time limit of {what}, e.g. 500ms, 10s, 2m (default: 10s)",
    )


def add_output_option(parser: argparse.ArgumentParser | Any) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=("text", "json"),
        default="text",
        help="output format (default: text)",
    )


def add_environment_option(parser: argparse.ArgumentParser | Any) -> None:
    parser.add_argument(
        "--environment",
        metavar="FILE",
        default=None,
        help=(
            "environment evidence document (YAML/JSON, see `policy-prover environment`): "
            "facts about the sandbox image (working directory, users, symlinks) that decide "
            "what depends on it; the receipt lists the facts used"
        ),
    )
