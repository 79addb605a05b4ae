"""The public synchronous entry points over policy text.

``check_boundary`` never raises for bad input or internal failure: it returns an
``error`` outcome for input that cannot be read and an ``inconclusive`` one for anything
that went wrong inside, so no failure can ever read as ``within_boundary``.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from prover.results import CheckOutcome, ReasonCode, Receipt, digest
from prover.run.budget import DEFAULT_TIMEOUT_MS, Budget, BudgetExhausted

if TYPE_CHECKING:
    # Imported where evidence is given: reading it needs pydantic, which a check
    # without evidence never loads.
    from prover.environment import Environment, Evidence


@dataclass(frozen=True)
class BoundaryCheck:
    """An outcome with the receipt that binds it to its inputs."""

    outcome: CheckOutcome
    receipt: Receipt


@cache
def z3_version() -> str:
    """The Z3 version for receipts, as ``z3.get_version_string()`` spells it (``5.4.1``).

    Read from the installed ``z3-solver`` distribution, so that a check the cheap stages
    decide never loads Z3 (importing it costs a CLI cold start some 20 to 25 ms); the
    bindings are imported only when the distribution's version is missing or unreadable.
    """
    parts = (distribution_version("z3-solver") or "").split(".")
    if len(parts) >= 3 and all(part.isdigit() for part in parts[:3]):
        return ".".join(parts[:3])
    import z3

    return str(z3.get_version_string())


def distribution_version(name: str) -> str | None:
    """The version of the installed distribution ``name``, from the name of its
    ``<name>-<version>.dist-info`` directory in the first ``sys.path`` entry holding one
    (where ``importlib.metadata`` finds it, without importing that: some 10 ms of a CLI
    cold start); None when there is none."""
    prefix = name.replace("-", "_").replace(".", "_").lower() + "-"
    suffix = ".dist-info"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for item in names:
            lowered = item.lower()
            if lowered.startswith(prefix) and lowered.endswith(suffix):
                return item[len(prefix) : -len(suffix)]
    return None


def sha256_hex(text: str | bytes) -> str:
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return digest.sha256_hex(data)


class _Done(Exception):
    """Nothing to check: the outcome is already known."""


def _environment_sha256(environment: str | bytes | Environment | None) -> str | None:
    if environment is None:
        return None
    if isinstance(environment, str | bytes):
        return sha256_hex(environment)
    return environment.sha256


def check_boundary(
    candidate: str | bytes,
    boundary: str | bytes,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    budget: Budget | None = None,
    reference_semantics: bool = False,
    environment: str | bytes | Environment | None = None,
) -> BoundaryCheck:
    """Prove that ``candidate`` allows nothing beyond ``boundary`` (policy texts).

    Pass a ``budget`` to cancel the check from another thread; otherwise one is made
    from ``timeout_ms``. ``reference_semantics`` reproduces the reference prover exactly
    (its strict reading and its ``unsupported`` cases); the default is the extended,
    sound analysis that also decides what the runtime does beyond that model.
    ``environment`` is an environment evidence document (text, or one already loaded):
    facts about the sandbox image that decide what depends on it; the receipt then
    carries its SHA-256 and the facts the verdict relied on (``assumptions``).
    """
    from prover.checks.pair import check_policies
    from prover.policy.loader import PolicyPairError, load_policy_pair

    budget = budget or Budget(timeout_ms)
    outcome: CheckOutcome
    evidence: Evidence | None = None
    try:
        if environment is not None:
            from prover.environment import (
                Environment,
                EnvironmentLoadError,
                Evidence,
                load_environment,
            )

            try:
                env = (
                    environment
                    if isinstance(environment, Environment)
                    # Read under the budget: 10,000 symlinks take some 0.4 s.
                    else load_environment(environment, budget.checkpoint)
                )
            except EnvironmentLoadError as exc:
                outcome = CheckOutcome.error(str(exc))
                raise _Done from None
            evidence = Evidence(env)
        # Reading is part of the check: a policy near the size limits takes a few
        # hundred milliseconds to read, so the deadline bounds it too. Both are read, so
        # that one answer lists the problems of both (the reference stops at the first).
        try:
            cand, bound = load_policy_pair(
                candidate,
                boundary,
                budget.checkpoint,
                reference=reference_semantics,
                first_problem_only=reference_semantics,
            )
        except PolicyPairError as exc:
            outcome = CheckOutcome.error(str(exc))
        else:
            outcome = check_policies(
                cand,  # type: ignore[arg-type]  # records read like the schema's models
                bound,  # type: ignore[arg-type]
                budget,
                reference=reference_semantics,
                evidence=evidence,
            )
    except _Done:
        pass
    except BudgetExhausted as exc:
        outcome = CheckOutcome.stopped(exc.cancelled)
    except Exception as exc:  # soundness: an internal failure is never a pass
        import logging  # only here: nothing else on the CLI path needs it (~4 ms)

        logging.getLogger(__name__).exception("internal error during boundary check")
        outcome = CheckOutcome.inconclusive(
            ReasonCode.SOLVER_UNKNOWN,
            f"internal error during the check: {type(exc).__name__}: {exc}",
        )
    receipt = Receipt(
        candidate_sha256=sha256_hex(candidate),
        boundary_sha256=sha256_hex(boundary),
        z3_version=z3_version(),
        elapsed_ms=round(budget.elapsed_ms(), 3),
        decided_by=outcome.decided_by,
        semantics="reference" if reference_semantics else "extended",
        readings=outcome.readings,
        environment_sha256=_environment_sha256(environment),
        assumptions=evidence.assumptions if evidence is not None else None,
    )
    return BoundaryCheck(outcome=outcome, receipt=receipt)
