"""Host, path and binary globs exactly as the boundary-check spec §9.2 defines them.

A pattern compiles to a short list of tokens and is run as a set-of-positions automaton
over the subject string, so matching is linear in ``len(tokens) * len(subject)`` and has
no backtracking blow-up. No regular-expression engine is involved: the point of this
module is to be an independent, obviously-correct reading of the spec that the Z3
encodings are tested against.

Tokens:
* ``_Lit(text)``: ``text`` literally;
* ``_NoSep(sep)``: any run (possibly empty) of characters other than ``sep``;
* ``_Any``: any string (possibly empty, may contain separators);
* ``_Dirs``: the empty string, or any string that ends with ``/`` (a path segment that
  is exactly ``**`` and is followed by more segments: "zero or more whole directories").

Host matching is case-insensitive: the runtime compares ``lower(pattern)`` with
``lower(host)`` (the reference model lower-cases the policy side and only ever produces
lower-case witnesses, on which the two readings agree). Paths and binaries are
case-sensitive. Characters are Unicode code points, as in Z3's string theory.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class _Lit:
    text: str


@dataclass(frozen=True, slots=True)
class _NoSep:
    sep: str


@dataclass(frozen=True, slots=True)
class _AnyString:
    pass


@dataclass(frozen=True, slots=True)
class _Dirs:
    pass


_Token = _Lit | _NoSep | _AnyString | _Dirs
_ANY = _AnyString()
_DIRS = _Dirs()


def _append(tokens: list[_Token], token: _Token) -> None:
    """Append ``token``, merging neighbours whose concatenation is the same language."""
    if tokens:
        last = tokens[-1]
        if isinstance(last, _Lit) and isinstance(token, _Lit):
            tokens[-1] = _Lit(last.text + token.text)
            return
        if isinstance(last, _NoSep) and token == last:
            return
    tokens.append(token)


@lru_cache(maxsize=4096)
def _host_tokens(pattern: str) -> tuple[_Token, ...]:
    """Per character: ``**`` is any string, ``*`` is a run without ``.``."""
    if pattern == "**":
        return (_ANY,)
    tokens: list[_Token] = []
    index = 0
    while index < len(pattern):
        if pattern.startswith("**", index):
            _append(tokens, _ANY)
            index += 2
        elif pattern[index] == "*":
            _append(tokens, _NoSep("."))
            index += 1
        else:
            _append(tokens, _Lit(pattern[index]))
            index += 1
    return tuple(tokens)


@lru_cache(maxsize=4096)
def _path_tokens(pattern: str) -> tuple[_Token, ...]:
    """Per ``/``-segment: a whole ``**`` segment spans directories, other ``*`` do not."""
    if pattern == "**":
        return (_ANY,)
    segments = pattern.split("/")
    tokens: list[_Token] = []
    index = 0
    while index < len(segments):
        segment = segments[index]
        if segment == "**":
            while index + 1 < len(segments) and segments[index + 1] == "**":
                index += 1
            # A middle ``**`` absorbs its following ``/``; a last one is any string.
            _append(tokens, _DIRS if index + 1 < len(segments) else _ANY)
        else:
            for character in segment:
                _append(tokens, _NoSep("/") if character == "*" else _Lit(character))
            if index + 1 < len(segments):
                _append(tokens, _Lit("/"))
        index += 1
    return tuple(tokens)


def _run(tokens: tuple[_Token, ...], subject: str) -> bool:
    """Whether ``subject`` as a whole is in the language of ``tokens``."""
    size = len(subject)
    reach: set[int] = {0}
    for token in tokens:
        if not reach:
            return False
        if isinstance(token, _Lit):
            width = len(token.text)
            reach = {p + width for p in reach if subject.startswith(token.text, p)}
        elif isinstance(token, _NoSep):
            extended: set[int] = set()
            covered = -1  # every position <= covered is already in ``extended``
            for start in sorted(reach):
                stop = subject.find(token.sep, start)
                stop = size if stop < 0 else stop
                extended.update(range(max(start, covered + 1), stop + 1))
                covered = max(covered, stop)
            reach = extended
        elif isinstance(token, _AnyString):
            reach = set(range(min(reach), size + 1))
        else:  # _Dirs: stay, or consume up to and including some later "/"
            first = min(reach)
            reach = reach | {i + 1 for i in range(first, size) if subject[i] == "/"}
    return size in reach


def host_matches(pattern: str, host: str) -> bool:
    """Host glob (separator ``.``): ``**`` any string, ``*`` a run without ``.``.

    Case-insensitive on both sides (``str.lower``), as the runtime compares them.
    """
    return _run(_host_tokens(pattern.lower()), host.lower())


def path_matches(pattern: str, path: str) -> bool:
    """Path glob (separator ``/``) of an endpoint or REST rule; ``""`` means any path."""
    if pattern == "":
        return True
    return _run(_path_tokens(pattern), path)


def binary_matches(pattern: str, binary: str) -> bool:
    """Binary glob: the path-glob semantics, without the ``""``-is-any convention.

    An empty binary pattern is rejected by shape validation; here it matches only the
    empty string, as the reference's compiled glob does.
    """
    return _run(_path_tokens(pattern), binary)
