"""The one exception of the oracle."""

from __future__ import annotations


class Unmodelled(Exception):
    """The input uses something the oracle does not model; the reason names it."""
