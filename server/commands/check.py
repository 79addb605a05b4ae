"""``policy-prover check CANDIDATE --boundary FILE [-o text|json] [--timeout N(ms|s|m)]``.

The reference contract (spec §12): read the candidate, read the boundary, parse the
candidate, parse the boundary, in that order; an input failure is an ``error`` result
with exit 2 (text mode: ``policy-prover: <reason>`` on stderr and nothing on stdout;
JSON mode: the error envelope on stdout and nothing on stderr). Text results are the
reference's lines; JSON results are the reference's object plus our ``receipt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from server.commands.options import (
    add_environment_option,
    add_output_option,
    add_timeout_option,
)
from server.interrupt import call_cancellable
from server.output import render_json, write
from server.policy_files import PolicyFileError, read_policy_file

EXIT_ERROR = 2


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "check",
        help="prove that a candidate policy allows nothing beyond a boundary policy",
        description=(
            "Prove that every action the CANDIDATE policy allows is also allowed by the "
            "boundary policy. Only within_boundary (exit 0) means the check passed; treat "
            "every other result as a failure. Scripts and agents should use --output json "
            "and read result and reason_code."
        ),
    )
    parser.add_argument("candidate", metavar="CANDIDATE", help="candidate policy file (YAML/JSON)")
    parser.add_argument(
        "--boundary",
        metavar="FILE",
        required=True,
        help="boundary policy file: the most access the candidate may have",
    )
    parser.add_argument(
        "--reference-semantics",
        action="store_true",
        help=(
            "give exactly the reference openshell-prover's verdicts and reasons (its strict "
            "reading, and unsupported for everything outside its model) instead of the "
            "default extended analysis"
        ),
    )
    add_environment_option(parser)
    add_output_option(parser)
    add_timeout_option(parser, "the check")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    inputs = {"candidate": args.candidate, "boundary": args.boundary}
    texts: dict[str, str] = {}
    try:
        for role in ("candidate", "boundary"):
            texts[role] = read_policy_file(inputs[role])
        if args.environment is not None:
            inputs["environment"] = args.environment
            texts["environment"] = read_policy_file(args.environment)
    except PolicyFileError as exc:
        return _report_file_error(args, str(exc), inputs, texts, started)

    # Imported here, not at module level: building the parser must stay cheap.
    from prover import api
    from prover.run.budget import Budget

    budget = Budget(args.timeout)
    evidence = {"environment": texts["environment"]} if "environment" in texts else {}
    check = call_cancellable(
        lambda: api.check_boundary(
            texts["candidate"],
            texts["boundary"],
            budget=budget,
            reference_semantics=args.reference_semantics,
            **evidence,
        ),
        budget.cancel,
    )
    return _report(args, check.outcome, inputs, check.receipt)


def _report(args: argparse.Namespace, outcome: Any, inputs: dict[str, str], receipt: Any) -> int:
    from prover.results import Verdict
    from prover.results.report import boundary_report, boundary_text, escape_control

    if args.output == "json":
        document = boundary_report(outcome, inputs=inputs, receipt=receipt)
        ok = write(sys.stdout, render_json(document))
    elif outcome.verdict is Verdict.ERROR:
        write(sys.stderr, f"policy-prover: {escape_control(outcome.reason or 'error')}\n")
        return EXIT_ERROR
    else:
        ok = write(sys.stdout, boundary_text(outcome, receipt))
    exit_code: int = outcome.exit_code
    return exit_code if ok else EXIT_ERROR


def _report_file_error(
    args: argparse.Namespace,
    reason: str,
    inputs: dict[str, str],
    texts: dict[str, str],
    started: float,
) -> int:
    from prover.api import sha256_hex, z3_version
    from prover.results import CheckOutcome, Receipt

    outcome = CheckOutcome.error(reason)
    receipt = None
    if args.output == "json":
        receipt = Receipt(
            candidate_sha256=sha256_hex(texts["candidate"]) if "candidate" in texts else None,
            boundary_sha256=sha256_hex(texts["boundary"]) if "boundary" in texts else None,
            z3_version=z3_version(),
            elapsed_ms=round((time.monotonic() - started) * 1000.0, 3),
            semantics="reference" if args.reference_semantics else "extended",
        )
    return _report(args, outcome, inputs, receipt)
