"""The reachability model and the four finding categories (spec §3.2–§3.6).

**Engine.** The reference encodes the model in Z3, but every variable is asserted to a
constant, so each query is a boolean evaluation. This module evaluates the same formula
directly over finite sets — exact, deterministic and with no solver in the loop:

    exfil(b, e) = allows(b, e) ∧ can_exfiltrate(b)
                  ∧ ((¬inspected(e) ∧ http(b)) ∨ (writes(e) ∧ http(b)) ∨ bypasses_l7(b))

**Indexing.** Endpoint instances are (rule key, host as written, port) for rules in key
order, endpoints in order, effective ports in order; binaries are the distinct
``binaries[].path`` in first-seen order over the same walk. ``allows(b, e)`` holds when
``b`` is listed in the rule that owns ``e``; a rule with no binaries admits none (the
runtime default requires binary identity).

Reference quirks of spec §11 that are followed (none of them hides access): read-only
L7 reach by a non-bypassing binary is not a finding, so folding a write method into a
read-only endpoint surfaces as ``credential_reach_expansion`` (§11.2, case P09);
``deny_rules`` never narrow the method set (§11.3, an over-approximation); credentials
are host-only, every port (§11.5); the finding count is per category (§11.6, in
:mod:`prover.proposal.delta`); capability methods are sorted (§11.7); ``tcp`` behaves
like L4 (§11.9). §11.8 (a failing baseline run) cannot happen: evaluation has no
failure mode once the inputs have been read.

Divergences from the reference, each flagged because the reference would miss access:

* an instance key that several endpoints of one rule share (same host and port, e.g.
  different ``path`` selectors) gets the *union* of their facts. The reference gives
  every such endpoint the same Z3 constants, and contradictory facts make its solver
  unsatisfiable, silently dropping every finding of the policy. Each instance is
  reported once (the reference repeats identical lines);
* the capability method set of an instance is the union over every endpoint of the rule
  with that host and port, not only the first one (spec §11.4: a path-scoped sibling
  adding ``DELETE`` would otherwise go unseen);
* ``link_local_reach`` fires whenever an exfiltration-capable binary is allowed to reach
  a link-local or metadata host, whatever the L7 method set (spec §11.1, case P25): a
  plain ``GET`` to a metadata service returns instance credentials;
* endpoint facts treat audit mode and non-REST write operations as writes
  (:mod:`prover.proposal.facts`); a binary glob gets the union of the registry entries it
  matches (:mod:`prover.proposal.registry`); link-local recognition includes IPv4-mapped
  addresses and wildcards covering metadata hostnames (:mod:`prover.proposal.hosts`);
  credential matching is exact pattern intersection (:mod:`prover.proposal.hosts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from prover.proposal.credentials import CredentialSet
from prover.proposal.endpoint import Data, binary_paths, items, ports, rules_of, text
from prover.proposal.facts import EndpointFacts, endpoint_facts
from prover.proposal.findings import CATEGORY_ORDER, Category, Finding, FindingPath, make_finding
from prover.proposal.hosts import is_link_local_or_metadata
from prover.proposal.registry import BinaryRegistry


@dataclass
class _Instance:
    rule_key: str
    host: str
    port: int
    binaries: tuple[str, ...]
    inspected: bool = True
    writes: bool = False
    methods: set[str] = field(default_factory=set)

    def absorb(self, facts: EndpointFacts) -> None:
        self.inspected = self.inspected and facts.inspected
        self.writes = self.writes or facts.writes


def _instances(policy: Data) -> tuple[list[_Instance], list[str]]:
    instances: dict[tuple[str, str, int], _Instance] = {}
    binaries: list[str] = []
    for key, rule in rules_of(policy):
        rule_binaries = tuple(binary_paths(rule))
        binaries.extend(b for b in dict.fromkeys(rule_binaries) if b not in binaries)
        methods: dict[tuple[str, int], set[str]] = {}
        owned: list[_Instance] = []
        for endpoint in items(rule, "endpoints"):
            facts = endpoint_facts(endpoint)
            host = text(endpoint, "host")
            for port in ports(endpoint):
                instance = instances.get((key, host, port))
                if instance is None:
                    instance = _Instance(key, host, port, rule_binaries)
                    instances[(key, host, port)] = instance
                    owned.append(instance)
                instance.absorb(facts)
                methods.setdefault((host.lower(), port), set()).update(facts.methods)
        for instance in owned:
            instance.methods = methods[(instance.host.lower(), instance.port)]
    return list(instances.values()), binaries


def _no_checkpoint() -> None:
    return None


def run_model(
    policy: Data,
    credentials: CredentialSet,
    registry: BinaryRegistry,
    checkpoint: Callable[[], None] | None = None,
) -> tuple[Finding, ...]:
    """The raw (non-delta) findings of one policy, one per category with a path.

    ``checkpoint`` is called once per host and per binary (hosts times credentials can
    be large) and may raise to stop the model at a deadline.
    """
    tick = checkpoint or _no_checkpoint
    instances, binaries = _instances(policy)
    hosts = {instance.host for instance in instances}
    metadata = {host for host in hosts if is_link_local_or_metadata(host)}
    credentialed = set()
    for host in hosts:
        tick()
        if credentials.for_host(host):
            credentialed.add(host)
    paths: dict[Category, list[FindingPath]] = {category: [] for category in CATEGORY_ORDER}
    for binary in binaries:
        tick()
        capability = registry.lookup(binary)
        if not capability.can_exfiltrate:
            continue
        for instance in instances:
            if binary not in instance.binaries:
                continue
            host, port, where = instance.host, instance.port, instance.rule_key
            if host in metadata:
                mechanism = (
                    f"Link-local endpoint — {binary} can reach the host's metadata range "
                    "(cloud credentials are served there whatever scopes are declared)"
                )
                paths[Category.LINK_LOCAL_REACH].append(
                    FindingPath(
                        binary=binary, host=host, port=port, policy_name=where, mechanism=mechanism
                    )
                )
                continue
            http = capability.can_construct_http
            exfil = (not instance.inspected and http) or (instance.writes and http)
            if not (exfil or capability.bypasses_l7):
                continue
            if host not in credentialed:
                continue
            if capability.bypasses_l7:
                mechanism = (
                    f"{capability.description} — uses non-HTTP protocol, bypasses L7 "
                    "inspection, and a credential is in scope for this host"
                )
                paths[Category.L7_BYPASS_CREDENTIALED].append(
                    FindingPath(
                        binary=binary, host=host, port=port, policy_name=where, mechanism=mechanism
                    )
                )
                continue
            paths[Category.CREDENTIAL_REACH_EXPANSION].append(
                FindingPath(
                    binary=binary,
                    host=host,
                    port=port,
                    policy_name=where,
                    mechanism=f"Binary {binary} has credentialed reach to {host}:{port}",
                )
            )
            for method in sorted(instance.methods):
                paths[Category.CAPABILITY_EXPANSION].append(
                    FindingPath(
                        binary=binary,
                        host=host,
                        port=port,
                        method=method,
                        policy_name=where,
                        mechanism=f"Method {method} allowed for {binary} on {host}:{port}",
                    )
                )
    return tuple(make_finding(category, tuple(found)) for category, found in paths.items() if found)
