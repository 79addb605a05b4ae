"""Hostile input: fuzzing of the loader, the checks and the MCP tools, and protocol abuse."""
