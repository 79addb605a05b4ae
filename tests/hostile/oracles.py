"""What every target must do with any input, as functions that name the outcome or raise.

Each ``fuzz_*`` function runs one input through one target and returns a short outcome
label (``rejected``, ``error/invalid_input``, ``within_boundary``, ...) for the campaign's
counts, or raises :class:`Finding` when a promise is broken:

- no exception other than the prover's own errors (``PolicyLoadError``/``ProposalError``);
- no hang: every call returns within its deadline plus :data:`HANG_S` (smaller overruns
  are figures, not findings: the campaign reports the largest);
- every message is non-empty and free of traceback text;
- a policy that fails to load is never part of a ``within_boundary`` (or any verdict other
  than ``error``), and ``error`` is only ever the verdict of input that fails to load;
- an internal error (the core's ``inconclusive`` "internal error", the server's
  ``policy-prover internal error``) is a crash, even though it fails closed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from prover.api import check_boundary
from prover.errors import PolicyLoadError, ProverError
from prover.policy.loader import load_policy
from prover.proposal import assess_proposal
from prover.results import ReasonCode, Verdict

#: Time a call may overrun its deadline before it counts as a hang. Overruns shorter than
#: that are not findings but figures: :class:`tests.hostile.campaign.Tally` reports them.
#: Reading a policy is not part of a check's budget (about 1 s at the 100,000-node limit
#: on an idle 2-core machine), and a busy machine stretches everything.
HANG_S = 30.0
#: The deadline of a loader call, for the overrun figures.
LOADER_DEADLINE_S = 1.0

TRACEBACK_MARKS = ("Traceback (most recent call last)", 'File "/', "site-packages/")


class Finding(AssertionError):
    """A hostile input broke one of the promises above."""


def require_clean(text: object, what: str) -> None:
    """``text`` is a non-empty message without traceback text."""
    if not isinstance(text, str) or not text.strip():
        raise Finding(f"{what}: empty or missing message: {text!r}")
    for mark in TRACEBACK_MARKS:
        if mark in text:
            raise Finding(f"{what}: traceback text in the message: {text[:500]!r}")


def loads(text: object) -> bool:
    """The ground truth: does the loader accept this policy input (and the runtime's
    validator, as the check reads it)?"""
    if not isinstance(text, str | bytes):
        return False
    try:
        load_policy(text, runtime=True)
    except PolicyLoadError:
        return False
    return True


def _timed(deadline_s: float, what: str, func: Callable[[], Any]) -> Any:
    """``func()``, a :class:`Finding` if it overran ``deadline_s`` by more than :data:`HANG_S`."""
    started = time.monotonic()
    value = func()
    elapsed = time.monotonic() - started
    if elapsed > deadline_s + HANG_S:
        raise Finding(f"{what}: took {elapsed:.2f} s, deadline {deadline_s:.2f} s: a hang")
    return value


# -- the loader -------------------------------------------------------------------------------


def fuzz_loader(data: str | bytes) -> str:
    def run() -> str:
        try:
            load_policy(data)
        except PolicyLoadError as error:
            # The message may quote a value with its control characters (the faces
            # escape them when they render it; see fuzz_tool).
            require_clean(error.message, "load_policy")
            return "rejected"
        except Exception as exc:
            raise Finding(f"load_policy raised {type(exc).__name__}: {exc}") from exc
        return "loaded"

    return _timed(LOADER_DEADLINE_S, "load_policy", run)


# -- the boundary check -----------------------------------------------------------------------


def fuzz_check(candidate: str | bytes, boundary: str | bytes, timeout_ms: int = 2000) -> str:
    def run() -> Any:
        try:
            return check_boundary(candidate, boundary, timeout_ms=timeout_ms)
        except Exception as exc:
            raise Finding(f"check_boundary raised {type(exc).__name__}: {exc}") from exc

    check = _timed(timeout_ms / 1000.0, "check_boundary", run)
    outcome = check.outcome
    label = outcome.verdict.value + (f"/{outcome.reason_code.value}" if outcome.reason_code else "")
    both_load = loads(candidate) and loads(boundary)
    if not both_load and (
        outcome.verdict is not Verdict.ERROR or outcome.reason_code is not ReasonCode.INVALID_INPUT
    ):
        raise Finding(f"a policy that does not load was checked: {label}")
    if both_load and outcome.verdict is Verdict.ERROR:
        raise Finding(f"valid policies gave an error result: {outcome.reason!r}")
    if outcome.reason is not None:
        require_clean(outcome.reason, "check_boundary reason")
        if outcome.reason.startswith("internal error"):
            raise Finding(f"check_boundary failed inside: {outcome.reason!r}")
    return label


# -- the proposal check -----------------------------------------------------------------------


def fuzz_assess(arguments: dict[str, Any], timeout_ms: int = 2000) -> str:
    def run() -> Any:
        try:
            return assess_proposal(
                arguments["current"],
                arguments["proposal"],
                credentials=arguments.get("credentials"),
                mode=arguments.get("mode", "agent_authored"),
                accepted_risks=arguments.get("accepted_risks"),
                boundary=arguments.get("boundary"),
                timeout_ms=timeout_ms,
            )
        except ProverError as error:
            require_clean(str(error), "assess_proposal error")
            return f"rejected:{type(error).__name__}"
        except Exception as exc:
            raise Finding(f"assess_proposal raised {type(exc).__name__}: {exc}") from exc

    assessment = _timed(timeout_ms / 1000.0, "assess_proposal", run)
    if isinstance(assessment, str):
        return assessment
    if not loads(arguments["current"]):
        raise Finding("assess_proposal assessed a current policy that does not load")
    boundary = assessment.boundary
    if boundary is not None and boundary.get("result") == Verdict.WITHIN.value:
        if not loads(arguments.get("boundary")) or not loads(assessment.merged_policy):
            raise Finding("within_boundary for a merged or boundary policy that does not load")
    for note in (*assessment.warnings, assessment.application_error or "x"):
        require_clean(note, "assess_proposal note")
    if assessment.application_error:
        return "application_error"
    return "no_new_findings" if assessment.no_new_findings else "findings"


# -- the MCP tools ----------------------------------------------------------------------------

ToolCall = Callable[[str, dict[str, Any], float], Any]


def tool_deadline_s(arguments: dict[str, Any], default_ms: int = 10_000) -> float:
    """A tool call's deadline: its valid ``timeout_ms``, else the tools' default."""
    value = arguments.get("timeout_ms", default_ms)
    valid = type(value) is int and 1 <= value <= 120_000
    return (value if valid else default_ms) / 1000.0


def fuzz_tool(call: ToolCall, tool: str, arguments: dict[str, Any]) -> str:
    """One ``tools/call`` through an MCP client; see the module docstring for the rules."""
    deadline = tool_deadline_s(arguments)
    limit = deadline + HANG_S
    try:
        result = _timed(deadline, f"tool {tool}", lambda: call(tool, arguments, limit))
    except Finding:
        raise
    except TimeoutError as exc:
        raise Finding(f"tool {tool}: no answer within {limit:.1f} s: a hang") from exc
    except Exception as exc:
        message = str(exc)
        require_clean(message, f"tool {tool} protocol error")
        return f"{tool}:protocol_error"
    texts = [getattr(block, "text", "") for block in result.content or []]
    for text in texts:
        if any(mark in text for mark in TRACEBACK_MARKS):
            raise Finding(f"tool {tool}: traceback text in the result: {text[:500]!r}")
    if result.is_error:
        message = " ".join(texts)
        require_clean(message, f"tool {tool} error")
        if message.startswith("policy-prover internal error"):
            raise Finding(f"tool {tool}: the server failed: {message[:300]!r}")
        if "validation error" in message:
            return f"{tool}:invalid_arguments"
        if message.startswith("Unknown tool"):
            return f"{tool}:unknown_tool"
        raise Finding(f"tool {tool}: unexpected error result: {message[:300]!r}")
    document = result.structured_content
    if not isinstance(document, dict):
        raise Finding(f"tool {tool}: no structured result")
    if tool == "check_boundary":
        _require_one_item_per_line(" ".join(texts))
    verdict = _verdict_of(tool, document)
    if verdict == Verdict.WITHIN.value:
        policies = [arguments.get("candidate"), arguments.get("boundary")]
        if not all(loads(policy) for policy in policies):
            raise Finding(f"tool {tool}: within_boundary for a policy that does not load")
    if verdict == Verdict.ERROR.value:
        require_clean(_reason_of(tool, document), f"tool {tool} error reason")
    return f"{tool}:{verdict}"


CHECK_TEXT_PREFIXES = (
    "result: ",
    "coverage: ",
    "counterexample: ",
    "reason: ",
    "environment: ",
    "assumption: ",
    "runtime: ",
)


def _require_one_item_per_line(text: str) -> None:
    """The check's text output: one labelled item per line, control characters escaped."""
    lines = text.split("\n")
    if lines[-1] != "":
        raise Finding(f"check_boundary text does not end with a newline: {text[-200:]!r}")
    for line in lines[:-1]:
        if not line.startswith(CHECK_TEXT_PREFIXES):
            raise Finding(f"check_boundary text line without a label: {line[:200]!r}")
        if any(ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F for ch in line):
            raise Finding(f"check_boundary text with a control character: {line[:200]!r}")


def _verdict_of(tool: str, document: dict[str, Any]) -> str:
    """The tool's verdict: ``result`` at the top, or nested (explain), or the assessment."""
    result = document.get("result")
    if isinstance(result, dict):
        result = result.get("result")
    if isinstance(result, str):
        return result
    if tool == "assess_proposal":
        return "application_error" if document.get("application_error") else "assessed"
    raise Finding(f"tool {tool}: structured result without a verdict: {list(document)}")


def _reason_of(tool: str, document: dict[str, Any]) -> object:
    result = document.get("result")
    if isinstance(result, dict):
        return result.get("reason")
    return document.get("reason")
