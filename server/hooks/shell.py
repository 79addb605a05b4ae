"""Splitting a shell command line into simple commands, as far as a hook needs it.

A hook sees the command line an agent is about to run, e.g. ``cd infra &&
OPENSHELL_SANDBOX_POLICY=p.yaml openshell sandbox create -- claude``. This module finds
its simple commands and, for each, the variable assignments in front of it, its words,
the directory it runs in (following ``cd``/``pushd`` and subshells) and the files the
line wrote before it (redirections, ``tee``, ``cp``/``mv``/``install``).

A small scanner splits the text at unquoted operators (``;``, ``&&``, ``||``, ``|``,
``&``, newlines, parentheses, redirections) and skips comments and here-document bodies;
:func:`shlex.split` then unquotes each word. Words with a command substitution
(``$(...)``, backquotes, ``<(...)``) are kept raw and marked dynamic: their value is
unknown until the shell runs. ``bash -c STRING``, ``sh -c``, ``eval`` and the usual
wrappers (``env``, ``sudo``, ``command``, ``exec``, ``nohup``, ``time``, ``nice``,
``timeout``) are looked through. Only the standard library is used: this runs on every
shell command an agent issues.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

#: Operators, longest first so that the scanner matches greedily.
_OPERATORS = (
    "&>>",
    "<<<",
    "<<-",
    ";;",
    "&&",
    "||",
    "|&",
    ">>",
    "<<",
    ">&",
    "<&",
    "&>",
    ">|",
    "<>",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
)
_OPERATOR_START = frozenset(";&|()<>")
_SEPARATORS = frozenset({";", ";;", "&&", "||", "|", "|&", "&", "\n"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_REDIRECTS = _WRITE_REDIRECTS | {"<", "<<<", ">&", "<&"}
_HEREDOCS = frozenset({"<<", "<<-"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
#: Nesting limit for ``bash -c`` / ``eval`` strings.
_MAX_DEPTH = 8


class ShellSyntaxError(ValueError):
    """The command line cannot be split (an unterminated quote or substitution)."""


@dataclass(frozen=True)
class Word:
    """One word: its unquoted value and whether it holds a command substitution."""

    value: str
    raw: str
    dynamic: bool = False


@dataclass
class SimpleCommand:
    """A simple command with the context the line gives it."""

    words: list[Word]
    #: ``NAME=value`` assignments in front of the command (or given to ``env``).
    assignments: dict[str, str]
    #: Variables the line set before this command (``export``, bare assignments).
    variables: dict[str, str]
    #: Directory the command runs in; ``None`` when the line made it unknowable.
    cwd: str | None
    #: Absolute paths that earlier commands of the line write.
    written_before: frozenset[str]

    @property
    def argv(self) -> list[str]:
        return [word.value for word in self.words]


def _skip_balanced(text: str, start: int, opening: str, closing: str) -> int:
    """Index just past the ``closing`` that balances ``text[start] == opening``."""
    depth = 0
    i = start
    quote: str | None = None
    while i < len(text):
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
    raise ShellSyntaxError(f"unterminated '{opening}' in the command line")


def _scan_word(text: str, start: int) -> tuple[int, str, bool]:
    """Scan one word from ``start``; return its end, raw text and dynamic flag."""
    i = start
    dynamic = False
    n = len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n" or (char in _OPERATOR_START and not _process_substitution(text, i)):
            break
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated single quote in the command line")
            i = end + 1
        elif char == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text.startswith("$(", i):
                    dynamic = True
                    i = _skip_balanced(text, i + 1, "(", ")") - 1
                elif text[i] == "`":
                    dynamic = True
                    i = _end_of_backquote(text, i) - 1
                i += 1
            if i >= n:
                raise ShellSyntaxError("unterminated double quote in the command line")
            i += 1
        elif char == "\\":
            i += 2
        elif text.startswith("$(", i):
            dynamic = True
            i = _skip_balanced(text, i + 1, "(", ")")
        elif char == "`":
            dynamic = True
            i = _end_of_backquote(text, i)
        elif _process_substitution(text, i):
            dynamic = True
            i = _skip_balanced(text, i + 1, "(", ")")
        else:
            i += 1
    return min(i, n), text[start:i], dynamic


def _process_substitution(text: str, i: int) -> bool:
    return text[i] in "<>" and text.startswith("(", i + 1)


def _end_of_backquote(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i + 1
        i += 1
    raise ShellSyntaxError("unterminated backquote in the command line")


def _unquote(raw: str, dynamic: bool) -> str:
    if dynamic:
        return raw
    try:
        parts = shlex.split(raw, comments=False, posix=True)
    except ValueError as exc:
        raise ShellSyntaxError(f"cannot read the word {raw!r}: {exc}") from None
    return "".join(parts)


def _skip_heredoc_bodies(text: str, i: int, delimiters: list[tuple[str, bool]]) -> int:
    """Skip the bodies of the pending here-documents starting at line index ``i``."""
    for delimiter, strip_tabs in delimiters:
        while i < len(text):
            end = text.find("\n", i)
            line = text[i:] if end < 0 else text[i:end]
            i = len(text) if end < 0 else end + 1
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return i


def scan(text: str) -> list[tuple[str, str | Word]]:
    """Split ``text`` into ``("word", Word)`` and ``("op", operator)`` items."""
    items: list[tuple[str, str | Word]] = []
    pending: list[tuple[str, bool]] = []
    expect_delimiter: bool | None = None  # strip_tabs of the heredoc awaiting its word
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in " \t\r":
            i += 1
        elif char == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif char == "\n":
            items.append(("op", "\n"))
            i = _skip_heredoc_bodies(text, i + 1, pending)
            pending = []
        elif char in _OPERATOR_START and not _process_substitution(text, i):
            operator = next(op for op in _OPERATORS if text.startswith(op, i))
            i += len(operator)
            if operator in _HEREDOCS:
                expect_delimiter = operator == "<<-"
            else:
                items.append(("op", operator))
        else:
            end, raw, dynamic = _scan_word(text, i)
            if end < n and text[end] in "<>" and raw.isdigit() and not dynamic:
                i = end  # a file descriptor number: part of the redirection that follows
                continue
            i = end
            word = Word(_unquote(raw, dynamic), raw, dynamic)
            if expect_delimiter is not None:
                pending.append((word.value, expect_delimiter))
                expect_delimiter = None
                continue
            items.append(("word", word))
    return items


@dataclass
class _State:
    cwd: str | None
    variables: dict[str, str]
    written: set[str]
    environ: dict[str, str]


def split_commands(text: str, cwd: str | None, environ: dict[str, str]) -> list[SimpleCommand]:
    """The simple commands of ``text`` in order; ``cwd`` is where the line starts.

    Raises :class:`ShellSyntaxError` when the line cannot be split.
    """
    state = _State(cwd=cwd, variables={}, written=set(), environ=environ)
    commands: list[SimpleCommand] = []
    _walk(scan(text), state, commands, depth=0)
    return commands


def _walk(
    items: list[tuple[str, str | Word]],
    state: _State,
    commands: list[SimpleCommand],
    depth: int,
) -> None:
    if depth > _MAX_DEPTH:
        raise ShellSyntaxError("too many nested 'sh -c' or 'eval' levels")
    stack: list[str | None] = []
    words: list[Word] = []
    redirect: str | None = None
    for kind, item in [*items, ("op", "\n")]:
        if kind == "word":
            assert isinstance(item, Word)
            if redirect is not None:
                if redirect in _WRITE_REDIRECTS or (redirect == ">&" and not _is_fd(item.value)):
                    path = resolve(item.value, state.cwd, _lookup(state))
                    if path is not None:
                        state.written.add(path)
                redirect = None
            else:
                words.append(item)
            continue
        assert isinstance(item, str)
        if item in _REDIRECTS:
            redirect = item
            continue
        if item in _SEPARATORS or item in "()":
            _finish(words, state, commands, depth)
            words = []
            redirect = None
            if item == "(":
                stack.append(state.cwd)
            elif item == ")":
                if not stack:
                    raise ShellSyntaxError("unbalanced ')' in the command line")
                state.cwd = stack.pop()
    if stack:
        raise ShellSyntaxError("unterminated '(' in the command line")


def _is_fd(value: str) -> bool:
    return value.isdigit() or value == "-"


def _lookup(state: _State) -> dict[str, str]:
    return {**state.environ, **state.variables}


def expand(value: str, variables: dict[str, str]) -> str | None:
    """``value`` with ``~`` and ``$NAME``/``${NAME}`` expanded; ``None`` if one is unset."""
    if value == "~" or value.startswith("~/"):
        home = variables.get("HOME")
        if home is None:
            return None
        value = home + value[1:]
    if "$" not in value:
        return value
    missing = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1) or match.group(2)
        if name not in variables:
            missing = True
            return ""
        return variables[name]

    expanded = re.sub(
        r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", substitute, value
    )
    if missing or "$" in expanded:
        return None
    return expanded


def resolve(value: str, cwd: str | None, variables: dict[str, str]) -> str | None:
    """The absolute, normalised path ``value`` names, or ``None`` when it cannot be known."""
    expanded = expand(value, variables)
    if expanded is None or not expanded:
        return None
    if os.path.isabs(expanded):
        return os.path.normpath(expanded)
    if cwd is None:
        return None
    return os.path.normpath(os.path.join(cwd, expanded))


def _strip_wrappers(words: list[Word], assignments: dict[str, str]) -> tuple[list[Word], str]:
    """Drop ``env``/``sudo``/``command``/... in front of the real command.

    Returns the remaining words and, when ``env -C DIR`` changed directory, ``DIR``.
    """
    chdir = ""
    while words:
        name = os.path.basename(words[0].value)
        rest = words[1:]
        if name == "env":
            rest, chdir = _env_arguments(rest, assignments, chdir)
        elif name in ("sudo", "doas"):
            rest = _skip_options(rest, with_value={"-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U"})
        elif name in ("command", "exec", "builtin", "nohup"):
            rest = _skip_options(rest, with_value={"-a"})
        elif name == "time":
            rest = _skip_options(rest, with_value={"-f", "-o"})
        elif name == "nice":
            rest = _skip_options(rest, with_value={"-n"})
        elif name == "timeout":
            rest = _skip_options(rest, with_value={"-s", "-k", "--signal", "--kill-after"})
            rest = rest[1:]  # the duration
        elif name == "{":
            pass
        else:
            break
        words = rest
    return words, chdir


def _env_arguments(
    words: list[Word], assignments: dict[str, str], chdir: str
) -> tuple[list[Word], str]:
    i = 0
    while i < len(words):
        value = words[i].value
        if value in ("-C", "--chdir") and i + 1 < len(words):
            chdir = words[i + 1].value
            i += 2
        elif value.startswith("--chdir="):
            chdir = value.partition("=")[2]
            i += 1
        elif value in ("-u", "--unset") and i + 1 < len(words):
            assignments.pop(words[i + 1].value, None)
            i += 2
        elif value == "--":
            i += 1
            break
        elif value.startswith("-"):
            i += 1
        elif _ASSIGNMENT.match(value):
            name, _, assigned = value.partition("=")
            assignments[name] = assigned
            i += 1
        else:
            break
    return words[i:], chdir


def _skip_options(words: list[Word], with_value: set[str]) -> list[Word]:
    i = 0
    while i < len(words) and words[i].value.startswith("-"):
        if words[i].value == "--":
            return words[i + 1 :]
        i += 2 if words[i].value in with_value else 1
    return words[i:]


def _finish(words: list[Word], state: _State, commands: list[SimpleCommand], depth: int) -> None:
    if not words:
        return
    assignments: dict[str, str] = {}
    index = 0
    while index < len(words) and not words[index].dynamic and _ASSIGNMENT.match(words[index].value):
        name, _, value = words[index].value.partition("=")
        assignments[name] = value
        index += 1
    rest, chdir = _strip_wrappers(words[index:], assignments)
    cwd = state.cwd
    if chdir:
        cwd = resolve(chdir, state.cwd, _lookup(state))
    if not rest:
        state.variables.update(assignments)  # NAME=value on its own sets a shell variable
        if assignments:
            commands.append(_command([], assignments, state, cwd))
        return
    name = os.path.basename(rest[0].value)
    args = rest[1:]
    if name in _SHELLS and not rest[0].dynamic:
        script = _dash_c(args)
        if script is not None:
            commands.append(_command(rest, assignments, state, cwd))
            _walk(scan(script), state, commands, depth + 1)
            return
    if name == "eval":
        commands.append(_command(rest, assignments, state, cwd))
        _walk(scan(" ".join(word.value for word in args)), state, commands, depth + 1)
        return
    commands.append(_command(rest, assignments, state, cwd))
    _track(name, args, state)


def _dash_c(args: list[Word]) -> str | None:
    for i, word in enumerate(args):
        value = word.value
        if value == "-c" or (
            value.startswith("-") and not value.startswith("--") and "c" in value[1:]
        ):
            return args[i + 1].value if i + 1 < len(args) else None
        if not value.startswith("-"):
            return None
    return None


def _command(
    words: list[Word], assignments: dict[str, str], state: _State, cwd: str | None
) -> SimpleCommand:
    return SimpleCommand(
        words=list(words),
        assignments=dict(assignments),
        variables=dict(state.variables),
        cwd=cwd,
        written_before=frozenset(state.written),
    )


def _track(name: str, args: list[Word], state: _State) -> None:
    """Follow what a command changes for the rest of the line."""
    values = [word.value for word in args]
    variables = _lookup(state)
    if name in ("cd", "pushd"):
        targets = [v for v in values if not v.startswith("-") or v == "-"]
        if any(word.dynamic for word in args):
            state.cwd = None
        elif not targets:
            home = variables.get("HOME")
            state.cwd = os.path.normpath(home) if home and name == "cd" else None
        elif targets[0] == "-":
            state.cwd = None
        else:
            state.cwd = resolve(targets[0], state.cwd, variables)
    elif name == "popd":
        state.cwd = None
    elif name in ("export", "declare", "typeset", "readonly", "local"):
        for value in values:
            if _ASSIGNMENT.match(value):
                key, _, assigned = value.partition("=")
                state.variables[key] = assigned
    elif name == "unset":
        for value in values:
            state.variables.pop(value, None)
            state.environ = {k: v for k, v in state.environ.items() if k != value}
    elif name == "tee":
        _written(state, [v for v in values if not v.startswith("-")])
    elif name in ("cp", "mv", "install", "ln", "rsync") and values:
        targets = [v for v in values if not v.startswith("-")]
        if len(targets) >= 2:
            _written(state, targets[-1:])
    elif name in ("sed", "perl", "yq") and any(v == "-i" or v.startswith("-i") for v in values):
        _written(state, [v for v in values if not v.startswith("-")][1:])
    elif name == "curl":
        _written(state, _option_values(values, {"-o", "--output"}))
    elif name == "wget":
        _written(state, _option_values(values, {"-O", "--output-document"}))


def _option_values(values: list[str], names: set[str]) -> list[str]:
    found = []
    for i, value in enumerate(values):
        if value in names and i + 1 < len(values):
            found.append(values[i + 1])
        elif "=" in value and value.partition("=")[0] in names:
            found.append(value.partition("=")[2])
    return found


def _written(state: _State, paths: list[str]) -> None:
    variables = _lookup(state)
    for value in paths:
        path = resolve(value, state.cwd, variables)
        if path is None:
            continue
        state.written.add(path)
        # ``cp a.yaml dir/`` writes dir/a.yaml: record the directory too, so that a
        # policy file under it counts as written.
        state.written.add(path.rstrip("/") + "/")
