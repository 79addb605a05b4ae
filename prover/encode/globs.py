"""Host, path and binary globs (spec §9.2) as Z3 regular expressions.

The languages are exactly those of :mod:`prover.concrete.glob`:

* hosts (separator ``.``), per character: ``**`` is any string (dots included, possibly
  empty), ``*`` is any run without ``.`` (possibly empty), every other character is
  literal; the whole pattern ``**`` is any string;
* paths and binaries (separator ``/``), per segment: a segment that is exactly ``**``
  (consecutive ones collapse) is "zero or more whole directories" — ``""`` or any string
  ending in ``/`` when more segments follow, any string when it is last; any other
  ``*`` (also inside ``**``/``***`` embedded in a segment) is a run without ``/``; other
  characters are literal and segments are re-joined by ``/``.

Characters range over Z3's whole (Unicode) alphabet, so ``/items/*`` matches
``/items/é`` as the runtime does. Compiled regexes are cached per (kind, pattern) in a
:class:`GlobCompiler`, one per ``z3.Context``.
"""

from __future__ import annotations

from typing import Literal

import z3

from prover.encode.automata import Element, host_elements, path_elements
from prover.encode.logic import text_value

GlobKind = Literal["host", "path"]


class GlobCompiler:
    """Compiles and caches glob regexes for one ``z3.Context``."""

    def __init__(self, ctx: z3.Context) -> None:
        self.ctx = ctx
        self.re_sort = z3.ReSort(z3.StringSort(ctx))
        self.any_string = z3.Full(self.re_sort)
        self.any_char = z3.AllChar(self.re_sort, ctx)
        self._cache: dict[tuple[GlobKind, str], z3.ReRef] = {}
        self._runs: dict[str, z3.ReRef] = {}

    # -- building blocks ---------------------------------------------------------------
    def literal(self, text: str) -> z3.ReRef:
        return z3.Re(text_value(text, self.ctx))

    def run_without(self, separator: str) -> z3.ReRef:
        """Any string (possibly empty) that does not contain ``separator``."""
        run = self._runs.get(separator)
        if run is None:
            other = z3.Intersect(self.any_char, z3.Complement(self.literal(separator)))
            run = z3.Star(other)
            self._runs[separator] = run
        return run

    def chars_except(self, excluded: str) -> z3.ReRef:
        """Any single character not in ``excluded``."""
        banned = [self.literal(c) for c in sorted(set(excluded))]
        union = banned[0] if len(banned) == 1 else z3.Union(*banned)
        return z3.Intersect(self.any_char, z3.Complement(union))

    def normalized_path(self, segment_char: z3.ReRef) -> z3.ReRef:
        """``/`` followed by ``/``-separated segments of ``segment_char`` (which must
        exclude ``/``), none of them ``.`` or ``..``, only the last one possibly empty.

        These are exactly the strings that start with ``/`` and contain no ``//``,
        ``/./``, ``/../`` and do not end in ``/.`` or ``/..``; a regex is much cheaper
        for Z3 than the equivalent ``Contains``/``SuffixOf`` negations.
        """
        dot = self.literal(".")
        not_dot = z3.Intersect(segment_char, z3.Complement(dot))
        rest = z3.Star(segment_char)
        # Non-empty and neither "." nor "..", without a complement of the whole segment:
        # a first character that is not a dot; or one dot then a non-dot; or two dots and
        # at least one more character.
        segment = z3.Union(
            z3.Concat(not_dot, rest),
            z3.Concat(dot, not_dot, rest),
            z3.Concat(dot, dot, z3.Plus(segment_char)),
        )
        slash = self.literal("/")
        return z3.Concat(slash, z3.Star(z3.Concat(segment, slash)), z3.Option(segment))

    def _concat(self, parts: list[z3.ReRef]) -> z3.ReRef:
        if not parts:
            return self.literal("")
        if len(parts) == 1:
            return parts[0]
        return z3.Concat(*parts)

    # -- globs -------------------------------------------------------------------------
    def host(self, pattern: str) -> z3.ReRef:
        """The language of a (lower-cased) host glob."""
        key: tuple[GlobKind, str] = ("host", pattern)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._compile_host(pattern)
            self._cache[key] = cached
        return cached

    def path(self, pattern: str) -> z3.ReRef:
        """The language of a path or binary glob (``""`` is the empty string only;
        callers that give ``""`` the meaning "any path" substitute ``**`` first)."""
        key: tuple[GlobKind, str] = ("path", pattern)
        cached = self._cache.get(key)
        if cached is None:
            cached = self._compile_path(pattern)
            self._cache[key] = cached
        return cached

    def _compile_host(self, pattern: str) -> z3.ReRef:
        return self._compile(host_elements(pattern))

    def _compile_path(self, pattern: str) -> z3.ReRef:
        return self._compile(path_elements(pattern))

    def _compile(self, elements: tuple[Element, ...]) -> z3.ReRef:
        """The regex of a glob read into elements by :mod:`prover.encode.automata` (the
        one reading of the grammar on the prover's side)."""
        parts: list[z3.ReRef] = []
        literal: list[str] = []
        for element in elements:
            if element.kind == "lit":
                literal.append(element.char)
                continue
            if literal:
                parts.append(self.literal("".join(literal)))
                literal.clear()
            if element.kind == "run":
                parts.append(self.run_without(element.char))
            elif element.kind == "dirs":
                directories = z3.Concat(self.any_string, self.literal("/"))
                parts.append(z3.Union(self.literal(""), directories))
            else:
                parts.append(self.any_string)
        if literal:
            parts.append(self.literal("".join(literal)))
        return self._concat(parts)
