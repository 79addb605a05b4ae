"""The normalised policy model and the concrete actions it is judged on.

The loader turns authored text into ``prover.policy.schema.AuthoredPolicy``;
``prover.policy.normalize`` turns that into the frozen dataclasses below, which are what
the concrete evaluator (``prover.concrete``) and the Z3 encodings (``prover.encode``)
read. Both sides must give these fields exactly the same meaning, which
``docs``/the boundary-check spec §9 define.

Conventions:
* hosts are lower-cased patterns; ``*``/``**`` are glob wildcards (spec §9.2);
* ``path`` patterns: ``""`` means "any path" (the same as ``**``); the default
  semantics leaves out the REST rules without a path, which OpenShell's engine never
  matches (``prover.policy.normalize.inert_rule``), so there only an endpoint's
  ``path`` selector may be ``""``;
* ``ports`` are the effective ports (``ports`` if given, else ``[port]``; empty if none);
* ``allow_rules`` already contain the expansion of an ``access`` preset, which is kept
  in ``access`` for the structural shortcut;
* binaries are glob patterns as written (exact paths are globs without wildcards).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Layer = Literal["l4", "rest"]
EndpointRole = Literal["full", "deny_only", "ip_only"]
AccessPreset = Literal["read-only", "read-write", "full"]

PRESET_METHODS: Mapping[str, tuple[str, ...]] = {
    "read-only": ("GET", "HEAD", "OPTIONS"),
    "read-write": ("GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"),
    "full": ("*",),
}


@dataclass(frozen=True, slots=True)
class QueryMatcher:
    """One configured query key: ``value`` is an exact string, or ``None`` for ``*``."""

    key: str
    value: str | None

    @property
    def is_wildcard(self) -> bool:
        return self.value is None


@dataclass(frozen=True, slots=True)
class HttpRule:
    """An allow or deny matcher of a REST endpoint.

    ``method`` is as written (matching is case-insensitive on the policy side, ``*`` is
    any method, ``GET`` also matches ``HEAD``); ``path`` is a path glob, ``""`` = any.
    """

    method: str
    path: str
    query: tuple[QueryMatcher, ...] = ()
    index: int = 0


@dataclass(frozen=True, slots=True)
class Shadow:
    """An inspected endpoint that takes over an L4 endpoint's connections.

    When a rule matching the process (``binaries``, on binary or ancestor; every rule
    when binary identity is off) has an inspected endpoint matching the connection
    (``host`` glob, ``ports``), the runtime handles the connection by that endpoint's
    configuration and an L4 endpoint beside it grants nothing of its own (in the forward
    proxy's reading, where it carries any plain-HTTP request, neither).
    """

    host: str
    ports: tuple[int, ...]
    binaries: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One endpoint of a rule, after normalisation."""

    index: int
    host: str
    ports: tuple[int, ...]
    layer: Layer
    path: str = ""
    allowed_ips: tuple[IPNetwork, ...] = ()
    allowed_ips_raw: tuple[str, ...] = ()
    access: AccessPreset | None = None
    allow_rules: tuple[HttpRule, ...] = ()
    deny_rules: tuple[HttpRule, ...] = ()
    explicit_tcp: bool = False
    role: EndpointRole = "full"
    shadows: tuple[Shadow, ...] = ()
    """Which of the endpoint's three terms take part (spec §9.3/§9.4 define them all).

    ``full`` is every endpoint of the reference model. The extended analysis
    (:mod:`prover.extended`) bounds a policy from above and below with two more:
    ``deny_only`` keeps its deny rules but grants nothing and admits no address (what is
    left of an endpoint whose grants depend on the runtime's endpoint selection, in a
    lower bound: its denies may still apply); ``ip_only`` admits addresses but grants
    and denies nothing (an endpoint whose grants the extended analysis checks on its own,
    in an upper bound: its address rule may still admit another endpoint's grant).
    """

    def allow_rule(self, index: int) -> HttpRule:
        """The allow rule with ``HttpRule.index`` ``index`` (its place as written; the
        engine reading leaves out rules that never match, so positions may differ)."""
        return next(rule for rule in self.allow_rules if rule.index == index)

    def deny_rule(self, index: int) -> HttpRule:
        """The deny rule with ``HttpRule.index`` ``index`` (see :meth:`allow_rule`)."""
        return next(rule for rule in self.deny_rules if rule.index == index)

    @property
    def grants(self) -> bool:
        return self.role == "full"

    @property
    def admits(self) -> bool:
        return self.role != "deny_only"

    @property
    def denies(self) -> bool:
        return self.role != "ip_only"

    @property
    def host_is_wildcard(self) -> bool:
        return "*" in self.host

    @property
    def ipv4_literal(self) -> ipaddress.IPv4Address | None:
        """The host as an IPv4 address when it is one (dotted quad), else ``None``."""
        try:
            return ipaddress.IPv4Address(self.host)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class Rule:
    """A ``network_policies`` entry: every binary may reach every endpoint."""

    key: str
    name: str
    binaries: tuple[str, ...]
    endpoints: tuple[Endpoint, ...]


@dataclass(frozen=True, slots=True)
class Filesystem:
    include_workdir: bool
    read_only: tuple[str, ...]
    read_write: tuple[str, ...]
    #: read_only paths the policy never spells exactly as normalised (``/tmp/``): the
    #: runtime's baseline enrichment compares paths as written (:mod:`prover.runtime`).
    #: Not compared: the reference reads the normalised paths alone.
    loose_read_only: frozenset[str] = field(default=frozenset(), compare=False)


@dataclass(frozen=True, slots=True)
class Policy:
    """The part of a policy that the prover models (spec §6-§9)."""

    filesystem: Filesystem
    run_as_user: str = ""
    run_as_group: str = ""
    landlock_compatibility: Literal["best_effort", "hard_requirement"] = "best_effort"
    rules: tuple[Rule, ...] = ()
    engine_requests: bool = False
    """Requests are judged as OpenShell's engine judges them (the default semantics):
    the request's method is upper-cased too (``sandbox-policy.rego``
    ``method_matches``) and a REST rule sees the canonical path, a path the runtime
    refuses (a raw ``%2F``, ``l7/path.rs`` ``canonicalize_request_target``) matching
    nothing. ``False`` is the reference model (``--reference-semantics``)."""


# ---------------------------------------------------------------------------------------
# Concrete actions


@dataclass(frozen=True, slots=True)
class FilesystemAction:
    access: Literal["read", "write"]
    path: str


@dataclass(frozen=True, slots=True)
class NetworkAction:
    """One concrete connection (``protocol == "l4"``) or REST request.

    With ``binary_identity_required`` false the runtime ignores binaries, so ``binary``
    and ``ancestor_binary`` are ``None``. ``query`` maps each decoded key to its values
    in request order (a bare ``?k`` is one empty value); keys are case-sensitive.
    """

    host: str
    port: int
    destination_ip: IPAddress
    protocol: Layer = "l4"
    method: str | None = None
    path: str | None = None
    query: tuple[tuple[str, tuple[str, ...]], ...] = ()
    binary: str | None = None
    ancestor_binary: str | None = None
    binary_identity_required: bool = False
    trusted_gateway: bool = False

    @property
    def query_map(self) -> dict[str, tuple[str, ...]]:
        return dict(self.query)
