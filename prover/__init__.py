"""policy-prover core: load OpenShell sandbox policies and prove containment with Z3.

Importable on its own: nothing here imports the MCP SDK or the command line.
"""

from __future__ import annotations

__version__ = "0.1.0"
