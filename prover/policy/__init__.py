"""Authored policies: strict loading, the closed schema, and normalisation."""

from prover.policy.loader import load_policy, policy_sha256
from prover.policy.normalize import normalize
from prover.policy.schema import AuthoredPolicy, policy_json_schema

__all__ = ["AuthoredPolicy", "load_policy", "normalize", "policy_json_schema", "policy_sha256"]
