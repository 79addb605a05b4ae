"""The entry points from policy text to a validated ``AuthoredPolicy``.

In the default (mainline) reading a policy the OpenShell runtime refuses is not loaded:
its parser's refusals (:func:`prover.policy.mainline.mainline_unknown_fields`) are load
errors, and after the schema its validator's (:mod:`prover.runtime.validation`) raise
:class:`PolicyRefusedError`, naming every violation in the runtime's words.

``load_policy`` validates with the pydantic schema. A boundary check loads its pair with
``load_policy_pair``, which first tries the pydantic-free fast path
(:mod:`prover.policy.fast`) on both texts and uses the schema for both as soon as either
is declined, so that one check never mixes the two kinds of model and every error
message comes from the schema. Policies it loads are kept by their text
(:mod:`prover.policy.memo`): the same boundary, sent again, is not read again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prover.errors import PolicyLoadError
from prover.policy.facts import drop, keep
from prover.policy.mainline import (
    mainline_data,
    mainline_unknown_fields,
    unknown_field_message,
    without_fields,
)
from prover.policy.memo import TextMemo
from prover.policy.paths import render_path
from prover.policy.reader import read_policy_data
from prover.results.digest import sha256_hex

if TYPE_CHECKING:
    from prover.policy.records import AuthoredPolicy as PolicyRecord
    from prover.policy.schema import AuthoredPolicy


#: How many of the runtime's reasons one refusal lists (the rest are counted).
MAX_LISTED_REFUSALS = 100


class PolicyRefusedError(PolicyLoadError):
    """The OpenShell runtime refuses the policy: ``refusals`` holds every reason, in its
    words (validation violations, then endpoint ambiguities)."""

    def __init__(self, refusals: tuple[str, ...]) -> None:
        listed = "; ".join(refusals[:MAX_LISTED_REFUSALS])
        more = len(refusals) - MAX_LISTED_REFUSALS
        super().__init__(
            "the OpenShell runtime refuses it (validate_sandbox_policy, "
            f"find_endpoint_ambiguities): {listed}" + (f"; and {more} more" if more > 0 else "")
        )
        self.refusals = refusals


class PolicyPairError(Exception):
    """A policy of a pair is invalid. ``problems`` holds ``(role, error)`` for each
    (``role``: ``candidate`` or ``boundary``); the message is the check's error reason."""

    def __init__(self, problems: list[tuple[str, PolicyLoadError]]) -> None:
        super().__init__(
            "; ".join(
                f"invalid {role} policy: "
                + ("" if isinstance(error, PolicyRefusedError) else "invalid policy: ")
                + str(error)
                for role, error in problems
            )
        )
        self.problems = problems


def policy_data(
    text: str | bytes,
    checkpoint: Callable[[], None] | None = None,
    *,
    reference: bool = False,
) -> object:
    """The data of policy text, read and rewritten as the chosen reading reads it
    (before validation); a failure is a ``PolicyLoadError``."""
    data = read_policy_data(text, checkpoint)
    unknown = mainline_unknown_fields(data)
    if reference:  # the reference reads the others (newer schema versions)
        unknown = [location for location in unknown if location == ("inference",)]
    else:
        data = mainline_data(data)
    if unknown:
        problems = [unknown_field_message(location) for location in unknown]
        if not reference:
            # Every problem in one answer: the schema's too, on the rest of the document.
            try:
                validate_policy(without_fields(data, unknown), mainline=True)
            except PolicyLoadError as error:
                problems.append(error.message)
        raise PolicyLoadError("; ".join(problems), render_path(unknown[0]))
    return data


def validate_policy(data: object, *, mainline: bool = False) -> AuthoredPolicy:
    """``data`` validated by the schema; every failure is a ``PolicyLoadError``.

    ``mainline``: the mainline reading, whose caller runs the runtime's validator next
    (:func:`refuse`): the schema then leaves the checks the validator makes to it.
    """
    from pydantic import ValidationError

    from prover.policy.messages import load_error
    from prover.policy.schema import MAINLINE, AuthoredPolicy

    try:
        return AuthoredPolicy.model_validate(data, context=MAINLINE if mainline else None)
    except ValidationError as error:
        raise load_error(error) from None


