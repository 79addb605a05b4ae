"""policy-prover core: load OpenShell sandbox policies and prove containment with Z3.

Importable on its own: nothing here imports the MCP SDK or the command line.

The stages, in the order data flows (no stage calls back into an earlier one):

* ``policy``: text -> loaded policy (reader, schema, the mainline reading) -> the
  normalised model (``policy.model``);
* ``runtime``: what the OpenShell runtime enforces for it: which policies run at all
  (its validator), the filesystem (baseline paths, Landlock on or off), the executables
  a binary matches, identities per driver; ``environment`` reads the image's facts;
* ``concrete`` (the plain evaluator and counterexample replay) and ``encode`` (the Z3
  encodings and solver); ``extended`` reads constructs beyond the reference model as
  upper and lower bounds;
* ``checks``: the verdict (``checks.pair`` runs a whole check); ``explain`` and
  ``proposal`` build on it;
* ``results``: result records, their JSON schema, text and report forms;
* ``run``: deadlines, worker threads and the share of the machine each call gets;
  ``api`` is the face the command line and the MCP server call.
"""

from __future__ import annotations

__version__ = "0.1.0"
