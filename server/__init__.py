"""The faces of policy-prover: the ``policy-prover`` command line and the MCP server.

Importing this package is cheap on purpose: the command line's ``check`` must start fast,
so nothing here imports the MCP SDK. The server lives in :mod:`server.app`.
"""

from __future__ import annotations
