"""An independent judge of what the sandbox OpenShell builds from a policy allows.

Written from the runtime's source (NVIDIA/OpenShell at ``2f7fb65``, ``crates/``), not
from the prover: nothing here imports ``prover``. Each rule cites the upstream file and
function it follows. Given a policy's YAML text and an :class:`~.image.Image` (the
paths, symlinks, accounts, ``USER``, workdir, compute driver and GPU of the sandbox
image), :func:`~.sandbox.build_sandbox` computes the sandbox the runtime runs and
answers whether it allows one concrete action: a filesystem access to a path, running
as an identity, a network request by an executable. :mod:`.judge` compares two such
sandboxes to judge a prover's verdict.

What it does not model raises :class:`~.errors.Unmodelled` (the campaign skips such
pairs and counts them), never a guess.
"""

from tests.soundness.sandbox_oracle.errors import Unmodelled
from tests.soundness.sandbox_oracle.image import Image
from tests.soundness.sandbox_oracle.sandbox import Sandbox, World, build_sandbox

__all__ = ["Image", "Sandbox", "Unmodelled", "World", "build_sandbox"]
