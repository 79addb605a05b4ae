"""Soundness campaign: random related policy pairs judged by the concrete evaluator."""
