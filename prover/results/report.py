"""The reference CLI's output contract (spec §12), shared by the CLI and the MCP server.

``boundary_report`` builds the JSON object with the reference's keys in the reference's
order, followed by our ``receipt``; ``boundary_text`` builds the text lines. Control
characters in any rendered string are escaped the way Rust's ``escape_default`` does.
"""

from __future__ import annotations

from typing import Any

from prover import __version__
from prover.results import (
    COVERAGE_DOMAINS,
    CheckOutcome,
    FilesystemCounterexample,
    LandlockCounterexample,
    NetworkCounterexample,
    ProcessCounterexample,
    Receipt,
    Verdict,
)
from prover.results.text import escape_control

SCHEMA_VERSION = 1


def counterexample_line(cex: object) -> str:
    """The text form of a counterexample, without the ``counterexample: `` prefix."""
    if isinstance(cex, ProcessCounterexample):
        return f"process {cex.field} boundary={cex.boundary} candidate={cex.candidate}"
    if isinstance(cex, LandlockCounterexample):
        return f"landlock boundary={cex.boundary} candidate={cex.candidate}"
    if isinstance(cex, FilesystemCounterexample):
        return f"filesystem {cex.access} {cex.path}"
    if isinstance(cex, NetworkCounterexample):
        line = (
            f"network binary={cex.binary or '-'} ancestor_binary={cex.ancestor_binary or '-'} "
            f"binary_identity_required={str(cex.binary_identity_required).lower()} "
            f"host={cex.host}:{cex.port} destination_ip={cex.destination_ip} "
            f"trusted_gateway={str(cex.trusted_gateway).lower()} protocol={cex.protocol} "
            f"method={cex.method if cex.method is not None else '-'} "
            f"path={cex.path if cex.path is not None else '-'}"
        )
        if cex.query_params:
            pairs = "&".join(f"{k}={v}" for k, vs in cex.query_params.items() for v in vs)
            line += f" query={pairs}"
        return line
    raise TypeError(f"unknown counterexample type {type(cex).__name__}")


def boundary_text(outcome: CheckOutcome, receipt: Receipt | None = None) -> str:
    """The text output of ``check``: one item per line, trailing newline; with a receipt
    of a check that used environment evidence, its digest and each assumption."""
    lines = [f"result: {outcome.verdict.value}"]
    if outcome.verdict is not Verdict.ERROR:
        lines.append("coverage: domains=" + ",".join(COVERAGE_DOMAINS))
    if outcome.counterexample is not None:
        lines.append("counterexample: " + counterexample_line(outcome.counterexample))
    if outcome.reason is not None and outcome.verdict is not Verdict.EXCEEDS:
        lines.append(f"reason: {outcome.reason}")
    # The runtime's reading a pass or a filesystem exceed rests on (prover.runtime): what
    # the sandbox enforces where it differs from the policy's text. (The receipt always
    # lists every one.)
    if outcome.verdict is Verdict.WITHIN or isinstance(
        outcome.counterexample, FilesystemCounterexample
    ):
        lines.extend(r for r in outcome.readings if r.startswith("runtime: "))
    if receipt is not None and receipt.environment_sha256 is not None:
        lines.append(f"environment: sha256={receipt.environment_sha256}")
        lines.extend(f"assumption: {fact}" for fact in receipt.assumptions or ())
    return "".join(escape_control(line) + "\n" for line in lines)


def counterexample_json(cex: object) -> dict[str, Any] | None:
    if cex is None:
        return None
    assert hasattr(cex, "model_dump")
    data: dict[str, Any] = cex.model_dump(mode="json")
    if data.get("domain") == "network" and not data.get("query_params"):
        data.pop("query_params", None)
    return data


def boundary_report(
    outcome: CheckOutcome,
    *,
    inputs: dict[str, str],
    receipt: Receipt | None = None,
) -> dict[str, Any]:
    """The JSON object of ``check --output json``, keys in the reference's order."""
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "prover_version": __version__,
        "check": "boundary",
        "coverage": None
        if outcome.verdict is Verdict.ERROR
        else {"domains": list(COVERAGE_DOMAINS)},
        "result": outcome.verdict.value,
        "exit_code": outcome.exit_code,
        "inputs": dict(inputs),
        "counterexample": counterexample_json(outcome.counterexample),
        "reason_code": outcome.reason_code.value if outcome.reason_code else None,
        "reason": outcome.reason,
    }
    if receipt is not None:
        report["receipt"] = receipt.dump()
    return report
