"""The extended analysis: the policy language beyond the reference model, read soundly."""
