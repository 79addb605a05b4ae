"""One shell word: its quoting, the expansions in it, and what it becomes when the shell runs.

Bash expands an unquoted word in this order: brace expansion, tilde expansion, parameter
expansion and command substitution, word splitting, pathname expansion (globbing), quote
removal. :func:`expand` follows that order for the parts a hook can know ahead of time:
``~``/``~/``, ``$NAME``/``${NAME}`` and positional parameters whose values are known, and
globs, which it matches against the file system as the shell will. Anything else (a
command substitution, ``${x:-y}``, ``$'...'``, brace expansion, an unquoted expansion
that word splitting would cut, a glob that matches no file or several) makes the value
unknown (``None``): a hook must then refuse to guess.

Paths are resolved as the kernel will (:func:`kernel_path`): symbolic links are followed
before ``..`` is applied, so ``link/../p.yaml`` names the file next to the link's target.
"""

from __future__ import annotations

import itertools
import os
import re
from typing import NamedTuple

#: Segment kinds: literal text, a parameter (``$NAME``), a command/process substitution
#: (its inner text), and any other expansion the hook cannot evaluate.
LIT, PARAM, SUB, OTHER = "lit", "param", "sub", "other"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL_PARAMS = frozenset("@*#?$!-")
_DQ_ESCAPABLE = frozenset('$`"\\\n')
_GLOB_CHARS = frozenset("*?[")
#: Path components with wildcards a glob may have before the hook stops matching it.
MAX_GLOB_LEVELS = 2
_SPECIAL = re.compile(r"[~*?\[{]")
_PLAIN = re.compile(r"[^\\'\"$`<>]+")


#: ``openshell`` named as a command inside a text: after a start, blank, quote or shell
#: punctuation (``!`` for git aliases, ``/`` for a path to the binary) and before an end;
#: ``test_openshell.py`` or ``openshell-notes.md`` do not name it.
MENTION = re.compile(r"(?:^|[\s!;&|(`'\"/=:{,@])openshell(?=$|[\s;&|)`'\"<>}])")


def names_openshell(text: str) -> bool:
    """``text`` names ``openshell`` as a command (any case)."""
    return "openshell" in text.casefold() and MENTION.search(text.casefold()) is not None


class Segment(NamedTuple):
    kind: str
    text: str
    quoted: bool


def balanced_end(text: str, start: int, opening: str, closing: str) -> int:
    """Index just past the ``closing`` that balances ``text[start] == opening``.

    Quotes and backslashes inside are honoured; ``-1`` when it is unterminated.
    """
    depth = 0
    i = start
    n = len(text)
    quote: str | None = None
    while i < n:
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            i += 1
        elif quote == '"':
            if char == '"':
                quote = None
        elif char in "'\"":
            quote = char
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def backquote_end(text: str, start: int) -> int:
    """Index just past the backquote closing ``text[start] == '`'``; ``-1`` if unterminated."""
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    return -1


def segments(raw: str) -> list[Segment]:
    """The parts of a raw word, with their quoting (the scanner checked termination)."""
    if _PLAIN.fullmatch(raw):
        return [Segment(LIT, raw, False)]  # the common case: no quotes, no expansions
    out: list[Segment] = []
    i = 0
    n = len(raw)
    while i < n:
        char = raw[i]
        if char == "\\":
            if i + 1 < n:
                if raw[i + 1] != "\n":  # a backslash-newline is a line continuation
                    out.append(Segment(LIT, raw[i + 1], True))
                i += 2
            else:
                out.append(Segment(LIT, "\\", False))
                i += 1
        elif char == "'":
            end = raw.find("'", i + 1)
            end = n if end < 0 else end
            out.append(Segment(LIT, raw[i + 1 : end], True))
            i = end + 1
        elif char == '"':
            i = _double_quoted(raw, i + 1, out)
        elif char == "$":
            i = _dollar(raw, i, out, quoted=False)
        elif char == "`":
            end = backquote_end(raw, i)
            end = n if end < 0 else end
            out.append(Segment(SUB, raw[i + 1 : end - 1], False))
            i = end
        elif char in "<>" and raw.startswith("(", i + 1):
            end = balanced_end(raw, i + 1, "(", ")")
            end = n if end < 0 else end
            out.append(Segment(SUB, raw[i + 2 : end - 1], False))
            i = end
        else:
            match = _PLAIN.match(raw, i)
            end = match.end() if match else i + 1
            out.append(Segment(LIT, raw[i:end], False))
            i = end
    return out


