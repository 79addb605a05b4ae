"""Process identities resolved to numbers with environment evidence.

A policy value is ``""`` (omitted: the image's ``user``/``group`` applies), ``root``,
``0``, ``sandbox`` or a decimal id. Names resolve through the document's ``users`` (for
``run_as_user``) or ``groups`` (``run_as_group``); a decimal id is itself. An omitted
field is resolved per compute driver (:func:`resolve_identity`). Root (0)
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
    image, or None when the evidence does not say.

    An omitted field is resolved as the compute driver does
    (``openshell-supervisor-process/src/identity.rs``, ``resolve_process_identity``): the
    VM driver uses ``sandbox``; Docker and Podman the image's ``USER`` and, for the
    group, its group part or else that user's primary gid from ``/etc/passwd``
    (``resolve_oci_process_identity_at``). With the driver unstated, both readings must
    agree. (Kubernetes and OpenShift set both identities themselves: see
    :func:`driver_sets_identities`.)
    """
    if value:
        named = _named(value, field, env, [])
        return None if named is None else Resolved(value, named.number, named.facts)
    readings = [_omitted(field, env, d) for d in _drivers(env)]
    first = readings[0]
    if first is None or any(r is None or r.number != first.number for r in readings[1:]):
        return None
    facts = tuple(dict.fromkeys(f for r in readings if r is not None for f in r.facts))
    return Resolved(value, first.number, facts)


def driver_sets_identities(env: Environment) -> bool:
    """``DriverIdentity::Resolved``: the Kubernetes and OpenShift drivers overwrite both
    identities with their own ids, whatever the policy says."""
    return env.driver in ("kubernetes", "openshift")


def _drivers(env: Environment) -> tuple[str, ...]:
    if env.driver == "vm":
        return ("vm",)
    if env.driver in ("docker", "podman"):
        return ("oci",)
    return ("oci", "vm")


def _omitted(field: str, env: Environment, driver: str) -> Resolved | None:
    if driver == "vm":
        return _named("sandbox", field, env, ["the VM driver runs an omitted identity as sandbox"])
    if field == "run_as_user":
        if env.user is None:
            return None
        return _named(env.user, field, env, [f"the image's user is {env.user}"])
    if env.group is not None:
        return _named(env.group, field, env, [f"the image's group is {env.group}"])
    if env.user is None or env.user not in env.primary_gids:
        return None
    gid = env.primary_gids[env.user]
    return Resolved("", gid, (f"the image's user {env.user} has primary gid {gid}",))


def _named(name: str, field: str, env: Environment, facts: list[str]) -> Resolved | None:
    table, kind = (env.users, "uid") if field == "run_as_user" else (env.groups, "gid")
    number = _decimal(name)
    if number is None:
        if name == "root":
            number = 0
        elif name in table:
            number = table[name]
            facts = [*facts, f"{kind} of {name} is {number}"]
        else:
            return None
    return Resolved(name, number, tuple(facts))


def contains(boundary: Resolved, candidate: Resolved) -> bool:
    """Whether the boundary identity contains the candidate's: equal, or root."""
    return boundary.number == candidate.number or boundary.number == 0
