"""``policy-prover assess --current FILE --proposal FILE [...]``: the proposal risk check.

Reads every input file with the policy-file rules (regular file, 4 MiB, UTF-8), then
runs :func:`prover.proposal.assess_proposal`. Text output is the reference-like report
(with our ``adds_access`` and boundary lines); JSON output is the assessment object.

Exit status: 0 nothing new needs review, 1 something does (a finding, a note, a blocker,
or a boundary result other than ``within_boundary``), 2 invalid input or a proposal that
cannot be applied, 3 the time limit passed before the assessment finished (an
``inconclusive`` envelope; nothing assessed), 130 cancelled (Ctrl-C). Invalid input prints
``policy-prover: <flag> '<file>': <problem>`` on stderr in text mode and an error
envelope (:func:`error_document`) on stdout in JSON mode.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from server.commands.options import add_environment_option, add_output_option, add_timeout_option
from server.interrupt import EXIT_INTERRUPTED, call_cancellable
from server.output import render_json, write
from server.policy_files import PolicyFileError, read_policy_file

EXIT_ERROR = 2
#: The assessment was stopped by its deadline or a cancellation: nothing was decided.
EXIT_UNDECIDED = 3
SCHEMA_VERSION = 1

#: Input roles in reading order: (argument, option, prefix of the library's messages).
ROLES: tuple[tuple[str, str, str], ...] = (
    ("current", "--current", "current policy"),
    ("proposal", "--proposal", "proposal"),
    ("credentials", "--credentials", "credentials"),
    ("boundary", "--boundary", "boundary policy"),
    ("accepted_risks", "--accepted-risks", "accepted risks"),
    ("registry", "--registry", "registry"),
    ("environment", "--environment", "environment"),
)


class InvalidInput(Exception):
    """An input file that cannot be read; the message names the option and the file."""


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "assess",
        help="report the risky access a proposed network rule adds to the current policy",
        description=(
            "Merge a proposed network rule into the current policy as the OpenShell gateway "
            "does and report only the new risks: link_local_reach, l7_bypass_credentialed, "
            "credential_reach_expansion, capability_expansion; plus security notes, "
            "adds_access (does the proposal add any access at all) and, with --boundary, "
            "whether the merged policy stays within a boundary. Exit 0: nothing new needs "
            "review; 1: something does; 2: invalid input or a proposal that cannot be applied; "
            "3: the time limit passed first (inconclusive)."
        ),
    )
    parser.add_argument("--current", metavar="FILE", required=True, help="current policy")
    parser.add_argument(
        "--proposal",
        metavar="FILE",
        required=True,
        help="the proposal: agent API body {intent_summary, operations} or {rule_name, rule}",
    )
    parser.add_argument(
        "--credentials",
        metavar="FILE",
        help="credential set: a list of {name, type, target_hosts} or {credentials: [...]}",
    )
    parser.add_argument(
        "--boundary", metavar="FILE", help="policy the merged policy must stay within"
    )
    parser.add_argument("--accepted-risks", metavar="FILE", help="accepted risks document")
    parser.add_argument(
        "--registry", metavar="FILE", help="binary descriptors extending the shipped registry"
    )
    parser.add_argument(
        "--mode",
        choices=("agent_authored", "mechanistic"),
        default="agent_authored",
        help="who wrote the proposal (default: agent_authored)",
    )
    add_environment_option(parser)
    add_timeout_option(parser, "the boundary checks")
    add_output_option(parser)
    parser.set_defaults(run=run)


def role_of(message: str) -> str | None:
    """Which input a library error message is about (messages start with its name)."""
    for role, _, prefix in ROLES:
        if message.startswith(prefix):
            return role
    return None


def error_document(reason: str, inputs: dict[str, str | None]) -> dict[str, Any]:
    """The JSON error envelope of invalid input, shaped like ``check``'s error result."""
    from prover import __version__

    return {
        "schema_version": SCHEMA_VERSION,
        "prover_version": __version__,
        "check": "proposal",
        "result": "error",
        "exit_code": EXIT_ERROR,
        "inputs": dict(inputs),
        "reason_code": "invalid_input",
        "reason": reason,
    }


