"""The sandbox the runtime runs for one policy in one image and one world.

A *world* fixes what neither the policy nor the image decides: whether the kernel has
Landlock (``probe_availability``, ``landlock.rs``) and whether the operator left
binary identity on (``network_binary_identity_required``, ``opa.rs``; the default).

The supervisor topology is the default one (``process_enforcement_mode`` in
``openshell-sandbox/src/lib.rs``: ``ProcessEnforcementMode::Full``, Landlock paths opened
as root); the Kubernetes sidecar topology (``NetworkOnly``: paths opened as the workload's
user, missing ones skipped even under ``hard_requirement``) is not modelled.

Order, as ``load_policy`` (``openshell-sandbox/src/lib.rs``) and the gateway run it:
parse; ``validate_sandbox_policy`` and ``find_endpoint_ambiguities`` (refused: no
sandbox); enrichment; the engine (``validate_l7_policies`` refusing: the sandbox runs
``restrictive_default_policy`` instead); identity; Landlock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from tests.soundness.sandbox_oracle.errors import Unmodelled
from tests.soundness.sandbox_oracle.filesystem import Landlock, SandboxDoesNotStart, landlock_for
from tests.soundness.sandbox_oracle.identity import process_identity
from tests.soundness.sandbox_oracle.image import Image
from tests.soundness.sandbox_oracle.network import DataRule, Request, build_data, decide
from tests.soundness.sandbox_oracle.policy import ParseError, Policy, parse_policy
from tests.soundness.sandbox_oracle.validate import (
    ambiguities,
    supervisor_refusals,
    validation_violations,
)

#: ``restrictive_default_policy`` (``openshell-policy/src/lib.rs``).
RESTRICTIVE_DEFAULT = Policy(
    filesystem=(
        True,
        ("/usr", "/lib", "/proc", "/dev/urandom", "/app", "/etc", "/var/log"),
        ("/tmp", "/dev/null"),
    ),
    landlock="best_effort",
    process=None,
    rules=(),
)


@dataclass(frozen=True)
class World:
    kernel_landlock: bool = True
    binary_identity: bool = True


WORLDS = tuple(World(k, b) for k in (True, False) for b in (True, False))


@dataclass
class Sandbox:
    """``refused`` (the runtime never runs the policy) or ``aborted`` (the supervisor
    stops before the workload starts) both mean: nothing is allowed."""

    policy: Policy | None
    image: Image
    world: World
    refused: list[str] = field(default_factory=list)
    aborted: str | None = None
    fallback: list[str] = field(default_factory=list)
    landlock: Landlock | None = None
    identity: tuple[int, int] | None = None
    data: list[DataRule] = field(default_factory=list)

    @property
    def runs(self) -> bool:
        return not self.refused and self.aborted is None

    def allows_file(self, access: str, path: str) -> bool:
        return (
            self.runs
            and self.landlock is not None
            and self.landlock.allows(self.image, access, path)
        )

    def allows_identity(self, ids: tuple[int, int]) -> bool:
        return self.runs and self.identity == ids

    def allows_request(self, req: Request) -> bool:
        return self.runs and self._decide(req)

    @cached_property
    def _cache(self) -> dict[Request, bool]:
        return {}

    def _decide(self, req: Request) -> bool:
        if req not in self._cache:
            self._cache[req] = decide(self.data, req, self.world.binary_identity)
        return self._cache[req]


def build_sandbox(text: str, image: Image, world: World = World()) -> Sandbox:
    """The sandbox for ``text``; raises :class:`Unmodelled` for what is not modelled."""
    try:
        policy = parse_policy(text)
    except ParseError as exc:
        return Sandbox(None, image, world, refused=[f"parse: {exc}"])
    undecided: list[str] = []
    refused = [f"validation: {v}" for v in validation_violations(policy, undecided)]
    refused += [f"ambiguity: {a}" for a in ambiguities(policy, undecided)]
    if refused:
        return Sandbox(policy, image, world, refused=refused)
    if undecided:
        raise Unmodelled(f"validation: {undecided[0]}")
    if policy.unmodelled:
        raise Unmodelled(policy.unmodelled[0])
    fallback = supervisor_refusals(policy)
    effective = RESTRICTIVE_DEFAULT if fallback else policy
    sandbox = Sandbox(effective, image, world, fallback=fallback)
    try:
        # Identity before Landlock: the supervisor resolves it first; either aborts.
        sandbox.identity = process_identity(effective, image)
        # load_policy replaces the enriched proto by the default, unenriched.
        sandbox.landlock = landlock_for(
            effective, image, world.kernel_landlock, enrich=not fallback
        )
    except SandboxDoesNotStart as exc:
        sandbox.aborted = str(exc)
        return sandbox
    sandbox.data = build_data(effective, image)
    return sandbox
