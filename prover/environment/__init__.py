"""Environment evidence: facts about the sandbox image that decide what depends on it.

:mod:`document` reads the evidence document, :mod:`paths` resolves paths through its
symlinks, :mod:`identity` resolves process identities, :mod:`evidence` records what a
check relied on; :mod:`collect` and :mod:`image` write a document from a root
filesystem or an image archive.
"""

from prover.environment.document import Environment, EnvironmentLoadError, load_environment
from prover.environment.evidence import Evidence

__all__ = ["Environment", "EnvironmentLoadError", "Evidence", "load_environment"]
