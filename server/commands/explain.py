"""``policy-prover explain CANDIDATE --boundary FILE [--result FILE] [--max-violations N]
[--need JSON]... [--timeout N(ms|s|m)] [-o text|json]``.

Explains the boundary check's result in plain words and, for ``exceeds_boundary``, lists
every violation with the entries that grant it, the closest boundary entries and a fix
that the prover re-checked. The exit status is the check's (0 within, 1 exceeds, 2 error,
3 unsupported or inconclusive, 130 cancelled). Policy files are read with the ``check``
command's rules; ``--result`` is JSON printed earlier by ``check -o json`` (or a
counterexample, or an ``assess`` result). ``-o json`` prints the same object the MCP tool
``explain_counterexample`` returns.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from server.commands.options import add_environment_option, add_output_option, add_timeout_option
from server.interrupt import call_cancellable
from server.output import render_json, write
from server.policy_files import PolicyFileError, read_policy_file

EXIT_ERROR = 2


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "explain",
        help="explain a check result in plain words and propose a fix the prover verified",
        description=(
            "Check CANDIDATE against the boundary and explain the result: for "
            "exceeds_boundary, every violation (up to --max-violations), the candidate "
            "entries that grant it, the closest boundary entries and why they do not cover "
            "it, and a fix (narrowing before deleting) that the prover proved within the "
            "boundary and within the original candidate; for unsupported and inconclusive, "
            "what the reason means and how to rewrite the policies."
        ),
    )
    parser.add_argument("candidate", metavar="CANDIDATE", help="candidate policy file (YAML/JSON)")
    parser.add_argument("--boundary", metavar="FILE", required=True, help="boundary policy file")
    parser.add_argument(
        "--result",
        metavar="FILE",
        help="a result printed earlier (check -o json, a counterexample, or an assess "
        "result); it is re-verified, and a disagreement is reported",
    )
    parser.add_argument(
        "--max-violations",
        metavar="N",
        type=_positive_int,
        default=20,
        help="find and fix at most N violations (default: 20)",
    )
    parser.add_argument(
        "--need",
        metavar="JSON",
        action="append",
        dest="needs",
        help="a request the fix must keep working, as a JSON object: "
        '\'{"binary":"/usr/bin/curl","host":"api.github.com","port":443,"method":"GET",'
        '"path":"/repos/x"}\' or \'{"path":"/workspace","access":"write"}\'; repeat for '
        "several (at most 20)",
    )
    add_environment_option(parser)
    add_timeout_option(parser, "the whole explanation")
    add_output_option(parser)
    parser.set_defaults(run=run)


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return int(text)


def run(args: argparse.Namespace) -> int:
    texts: dict[str, str] = {}
    paths = {"candidate": args.candidate, "boundary": args.boundary}
    try:
        for role in ("candidate", "boundary"):
            texts[role] = read_policy_file(paths[role])
        prior = read_policy_file(args.result) if args.result else None
        environment = read_policy_file(args.environment) if args.environment else None
    except PolicyFileError as exc:
        return _file_error(args, str(exc), texts)

    # Imported here, not at module level: building the parser must stay cheap.
    from prover.explain import explain
    from prover.explain.needs import NeedsError, read_needs
    from prover.run.budget import Budget

    needs = _needs(args.needs)
    try:
        if isinstance(needs, str):
            raise NeedsError(needs)
        read_needs(needs)
    except NeedsError as exc:
        return _file_error(args, str(exc), texts)

    budget = Budget(args.timeout)
    explanation = call_cancellable(
        lambda: explain(
            texts["candidate"],
            texts["boundary"],
            result=prior,
            max_violations=args.max_violations,
            budget=budget,
            environment=environment,
            needs=needs,
        ),
        budget.cancel,
    )
    return _report(args, explanation)


def _needs(given: list[str] | None) -> list[Any] | str | None:
    """The ``--need`` objects, or the reason one is not JSON (naming it)."""
    if not given:
        return None
    import json

    needs: list[Any] = []
    for index, text in enumerate(given):
        try:
            needs.append(json.loads(text))
        except ValueError as exc:
            return f"needs[{index}]: --need is not a JSON object ({exc.msg})"
    return needs


def _report(args: argparse.Namespace, explanation: Any) -> int:
    from prover.explain import render_text
    from prover.explain.hints import cli_words

    if args.output == "json":  # the same object as the MCP tool's analysis
        ok = write(sys.stdout, render_json(explanation.model_dump(mode="json")))
    else:  # for a person at the command line: its flags, not the tools' arguments
        ok = write(sys.stdout, cli_words(render_text(explanation)))
    exit_code: int = explanation.result.exit_code
    return exit_code if ok else EXIT_ERROR


def _file_error(args: argparse.Namespace, reason: str, texts: dict[str, str]) -> int:
    from prover.explain import explain_input_error
    from prover.results.report import escape_control

    if args.output != "json":
        write(sys.stderr, f"policy-prover: {escape_control(reason)}\n")
        return EXIT_ERROR
    explanation = explain_input_error(
        reason, candidate=texts.get("candidate"), boundary=texts.get("boundary")
    )
    write(sys.stdout, render_json(explanation.model_dump(mode="json")))
    return EXIT_ERROR
