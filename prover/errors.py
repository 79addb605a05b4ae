"""Typed errors of the core library.

Every error that can reach a user carries a message that names the offending field
(dotted path, e.g. ``network_policies.gh.endpoints[0].host``) or limit. Faces turn these
into ``error``/``invalid_input`` results; none of them ever prints a traceback.
"""

from __future__ import annotations

from prover.results.text import escape_control


class ProverError(Exception):
    """Base class of every error raised on purpose by the prover."""


class PolicyLoadError(ProverError):
    """A policy text could not be read as an authored sandbox policy.

    ``path`` is the dotted field path of the problem when there is one ("" for the
    document itself); ``message`` is the complete human-readable sentence, with control
    characters from the input escaped (a newline as backslash-n, ESC as backslash-u{1b})
    so that printing it can neither break a line nor drive a terminal.
    """

    def __init__(self, message: str, path: str = "") -> None:
        message = escape_control(message)
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


class ProposalError(ProverError):
    """A proposal could not be read or merged into the current policy (the message's
    control characters escaped, as for :class:`PolicyLoadError`)."""

    def __init__(self, message: str) -> None:
        super().__init__(escape_control(message))
