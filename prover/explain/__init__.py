"""Plain explanations of boundary-check results, and fixes the prover re-checks.

``explain(candidate, boundary)`` says what the candidate allows beyond the boundary, which
entries grant it, which boundary entries come closest and on what they fail, and offers
the smallest verified edit (narrowing before deleting); ``render_text`` renders it.
"""

from __future__ import annotations

from prover.explain.core import explain, explain_input_error
from prover.explain.models import Explanation
from prover.explain.text import render_text

__all__ = ["Explanation", "explain", "explain_input_error", "render_text"]