def refuse(data: object, checkpoint: Callable[[], None] | None = None) -> None:
    """Raise :class:`PolicyRefusedError` if the runtime refuses the policy of ``data``
    (read in the mainline reading, and valid by the schema)."""
    from prover.runtime.validation import runtime_refusals

    if isinstance(data, dict):
        refusals = runtime_refusals(data, checkpoint)
        if refusals:
            raise PolicyRefusedError(refusals)


def load_policy(
    text: str | bytes,
    checkpoint: Callable[[], None] | None = None,
    *,
    reference: bool = False,
    runtime: bool = False,
) -> AuthoredPolicy:
    """Read YAML or JSON policy text strictly; every failure is a ``PolicyLoadError``.

    ``checkpoint`` (e.g. ``Budget.checkpoint``) is called now and then while reading and
    may raise to stop a read that outlives the caller's deadline. By default the policy
    is read as the mainline runtime reads it (:mod:`prover.policy.mainline`);
    ``reference`` keeps the reference prover's stricter reading. ``runtime`` (mainline
    reading only) also runs the runtime's validator: a policy it refuses raises
    :class:`PolicyRefusedError` naming every violation (``load_policy_pair`` always does).
    """
    data = policy_data(text, checkpoint, reference=reference)
    runtime = runtime and not reference
    policy = validate_policy(data, mainline=runtime)
    if runtime:
        refuse(data, checkpoint)
    return policy


#: Policies ``load_policy_pair`` loaded, with their data (for the schema, should the
#: other policy of a later pair need it), by reading and text.
LOADED: TextMemo[tuple[object, AuthoredPolicy | PolicyRecord]] = TextMemo(
    on_drop=lambda kept: drop(kept[1])
)


def load_policy_pair(
    candidate: str | bytes,
    boundary: str | bytes,
    checkpoint: Callable[[], None] | None = None,
    *,
    reference: bool = False,
    first_problem_only: bool = False,
) -> tuple[AuthoredPolicy | PolicyRecord, AuthoredPolicy | PolicyRecord]:
    """Both policies of a check, as ``load_policy`` would give them: as records when the
    fast path reads both, else both as the schema's models.

    Both are read, in order, and a :class:`PolicyPairError` lists the problems of both;
    ``first_problem_only`` (the reference's behaviour) stops at the candidate's.
    """
    from prover.policy.fast import fast_policy
    from prover.policy.records import Record

    problems: list[tuple[str, PolicyLoadError]] = []
    data: list[object] = []
    loaded: list[AuthoredPolicy | PolicyRecord] = []
    reading = "reference" if reference else "mainline"
    for role, text in (("candidate", candidate), ("boundary", boundary)):
        if problems and first_problem_only:
            break
        kept = LOADED.get(reading, text)
        if kept is not None:
            data.append(kept[0])
            loaded.append(kept[1])
            continue
        try:
            item = policy_data(text, checkpoint, reference=reference)
            # Between stages too: at the size limits each takes tens of milliseconds
            # (18,000 paths: some 100 ms to normalise) without looking at the deadline.
            if checkpoint is not None:
                checkpoint()
            policy: AuthoredPolicy | PolicyRecord | None = fast_policy(item)
            if policy is None:
                if checkpoint is not None:
                    checkpoint()
                policy = validate_policy(item, mainline=not reference)
            if not reference:
                refuse(item, checkpoint)
        except PolicyLoadError as exc:
            problems.append((role, exc))
            continue
        keep(policy)  # before the memo holds it: the memo's drop follows this
        if not LOADED.put(reading, text, (item, policy)):
            drop(policy)
        data.append(item)
        loaded.append(policy)
    if problems:
        raise PolicyPairError(problems)
    fast = [isinstance(policy, Record) for policy in loaded]
    if any(fast) and not all(fast):
        # One read fast, one not: both as the schema's models (never a mix in one check).
        for index, (role, item) in enumerate(zip(("candidate", "boundary"), data, strict=True)):
            if fast[index]:
                try:
                    loaded[index] = validate_policy(item, mainline=not reference)
                except PolicyLoadError as exc:  # never: the fast path reads only valid ones
                    raise PolicyPairError([(role, exc)]) from None
    candidate_policy, boundary_policy = loaded
    return candidate_policy, boundary_policy


def policy_sha256(text: str | bytes) -> str:
    """Hex SHA-256 of the policy text as given (``str`` is hashed as its UTF-8 bytes)."""
    raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return sha256_hex(raw)
