"""From the authored schema to the normalised model the prover reasons about.

Called only after shape validation accepted the policy (L4 and REST endpoints, valid
``allowed_ips``, exact or ``*`` query matchers), yet it never guesses: any shape the model
cannot represent faithfully raises ``ValueError`` instead of being approximated.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Literal

from prover.policy.model import (
    PRESET_METHODS,
    AccessPreset,
    Endpoint,
    Filesystem,
    HttpRule,
    IPNetwork,
    Layer,
    Policy,
    QueryMatcher,
    Rule,
)

if TYPE_CHECKING:
    from prover.policy.schema import (
        AuthoredPolicy,
        EndpointSection,
        L7Matcher,
        NetworkRuleSection,
    )

_PRESETS: dict[str, AccessPreset] = {
    "read-only": "read-only",
    "read-write": "read-write",
    "full": "full",
}
_GLOB_META = frozenset("?[]{}\\")


def filesystem_of(policy: AuthoredPolicy) -> Filesystem:
    section = policy.filesystem_policy
    if section is None:
        # The section omitted entirely means the working directory is included.
        return Filesystem(include_workdir=True, read_only=(), read_write=())
    return Filesystem(
        include_workdir=section.include_workdir is True,
        read_only=section.read_only,
        read_write=section.read_write,
        loose_read_only=getattr(section, "_loose_read_only", frozenset()),
    )


def _query(matcher: L7Matcher, where: str) -> tuple[QueryMatcher, ...]:
    result: list[QueryMatcher] = []
    for key, value in (matcher.query or {}).items():
        if not isinstance(value, str):
            raise ValueError(f"{where}: query matcher for '{key}' is not a plain string")
        if value == "*":
            result.append(QueryMatcher(key, None))
            continue
        if "*" in value or set(value) & _GLOB_META:
            raise ValueError(f"{where}: query value '{value}' for '{key}' is a glob")
        result.append(QueryMatcher(key, value))
    return tuple(result)


def _http_rule(matcher: L7Matcher | None, index: int, where: str) -> HttpRule:
    if matcher is None or matcher.method is None:
        raise ValueError(f"{where}: rule without a method")
    unmodelled = (
        matcher.command,
        matcher.operation_type,
        matcher.operation_name,
        matcher.fields,
        matcher.tool,
        matcher.params,
    )
    if any(value is not None for value in unmodelled):
        raise ValueError(f"{where}: rule uses fields outside the REST model")
    return HttpRule(
        method=matcher.method,
        path=matcher.path or "",
        query=_query(matcher, where),
        index=index,
    )


def inert_rule(matcher: L7Matcher | None, *, deny: bool) -> str | None:
    """Why OpenShell's engine never matches this REST allow or deny rule, else ``None``.

    * no ``path``: ``opa.rs`` ``proto_to_opa_data_json`` sends an allow rule's path as
      ``""``, and ``sandbox-policy.rego`` ``path_matches`` (``glob.match("", ["/"],
      path)``) is false for every request path; a deny rule goes without one, so its
      ``path_matches(request.path, deny_rule.path)`` is undefined and it never fires;
    * a query value ``""``: ``opa.rs`` ``l7_matchers_to_json`` drops the empty glob
      (the matcher becomes ``{}``) and ``query_value_matches`` needs a non-empty
      ``glob`` or ``any``: an allow rule fails ``query_key_matches``, a deny rule's
      ``deny_query_value_mismatch_all`` or ``deny_query_key_missing`` holds.

    Access presets expand to rules with path ``**`` (``l7/mod.rs``
    ``access_preset_rules``), so they are never inert.
    """
    if matcher is None:
        return None
    kind = "deny" if deny else "allow"
    if not matcher.path:
        return f"REST {kind} rule without path ({'never fires' if deny else 'allows nothing'})"
    if any(value == "" for value in (matcher.query or {}).values()):
        effect = "never fires" if deny else "allows nothing"
        return f"REST {kind} rule with an empty query value ({effect})"
    return None


def _allowed_ips(section: EndpointSection, where: str) -> tuple[IPNetwork, ...]:
    networks: list[IPNetwork] = []
    for entry in section.allowed_ips:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{where}: invalid allowed_ips entry '{entry}'") from None
    return tuple(networks)


def _layer(section: EndpointSection, where: str) -> tuple[Layer, bool]:
    protocol = (section.protocol or "").lower()
    if protocol not in ("", "tcp", "rest"):
        raise ValueError(f"{where}: protocol '{section.protocol}' is outside the model")
    layer: Layer = "rest" if protocol == "rest" else "l4"
    return layer, protocol == "tcp"


def normalize_endpoint(
    index: int, section: EndpointSection, rule_key: str, *, engine: bool = False
) -> Endpoint:
    """One endpoint in the model. ``engine`` (the default semantics) leaves out the
    REST rules OpenShell's engine never matches (:func:`inert_rule`); the reference
    model reads a rule without ``path`` as any path and a query value ``""`` as the
    empty string."""
    where = f"rule '{rule_key}' endpoint {index}"
    layer, explicit_tcp = _layer(section, where)
    access: AccessPreset | None = None
    allow_rules: tuple[HttpRule, ...]
    if section.access is not None:
        if section.access not in _PRESETS or section.rules or layer != "rest":
            raise ValueError(f"{where}: access '{section.access}' cannot be represented")
        access = _PRESETS[section.access]
        allow_rules = tuple(
            HttpRule(method=method, path="**", index=position)
            for position, method in enumerate(PRESET_METHODS[access])
        )
    else:
        allow_rules = tuple(
            _http_rule(entry.allow, position, f"{where} allow rule {position}")
            for position, entry in enumerate(section.rules)
            if not (engine and inert_rule(entry.allow, deny=False))
        )
    deny_rules = tuple(
        _http_rule(matcher, position, f"{where} deny rule {position}")
        for position, matcher in enumerate(section.deny_rules)
        if not (engine and inert_rule(matcher, deny=True))
    )
    if layer == "l4" and (allow_rules or deny_rules):
        raise ValueError(f"{where}: an L4 endpoint cannot carry REST rules")
    if section.ports:
        ports = tuple(section.ports)
    else:
        ports = (section.port,) if section.port else ()
    return Endpoint(
        index=index,
        host=(section.host or "").lower(),
        ports=ports,
        layer=layer,
        path=section.path or "",
        allowed_ips=_allowed_ips(section, where),
        allowed_ips_raw=tuple(section.allowed_ips),
        access=access,
        allow_rules=allow_rules,
        deny_rules=deny_rules,
        explicit_tcp=explicit_tcp,
    )


def _rule(key: str, section: NetworkRuleSection, engine: bool) -> Rule:
    return Rule(
        key=key,
        name=section.name or key,
        binaries=tuple(binary.path for binary in section.binaries),
        endpoints=tuple(
            normalize_endpoint(index, endpoint, key, engine=engine)
            for index, endpoint in enumerate(section.endpoints)
        ),
    )


def process_fields(
    policy: AuthoredPolicy,
) -> tuple[str, str, Literal["best_effort", "hard_requirement"]]:
    """``run_as_user``, ``run_as_group`` (``""`` when omitted) and the Landlock mode."""
    process = policy.process
    landlock = policy.landlock
    compatibility: Literal["best_effort", "hard_requirement"] = (
        landlock.compatibility if landlock and landlock.compatibility else "best_effort"
    )
    return (
        (process.run_as_user or "") if process else "",
        (process.run_as_group or "") if process else "",
        compatibility,
    )


def normalize(policy: AuthoredPolicy, *, engine: bool = False) -> Policy:
    """The normalised ``Policy`` of an authored policy that passed shape validation;
    ``engine`` reads its REST rules and requests as OpenShell's engine does
    (``Policy.engine_requests``, :func:`inert_rule`), else as the reference model."""
    user, group, compatibility = process_fields(policy)
    return Policy(
        filesystem=filesystem_of(policy),
        run_as_user=user,
        run_as_group=group,
        landlock_compatibility=compatibility,
        rules=tuple(_rule(key, rule, engine) for key, rule in policy.network_policies.items()),
        engine_requests=engine,
    )