def stopped_document(
    cancelled: bool, timeout_ms: int, inputs: dict[str, str | None]
) -> dict[str, Any]:
    """The JSON envelope of an assessment its deadline (or a cancellation) stopped
    before it finished: ``inconclusive``, with nothing assessed."""
    from prover import __version__

    reason = (
        "the assessment was cancelled before it finished; nothing was assessed"
        if cancelled
        else f"the time limit of {timeout_ms} ms passed before the assessment finished; "
        "nothing was assessed (retry with a larger timeout or smaller inputs)"
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "prover_version": __version__,
        "check": "proposal",
        "result": "inconclusive",
        "exit_code": EXIT_UNDECIDED,
        "inputs": dict(inputs),
        "reason_code": "cancelled" if cancelled else "solver_timeout",
        "reason": reason,
    }


def stopped_text(document: dict[str, Any]) -> str:
    """The text of :func:`stopped_document`."""
    return f"result: inconclusive\nreason: {document['reason']}\n"


def run(args: argparse.Namespace) -> int:
    paths: dict[str, str | None] = {role: getattr(args, role) for role, _, _ in ROLES}
    if paths["environment"] is None:
        del paths["environment"]  # without evidence the output is as it always was
    try:
        texts = _read_inputs(paths)
    except InvalidInput as exc:
        return _report_invalid(args, str(exc), paths)

    from prover.errors import ProverError
    from prover.proposal import assess_proposal
    from prover.run.budget import Budget, BudgetExhausted

    budget = Budget(args.timeout)

    def work() -> Any:
        return assess_proposal(
            texts["current"],
            texts["proposal"],
            credentials=texts.get("credentials"),
            mode=args.mode,
            accepted_risks=texts.get("accepted_risks"),
            registry=texts.get("registry"),
            boundary=texts.get("boundary"),
            budget=budget,
            environment=texts.get("environment"),
        )

    try:
        assessment = call_cancellable(work, budget.cancel)
    except BudgetExhausted as exc:
        document = stopped_document(exc.cancelled, args.timeout, paths)
        text = render_json(document) if args.output == "json" else stopped_text(document)
        if not write(sys.stdout, text):
            return EXIT_ERROR
        return EXIT_INTERRUPTED if exc.cancelled else EXIT_UNDECIDED
    except ProverError as exc:
        return _report_invalid(args, _naming_file(str(exc), paths), paths)
    except Exception as exc:  # a bug must read as an error, never as a pass
        write(sys.stderr, f"policy-prover: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_ERROR
    return _report(args, assessment, cancelled=budget.cancelled)


def _read_inputs(paths: dict[str, str | None]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for role, option, _ in ROLES:
        path = paths.get(role)
        if path is None:
            continue
        try:
            texts[role] = read_policy_file(path)
        except PolicyFileError as exc:
            message = str(exc)
            where = option if f"'{path}'" in message else f"{option} '{path}'"
            raise InvalidInput(f"{where}: {message}") from None
    return texts


def _naming_file(message: str, paths: dict[str, str | None]) -> str:
    role = role_of(message)
    if role is None or paths.get(role) is None:
        return message
    option = next(option for name, option, _ in ROLES if name == role)
    return f"{option} '{paths[role]}': {message}"


def _report_invalid(args: argparse.Namespace, reason: str, paths: dict[str, str | None]) -> int:
    from prover.results.text import escape_control

    if args.output == "json":
        write(sys.stdout, render_json(error_document(reason, paths)))
        return EXIT_ERROR
    write(sys.stderr, f"policy-prover: {escape_control(reason)}\n")
    return EXIT_ERROR


def _report(args: argparse.Namespace, assessment: Any, *, cancelled: bool) -> int:
    from prover.proposal import exit_code, render_text

    if args.output == "json":
        ok = write(sys.stdout, render_json(assessment.model_dump(mode="json")))
    else:
        ok = write(sys.stdout, render_text(assessment))
    if not ok:
        return EXIT_ERROR
    status: int = exit_code(assessment)
    if cancelled and status != EXIT_ERROR:
        return EXIT_INTERRUPTED
    return status
