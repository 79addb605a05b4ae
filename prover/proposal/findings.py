"""Finding categories, paths and findings (spec §3.7), and their shorthand (spec §4)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Category(StrEnum):
    LINK_LOCAL_REACH = "link_local_reach"
    L7_BYPASS_CREDENTIALED = "l7_bypass_credentialed"
    CREDENTIAL_REACH_EXPANSION = "credential_reach_expansion"
    CAPABILITY_EXPANSION = "capability_expansion"


#: Emission order of the categories (spec §3.6).
CATEGORY_ORDER: tuple[Category, ...] = tuple(Category)

TITLES: dict[Category, str] = {
    Category.LINK_LOCAL_REACH: "Link-Local or Metadata Reach",
    Category.L7_BYPASS_CREDENTIALED: "L7-Bypass Binary with Credential in Scope",
    Category.CREDENTIAL_REACH_EXPANSION: "Credentialed Reach Expansion",
    Category.CAPABILITY_EXPANSION: "Capability Expansion on Credentialed Host",
}

#: Category labels of the reference CLI's finding summary (spec §10).
LABELS: dict[Category, str] = {
    Category.LINK_LOCAL_REACH: "link-local reach",
    Category.L7_BYPASS_CREDENTIALED: "L7-bypass binary with credential",
    Category.CREDENTIAL_REACH_EXPANSION: "credentialed reach expansion",
    Category.CAPABILITY_EXPANSION: "capability expansion on credentialed host",
}

_SUMMARIES: dict[Category, str] = {
    Category.LINK_LOCAL_REACH: (
        "A binary can reach a link-local address or a cloud metadata hostname, where "
        "instance credentials are served."
    ),
    Category.L7_BYPASS_CREDENTIALED: (
        "A binary whose wire protocol the L7 proxy cannot inspect reaches a host that "
        "has a sandbox credential in scope."
    ),
    Category.CREDENTIAL_REACH_EXPANSION: (
        "A binary can now send data to a (host, port) that has a sandbox credential in "
        "scope and that it could not reach that way before."
    ),
    Category.CAPABILITY_EXPANSION: (
        "A (binary, host, port) that already had credentialed reach is allowed HTTP "
        "methods it was not allowed before."
    ),
}

_REMEDIATIONS: dict[Category, str] = {
    Category.LINK_LOCAL_REACH: (
        "Do not let a sandbox reach link-local or metadata endpoints: they can hand out "
        "host credentials the sandbox must not hold. Remove this endpoint."
    ),
    Category.L7_BYPASS_CREDENTIALED: (
        "Protocols such as git, ssh or raw TCP are not inspected at L7. Unless the task "
        "needs credentialed write access through this binary, drop it from the rule."
    ),
    Category.CREDENTIAL_REACH_EXPANSION: (
        "Credentialed reach lets the binary act with the sandbox's credential. A human "
        "should confirm this binary is meant to authenticate to this host at all."
    ),
    Category.CAPABILITY_EXPANSION: (
        "New methods change what the sandbox can do with its credential. A human should "
        "confirm the added methods (above all PUT, POST, PATCH, DELETE) are part of the task."
    ),
}


class FindingPath(BaseModel):
    """One (binary, endpoint[, method]) witness of a finding."""

    model_config = ConfigDict(frozen=True)

    binary: str
    host: str
    port: int
    method: str = ""
    policy_name: str
    mechanism: str

    def delta_key(self, category: Category) -> tuple[str, str, int, str, str]:
        """The reference's ``finding_path_key``: the rule name and mechanism are left out,
        so the same gap under a different rule name is not new."""
        return (self.binary, self.host, self.port, category.value, self.method)

    def shorthand(self, category: Category) -> str:
        endpoint = f"{self.host}:{self.port}"
        if category is Category.CAPABILITY_EXPANSION:
            return f"{category.value}: {self.method} on {endpoint} via {self.binary}"
        return f"{category.value}: {endpoint} via {self.binary}"


class Finding(BaseModel):
    """All paths of one category; ``accepted`` is set by an accepted-risks file only."""

    model_config = ConfigDict(frozen=True)

    category: Category
    title: str
    description: str
    paths: tuple[FindingPath, ...]
    remediation: tuple[str, ...]
    accepted: bool = False
    accepted_reason: str = ""

    def shorthand(self) -> str:
        """The finding's lines in ``validation_result``, joined by newline + two spaces."""
        return "\n  ".join(path.shorthand(self.category) for path in self.paths)


def make_finding(category: Category, paths: tuple[FindingPath, ...]) -> Finding:
    """A finding with the category's title, a description counting its paths, remediation."""
    return Finding(
        category=category,
        title=TITLES[category],
        description=f"{_SUMMARIES[category]} ({len(paths)} path(s).)",
        paths=paths,
        remediation=(_REMEDIATIONS[category],),
    )


def with_paths(finding: Finding, paths: tuple[FindingPath, ...]) -> Finding:
    """The same finding restricted to ``paths`` (description recounted)."""
    rebuilt = make_finding(finding.category, paths)
    return rebuilt.model_copy(
        update={"accepted": finding.accepted, "accepted_reason": finding.accepted_reason}
    )
