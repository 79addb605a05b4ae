"""The sandbox credential set (spec §7): which hosts have a credential in scope.

Accepted documents: the reference CLI file ``{credentials: [...]}`` or a bare list of
credentials. A credential is ``{name, type, target_hosts, scopes?, injected_via?}``;
only ``target_hosts`` influences findings (presence only, no scope modelling). Entries
are closed objects: a misspelt ``target_hosts`` would otherwise silently drop a
credential and hide findings.

Host matching is host-only (every port), as in the reference prover; see
:func:`prover.proposal.hosts.patterns_overlap` for the overlap test.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, StrictStr

from prover.errors import ProposalError
from prover.proposal.fields import parse_model
from prover.proposal.hosts import patterns_overlap
from prover.proposal.reading import read_document


class Credential(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: StrictStr = ""
    type: StrictStr = ""
    scopes: tuple[StrictStr, ...] = ()
    injected_via: StrictStr = ""
    target_hosts: tuple[StrictStr, ...] = ()


class CredentialSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    credentials: tuple[Credential, ...] = ()

    def for_host(self, host: str) -> tuple[Credential, ...]:
        """Credentials with a target host pattern that can name the same host as ``host``."""
        return tuple(
            credential
            for credential in self.credentials
            if any(patterns_overlap(host, target) for target in credential.target_hosts)
        )


def load_credentials(
    data: str | bytes | None, checkpoint: Callable[[], None] | None = None
) -> CredentialSet:
    """Parse the credential document; ``None`` (or an empty document) means no credentials."""
    if data is None:
        return CredentialSet()
    document = read_document(data, "credentials", checkpoint)
    if document is None:
        return CredentialSet()
    if isinstance(document, list):
        document = {"credentials": document}
    if not isinstance(document, dict):
        raise ProposalError("credentials: expected {credentials: [...]} or a list of credentials")
    return parse_model(CredentialSet, document, "credentials")
