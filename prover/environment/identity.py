"""Process identities resolved to numbers with environment evidence.

A policy value is ``""`` (omitted: the image's ``user``/``group`` applies), ``root``,
``0``, ``sandbox`` or a decimal id. Names resolve through the document's ``users`` (for
``run_as_user``) or ``groups`` (``run_as_group``); a decimal id is itself. The image's
group defaults to the group named like its user (a ``USER`` without a group runs as the
user's primary group, by convention of the same name). Root (0)
contains every identity; the same number is the same identity; two different non-root
numbers are different identities, neither containing the other.
"""

from __future__ import annotations

from dataclasses import dataclass

from prover.environment.document import MAX_ID, Environment


@dataclass(frozen=True)
class Resolved:
    """A policy value, the number it denotes and how (for the receipt's assumptions)."""

    written: str
    number: int
    facts: tuple[str, ...]

    @property
    def label(self) -> str:
        name = self.written or "(omitted)"
        return name if name == str(self.number) else f"{name} ({self.number})"


def _decimal(value: str) -> int | None:
    digits = value[1:] if value.startswith("+") else value
    if digits and digits.isascii() and digits.isdigit():
        number = int(digits)
        return number if number <= MAX_ID else None
    return None


def resolve_identity(value: str, field: str, env: Environment) -> Resolved | None:
    """The number ``value`` of ``field`` (``run_as_user``/``run_as_group``) denotes in the
    image, or None when the evidence does not say."""
    table, default, kind = (
        (env.users, env.user, "uid")
        if field == "run_as_user"
        else (env.groups, env.group or env.user, "gid")
    )
    facts: list[str] = []
    name = value
    if not name:
        if default is None:
            return None
        name = default
        facts.append(f"the image's {'user' if kind == 'uid' else 'group'} is {default}")
    number = _decimal(name)
    if number is None:
        if name == "root":
            number = 0
        elif name in table:
            number = table[name]
            facts.append(f"{kind} of {name} is {number}")
        else:
            return None
    return Resolved(value, number, tuple(facts))


def contains(boundary: Resolved, candidate: Resolved) -> bool:
    """Whether the boundary identity contains the candidate's: equal, or root."""
    return boundary.number == candidate.number or boundary.number == 0