def _double_quoted(raw: str, i: int, out: list[Segment]) -> int:
    n = len(raw)
    while i < n and raw[i] != '"':
        char = raw[i]
        if char == "\\" and i + 1 < n and raw[i + 1] in _DQ_ESCAPABLE:
            if raw[i + 1] != "\n":
                out.append(Segment(LIT, raw[i + 1], True))
            i += 2
        elif char == "$":
            i = _dollar(raw, i, out, quoted=True)
        elif char == "`":
            end = backquote_end(raw, i)
            end = n if end < 0 else end
            out.append(Segment(SUB, raw[i + 1 : end - 1], True))
            i = end
        else:
            out.append(Segment(LIT, char, True))
            i += 1
    out.append(Segment(LIT, "", True))  # "" is an empty word, not no word
    return i + 1


def _dollar(raw: str, i: int, out: list[Segment], quoted: bool) -> int:
    n = len(raw)
    nxt = raw[i + 1] if i + 1 < n else ""
    if nxt == "(":
        end = balanced_end(raw, i + 1, "(", ")")
        end = n if end < 0 else end
        if raw.startswith("((", i + 1):
            # Arithmetic: its subscripts may run command substitutions.
            for inner in find_substitutions(raw[i + 3 : end - 2]):
                out.append(Segment(SUB, inner, quoted))
            out.append(Segment(OTHER, raw[i:end], quoted))
        else:
            out.append(Segment(SUB, raw[i + 2 : end - 1], quoted))
        return end
    if nxt == "{":
        end = balanced_end(raw, i + 1, "{", "}")
        end = n if end < 0 else end
        inner = raw[i + 2 : end - 1]
        if _NAME.fullmatch(inner) or inner.isdigit():
            out.append(Segment(PARAM, inner, quoted))
        else:
            for sub in find_substitutions(inner):  # ${x:-$(cmd)} may run cmd
                out.append(Segment(SUB, sub, quoted))
            out.append(Segment(OTHER, raw[i:end], quoted))
        return end
    if nxt == "'" and not quoted:  # $'...': ANSI-C quoting, escapes decoded by the shell
        j = i + 2
        while j < n and raw[j] != "'":
            j += 2 if raw[j] == "\\" else 1
        out.append(Segment(OTHER, raw[i : j + 1], quoted))
        return j + 1
    if nxt == '"' and not quoted:  # $"...": a translated string, else a plain "..."
        return _double_quoted(raw, i + 2, out)
    match = _NAME.match(raw, i + 1)
    if match:
        out.append(Segment(PARAM, match.group(), quoted))
        return match.end()
    if nxt.isdigit():
        out.append(Segment(PARAM, nxt, quoted))
        return i + 2
    if nxt and nxt in _SPECIAL_PARAMS:
        out.append(Segment(OTHER, raw[i : i + 2], quoted))
        return i + 2
    out.append(Segment(LIT, "$", quoted))
    return i + 1


def find_substitutions(text: str) -> list[str]:
    """The command substitutions (``$(...)``, backquotes) anywhere in ``text``, as in an
    unquoted here-document body or inside ``${...}`` and ``$((...))``."""
    found: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
        elif text.startswith("$((", i):
            end = balanced_end(text, i + 1, "(", ")")
            end = n if end < 0 else end
            found += find_substitutions(text[i + 3 : end - 2])
            i = end
        elif text.startswith("$(", i):
            end = balanced_end(text, i + 1, "(", ")")
            end = n if end < 0 else end
            found.append(text[i + 2 : end - 1])
            i = end
        elif char == "`":
            end = backquote_end(text, i)
            end = n if end < 0 else end
            found.append(text[i + 1 : end - 1])
            i = end
        else:
            i += 1
    return found


def literal_value(parts: list[Segment]) -> str:
    """Quote removal only: literal text as is, expansions as written (for messages)."""
    return "".join(part.text if part.kind == LIT else _written(part) for part in parts)


def _written(part: Segment) -> str:
    if part.kind == PARAM:
        return "${" + part.text + "}"
    if part.kind == SUB:
        return "$(" + part.text + ")"
    return part.text


def substitutions(parts: list[Segment]) -> list[str]:
    """The inner text of every command or process substitution in the word."""
    return [part.text for part in parts if part.kind == SUB]


class Lookup(NamedTuple):
    """Where expansions look values up. ``None`` values are known to be unknown."""

    variables: dict[str, str | None]
    positional: tuple[str, ...] | None  # $0, $1, ...; None when unknown
    cwd: str | None


def _parameter(name: str, lookup: Lookup) -> str | None:
    if name.isdigit():
        index = int(name)
        if lookup.positional is None:
            return None
        return lookup.positional[index] if index < len(lookup.positional) else ""
    return lookup.variables.get(name)


