"""Reading a result produced earlier, and comparing it with a fresh check.

Accepted: the JSON of ``check_boundary`` / ``policy-prover check -o json``, a bare
counterexample object (``{"domain": ...}``), or an ``assess_proposal`` result (an object
with ``findings`` or ``validation_result``). A prior boundary result is never trusted:
the check is re-run and any disagreement is reported, and the fresh result is explained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from prover.api import sha256_hex
from prover.concrete.witness import replays
from prover.explain.models import PriorResult
from prover.policy.model import Policy
from prover.results import CheckOutcome, Counterexample
from prover.results.report import counterexample_line

_COUNTEREXAMPLE: TypeAdapter[Any] = TypeAdapter(Counterexample)


@dataclass(frozen=True)
class Prior:
    kind: str
    data: dict[str, Any] | None
    problem: str | None = None


def read_prior(result: str | bytes | dict[str, Any] | None) -> Prior | None:
    if result is None:
        return None
    data: Any = result
    if isinstance(result, bytes | str):
        try:
            data = json.loads(result)
        except (ValueError, UnicodeDecodeError) as exc:
            return Prior("unrecognised", None, f"the given result is not JSON ({exc})")
        except RecursionError:
            return Prior("unrecognised", None, "the given result is nested too deeply to read")
    if not isinstance(data, dict):
        return Prior("unrecognised", None, "the given result is not a JSON object")
    if "findings" in data or "validation_result" in data:
        return Prior("proposal", data)
    if "domain" in data:
        return Prior("counterexample", data)
    if "result" in data:
        return Prior("boundary_check", data)
    return Prior("unrecognised", data, "the given result has no result, findings or domain")


def compare_prior(
    prior: Prior,
    fresh: CheckOutcome,
    candidate: str | bytes,
    boundary: str | bytes,
    policies: tuple[Policy, Policy] | None,
) -> PriorResult:
    """Re-verify a prior result against the fresh check of the same policies."""
    if prior.kind == "unrecognised" or prior.data is None:
        return PriorResult(
            kind="unrecognised",
            note=f"{prior.problem}; explained a fresh check of the given policies instead",
        )
    if prior.kind == "proposal":
        return PriorResult(
            kind="proposal",
            result=str(prior.data.get("validation_result") or "") or None,
            note="an assess_proposal result, explained as given (see proposal); the boundary "
            "verdict below comes from a fresh check of the given policies",
        )
    if prior.kind == "counterexample":
        return _compare_counterexample(prior.data, fresh, policies)
    return _compare_report(prior.data, fresh, candidate, boundary, policies)


def _replay_note(data: Any, policies: tuple[Policy, Policy] | None) -> tuple[bool | None, str]:
    try:
        cex = _COUNTEREXAMPLE.validate_python(data)
    except ValidationError:
        return None, "the given counterexample is not a valid counterexample object"
    if policies is None:
        return None, "the policies could not be loaded to replay the given counterexample"
    line = counterexample_line(cex)
    if replays(policies[0], policies[1], cex):
        return (
            True,
            f"the given counterexample ({line}) still replays: the candidate allows it and "
            "the boundary does not",
        )
    return False, f"the given counterexample ({line}) does not replay on these policies"


def _compare_counterexample(
    data: dict[str, Any], fresh: CheckOutcome, policies: tuple[Policy, Policy] | None
) -> PriorResult:
    replayed, note = _replay_note(data, policies)
    return PriorResult(
        kind="counterexample",
        result="exceeds_boundary",
        agrees=replayed
        if replayed is None
        else (replayed and fresh.verdict.value == "exceeds_boundary"),
        note=note,
    )


def _compare_report(
    data: dict[str, Any],
    fresh: CheckOutcome,
    candidate: str | bytes,
    boundary: str | bytes,
    policies: tuple[Policy, Policy] | None,
) -> PriorResult:
    verdict = data.get("result")
    code = data.get("reason_code")
    notes: list[str] = []
    receipt = data.get("receipt")
    if isinstance(receipt, dict):
        if receipt.get("candidate_sha256") not in (None, sha256_hex(candidate)) or receipt.get(
            "boundary_sha256"
        ) not in (None, sha256_hex(boundary)):
            notes.append("the given result was produced for different policy texts")
    fresh_code = fresh.reason_code.value if fresh.reason_code else None
    agrees = verdict == fresh.verdict.value and (code is None or code == fresh_code)
    if agrees:
        notes.insert(0, f"a fresh check agrees: {fresh.verdict.value}")
    else:
        notes.insert(
            0,
            f"a fresh check DISAGREES: the given result says {verdict}"
            + (f" ({code})" if code else "")
            + f", the fresh check says {fresh.verdict.value}"
            + (f" ({fresh_code})" if fresh_code else "")
            + "; the fresh result is explained",
        )
    if isinstance(data.get("counterexample"), dict):
        _, note = _replay_note(data["counterexample"], policies)
        notes.append(note)
    return PriorResult(
        kind="boundary_check",
        result=str(verdict) if verdict is not None else None,
        agrees=agrees,
        note="; ".join(notes),
    )