def expand(parts: list[Segment], lookup: Lookup, *, assignment: bool = False) -> list[str] | None:
    """The fields the word becomes, or ``None`` when that cannot be known before it runs.

    ``assignment``: the value of ``NAME=value`` (no word splitting, no globbing).
    """
    if len(parts) == 1 and parts[0].kind == LIT and not _SPECIAL.search(parts[0].text):
        return [parts[0].text]  # a plain word: nothing to expand
    chars: list[tuple[str, bool]] = []  # (text, quoted) after parameter expansion
    if _brace_expansion(parts):
        return None
    parts = list(parts)
    if parts and parts[0].kind == LIT and not parts[0].quoted and parts[0].text.startswith("~"):
        home = _tilde(parts, lookup)
        if home is None:
            return None
        chars.append((home, True))
        parts[0] = Segment(LIT, parts[0].text[1:], False)
    previous = ""
    for part in parts:
        if part.kind in (SUB, OTHER):
            return None
        if part.kind == PARAM:
            value = _parameter(part.text, lookup)
            if value is None:
                return None
            if not part.quoted and not assignment and (not value or _splits(value, lookup)):
                return None  # word splitting (and an empty unquoted word vanishes)
            chars.append((value, part.quoted))
            previous = value
            continue
        if not part.quoted and (
            "=~" in part.text
            or ":~" in part.text
            or (part.text.startswith("~") and previous.endswith(("=", ":")))
        ):
            return None  # bash expands ~ after = and : in some words, other shells do not
        chars.append((part.text, part.quoted))
        previous = part.text
    value = "".join(text for text, _ in chars)
    if assignment:
        return [value]
    if any(not quoted and any(c in _GLOB_CHARS for c in text) for text, quoted in chars):
        return _glob(chars, lookup.cwd)
    return [value]


def _splits(value: str, lookup: Lookup) -> bool:
    """Word splitting would cut ``value``: it holds a character of ``$IFS``, or ``IFS`` was
    set to something the hook does not know."""
    if "IFS" not in lookup.variables:
        return any(c in value for c in " \t\n")
    ifs = lookup.variables["IFS"]
    return ifs is None or any(c in value for c in ifs)


def _brace_expansion(parts: list[Segment]) -> bool:
    if not any("{" in part.text for part in parts if part.kind == LIT and not part.quoted):
        return False
    text = "".join(part.text if part.kind == LIT and not part.quoted else "\0" for part in parts)
    start = text.find("{")
    return start >= 0 and "}" in text[start:] and ("," in text[start:] or ".." in text[start:])


def _tilde(parts: list[Segment], lookup: Lookup) -> str | None:
    """``~`` or ``~/...`` at the start of a word: ``$HOME``; ``~user``, ``~+``: unknown."""
    text = parts[0].text
    if text == "~" and len(parts) > 1:
        return None  # ~"x", ~$v: the tilde prefix has quoted parts or expansions
    if text != "~" and not text.startswith("~/"):
        return None
    return lookup.variables.get("HOME")


def _glob(chars: list[tuple[str, bool]], cwd: str | None) -> list[str] | None:
    """Pathname expansion: exactly one match, whatever ``dotglob`` says, else unknown.

    No match leaves the pattern as is in bash, removes it with ``nullglob`` and fails
    with ``failglob`` or in zsh; several matches are sorted by the locale's collation.
    A hook cannot know those options, so only a single unambiguous match is a value.
    """
    if cwd is None:
        return None
    import glob  # only a line with a glob pays for it

    pattern = "".join(text if not quoted else glob.escape(text) for text, quoted in chars)
    active = "".join(text if not quoted else "\0" * len(text) for text, quoted in chars)
    if not any(c in active for c in "*?") and not re.search(r"\[[^\]]+\]", active):
        return ["".join(text for text, _ in chars)]  # a lone "[" matches itself
    wild = [part for part in active.split("/") if any(c in part for c in "*?[")]
    if len(wild) > MAX_GLOB_LEVELS:
        return None  # `/*/*/*/*/x*` would walk the whole file system
    plain = list(itertools.islice(glob.iglob(pattern, root_dir=cwd), 2))
    hidden = list(itertools.islice(glob.iglob(pattern, root_dir=cwd, include_hidden=True), 2))
    if len(plain) == 1 and plain == hidden:
        return plain
    return None


def kernel_path(value: str, cwd: str | None) -> str | None:
    """The absolute path the kernel opens for ``value`` from ``cwd`` (symlinks followed).

    ``os.path.realpath`` resolves each component left to right, following a symbolic
    link before applying a ``..`` after it, as path resolution in the kernel does.
    """
    if not value:
        return None
    if not os.path.isabs(value):
        if cwd is None:
            return None
        value = os.path.join(cwd, value)
    return os.path.realpath(value)


def logical_path(value: str, cwd: str | None) -> str | None:
    """``value`` joined to ``cwd`` and normalised as text (``cd`` without ``-P``)."""
    if not value:
        return None
    if os.path.isabs(value):
        return os.path.normpath(value)
    if cwd is None:
        return None
    return os.path.normpath(os.path.join(cwd, value))
