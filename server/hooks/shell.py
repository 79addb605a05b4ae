"""What a shell command line will run: its simple commands, expanded, in their context.

A hook sees the command line an agent is about to run, e.g. ``cd infra &&
OPENSHELL_SANDBOX_POLICY=p.yaml openshell sandbox create -- claude``. This module finds
its simple commands and, for each, the words it will run with (expanded by
:mod:`.words`), the variable assignments in front of it, the directory it runs in and
the files the line wrote before it. It follows the state a line changes (``cd``,
``pushd``, assignments, ``export``, ``unset``) only where the change is certain:

* a change in a subshell, a background job (``&``) or a pipeline element does not reach
  the commands after it (the last element of a pipeline may, in zsh: it becomes unknown);
* a change after ``&&``/``||``, or inside ``if``/``while``/``for``/``case`` or a
  function body, may or may not happen: the value becomes unknown for what follows;
* ``cd DIR`` succeeds only if DIR is a directory now (else the directory is unknown);
  ``CDPATH`` is searched as bash searches it.

Commands it cannot see through are reported, not guessed: a command name that is not a
literal (``$o``, ``"$(...)"``, a glob), ``eval`` or ``sh -c`` of a string that is not
known, a shell reading its script from a pipe, ``env -S`` with expansions, or a program
this same line wrote. Command substitutions, ``bash -c`` strings (with any options),
``eval`` of known text, here-strings and quoted here-documents fed to a shell are parsed
in turn. Only the standard library is used: this runs on every command an agent issues.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

from server.hooks import words as w

#: Operators, longest first so that the scanner matches greedily.
_OPERATORS = (
    ";;&",
    "&>>",
    "<<<",
    "<<-",
    ";;",
    ";&",
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
_WORD_RUN = re.compile(r"[^\s;&|()<>'\"\\$`]+")
_LIST_END = frozenset({";", "&", "\n", ";;", ";&", ";;&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_REDIRECTS = _WRITE_REDIRECTS | {"<", "<<<", ">&", "<&"}
_HEREDOCS = frozenset({"<<", "<<-"})
_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=")
SHELLS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh"}
)
#: Programs that write no file (beyond their redirections, which are followed) and run
#: no command from their arguments. Any other program run before a policy is applied may
#: change the policy file: the hook then cannot vouch for what it read.
_READ_ONLY = frozenset(
    {"cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "test", "[", "[[", "ls"}
    | {"cat", "grep", "egrep", "fgrep", "rg", "head", "tail", "wc", "stat", "file", "diff"}
    | {"which", "type", "command", "pwd", "export", "unset", "set", "shopt", "declare"}
    | {"typeset", "local", "readonly", "alias", "sleep", "date", "whoami", "id", "uname"}
    | {"printenv", "jq", "uniq", "cut", "tr", "nl", "less", "more", "man", "help", "hash"}
    | {"read", "mapfile", "readarray", "getopts", "let", "realpath", "readlink", "dirname"}
    | {"basename", "sha256sum", "md5sum", "base64", "openshell", "wait", "jobs", "exit"}
    | {"return", "shift", "trap", "umask", "ulimit", "history", "cmp", "tree", "du", "df"}
    | {"ps", "env", "rm", "chmod", "unalias", "column", "xxd", "od", "hexdump"}
)
#: Writers whose targets the walk records exactly.
_PRECISE_WRITERS = frozenset({"cp", "mv", "install", "ln", "touch", "mkdir", "tee", "curl", "wget"})
_GIT_READ_ONLY = frozenset({"status", "log", "diff", "show", "rev-parse", "ls-files", "grep"})
_GIT_READ_ONLY |= {"blame", "describe", "shortlog", "branch", "remote", "version", "help"}
_POLICY_PROVER_READ_ONLY = frozenset({"check", "assess", "explain", "hook", "--version"})
#: Programs that print or search their arguments: a shell name among them runs nothing.
_PRINTS = frozenset({"echo", "printf", "grep", "egrep", "fgrep", "rg", "man", "which", "type"})
_PRINTS |= {"whereis", "apropos", "help", "tldr", "command", "git", "cat", "ls"}
_SETS_VARIABLES = frozenset({"read", "mapfile", "readarray", "printf", "getopts", "let"})
_OPENERS = frozenset({"if", "while", "until", "for", "select", "case"})
_CLOSERS = frozenset({"fi", "done", "esac"})
_KEYWORDS = frozenset({"then", "else", "elif", "do", "!", "in", "{", "}", "time", "coproc"})
#: Nesting limit for ``bash -c`` / ``eval`` strings and command substitutions.
MAX_DEPTH = 8
#: Words and operators scanned over the whole line, nested strings included.
MAX_ITEMS = 50_000


class ShellSyntaxError(ValueError):
    """The command line cannot be split (an unterminated quote or substitution)."""


class TooComplex(ValueError):
    """The command line exceeds the hook's bounds on nesting or size."""


class Word(NamedTuple):
    """One word as written: its quote-removed value and whether it runs a substitution."""

    value: str
    raw: str
    dynamic: bool = False
    segments: tuple[w.Segment, ...] = ()

    @property
    def parts(self) -> list[w.Segment]:
        return list(self.segments) if self.segments else w.segments(self.raw)


class HereDoc:
    """A here-document: its body is filled in once the scanner reaches it."""

    def __init__(self, strip_tabs: bool) -> None:
        self.strip_tabs = strip_tabs
        self.delimiter = ""
        self.quoted = False
        self.body = ""


class WrittenBefore:
    """The files a line wrote before a command: a view of the line's growing record.

    (A view, not a copy: a line of many commands costs no quadratic copying.)
    """

    __slots__ = ("_count", "_order", "writer")

    def __init__(self, order: dict[str, int], count: int, writer: str | None = None) -> None:
        self._order = order
        self._count = count
        #: The first earlier program that may have written any file (``git pull``...).
        self.writer = writer

    def __contains__(self, path: object) -> bool:
        index = self._order.get(path) if isinstance(path, str) else None
        return index is not None and index < self._count

    def covers(self, path: str) -> bool:
        """``path`` or a directory above it was written (``cp a.yaml dir/``)."""
        return _written_by_line(path, self)

    def paths(self) -> set[str]:
        return {path for path, index in self._order.items() if index < self._count}


class SimpleCommand:
    """A simple command with the context the line gives it.

    ``words``: the words after assignments, as written; ``args``: the expanded arguments
    after wrappers (``env``, ``sudo``...), ``None`` standing for a word whose value is
    unknown; ``assignments``: ``NAME=value`` in front of it (or given to ``env``);
    ``environment``: what its process gets (``None`` values: unknown); ``cwd``: where it
    runs (``None``: unknowable); ``written_before``: files earlier commands wrote;
    ``indirect``: why the hook cannot tell what it runs, if it cannot; ``exports``: the
    assignments an ``export``-like command makes.
    """

    def __init__(
        self,
        words: list[Word],
        args: list[str | None],
        assignments: dict[str, str | None],
        environment: dict[str, str | None],
        cwd: str | None,
        written_before: WrittenBefore,
    ) -> None:
        self.words = words
        self.args = args
        self.assignments = assignments
        self.environment = environment
        self.cwd = cwd
        self.written_before = written_before
        self.indirect: str | None = None
        self.exports: dict[str, str | None] = {}
        #: Its standard input carries text naming openshell (a here-document, a
        #: here-string, or a pipe from a command whose arguments name it).
        self.fed_mention = False
        #: It runs in the background or in a pipeline, concurrently with later commands.
        self.concurrent = False

    @property
    def argv(self) -> list[str]:
        return [word.value for word in self.words]

    @property
    def name(self) -> str | None:
        return self.args[0] if self.args else None


def _process_substitution(text: str, i: int) -> bool:
    return text[i] in "<>" and text.startswith("(", i + 1)


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
                    i = _end(text, i + 1, "(", ")") - 1
                elif text.startswith("${", i):
                    i = _end(text, i + 1, "{", "}") - 1
                elif text[i] == "`":
                    dynamic = True
                    i = _backquote(text, i) - 1
                i += 1
            if i >= n:
                raise ShellSyntaxError("unterminated double quote in the command line")
            i += 1
        elif char == "\\":
            i += 2
        elif text.startswith("$'", i):
            j = i + 2
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ShellSyntaxError("unterminated $'...' quote in the command line")
            i = j + 1
        elif text.startswith("$(", i):
            dynamic = True
            i = _end(text, i + 1, "(", ")")
        elif text.startswith("${", i):
            i = _end(text, i + 1, "{", "}")
        elif char == "`":
            dynamic = True
            i = _backquote(text, i)
        elif _process_substitution(text, i):
            dynamic = True
            i = _end(text, i + 1, "(", ")")
        else:
            match = _WORD_RUN.match(text, i)
            i = match.end() if match else i + 1
    return min(i, n), text[start:i], dynamic


def _end(text: str, start: int, opening: str, closing: str) -> int:
    end = w.balanced_end(text, start, opening, closing)
    if end < 0:
        raise ShellSyntaxError(f"unterminated '{text[start - 1 : start + 1]}' in the command line")
    return end


def _backquote(text: str, start: int) -> int:
    end = w.backquote_end(text, start)
    if end < 0:
        raise ShellSyntaxError("unterminated backquote in the command line")
    return end


def _read_heredoc_bodies(text: str, i: int, pending: list[HereDoc]) -> int:
    """Read the bodies of the pending here-documents starting at line index ``i``."""
    for doc in pending:
        lines: list[str] = []
        while i < len(text):
            end = text.find("\n", i)
            line = text[i:] if end < 0 else text[i:end]
            i = len(text) if end < 0 else end + 1
            if (line.lstrip("\t") if doc.strip_tabs else line) == doc.delimiter:
                break
            lines.append(line.lstrip("\t") if doc.strip_tabs else line)
        doc.body = "\n".join(lines) + ("\n" if lines else "")
    return i


Item = tuple[str, "str | Word | HereDoc"]


def scan(text: str, budget: list[int] | None = None) -> list[Item]:
    """Split ``text`` into ``("word", Word)``, ``("op", operator)`` and ``("heredoc", doc)``."""
    budget = budget if budget is not None else [MAX_ITEMS]
    items: list[Item] = []
    pending: list[HereDoc] = []
    awaiting: HereDoc | None = None
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char in " \t\r":
            i += 1
            continue
        budget[0] -= 1
        if budget[0] < 0:
            raise TooComplex(f"the command line has more than {MAX_ITEMS} words and operators")
        if char == "\\" and text.startswith("\n", i + 1):
            i += 2
        elif char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif char == "\n":
            items.append(("op", "\n"))
            i = _read_heredoc_bodies(text, i + 1, pending)
            pending = []
        elif char in _OPERATOR_START and not _process_substitution(text, i):
            operator = next(op for op in _OPERATORS if text.startswith(op, i))
            i += len(operator)
            if operator in _HEREDOCS:
                awaiting = HereDoc(strip_tabs=operator == "<<-")
                items.append(("heredoc", awaiting))
            else:
                items.append(("op", operator))
        else:
            end, raw, dynamic = _scan_word(text, i)
            if end < n and text[end] in "<>" and raw.isdigit() and not dynamic:
                i = end  # a file descriptor number: part of the redirection that follows
                continue
            i = end
            parts = w.segments(raw)
            word = Word(w.literal_value(parts), raw, dynamic, tuple(parts))
            if awaiting is not None:
                awaiting.delimiter = word.value
                awaiting.quoted = any(c in raw for c in "'\"\\")
                pending.append(awaiting)
                awaiting = None
                continue
            items.append(("word", word))
    if pending:
        _read_heredoc_bodies(text, n, pending)
    return items


# -- the walk: commands in order, with the state the line gives them ----------------------


class _State:
    """The directory, the variables the line set over the inherited environment (``None``:
    unknown), what it exported, the files it wrote; ``opaque`` inside a function body,
    where everything is as at the (unknown) time of the call."""

    def __init__(self, cwd: str | None, environ: dict[str, str]) -> None:
        self.cwd = cwd
        self.variables: dict[str, str | None] = {}
        self.exported: set[str] = set()
        self.environ = environ
        self.written: dict[str, int] = {}  # path -> order in which the line wrote it
        self.allexport = False
        self.opaque = False
        self.dirstack: list[str | None] = []

    def lookup(self, positional: tuple[str, ...] | None) -> w.Lookup:
        if self.opaque:
            return w.Lookup({}, None, None)
        merged: dict[str, str | None] = {**self.environ, **self.variables}
        # The shell's own: $PWD follows cd (the hook's environment has the hook's PWD).
        merged["PWD"] = self.cwd
        merged["OLDPWD"] = None
        return w.Lookup(merged, positional, self.cwd)


_UNSET = object()


class _Walker:
    """Walks the items of one line, keeping a journal of state changes to undo or blur."""

    def __init__(self, environ: dict[str, str], cwd: str | None) -> None:
        self.state = _State(cwd, dict(environ))
        self.commands: list[SimpleCommand] = []
        self.journal: list[tuple[str, str, object]] = []
        self.budget = [MAX_ITEMS]
        self.compound = 0  # depth of if/while/for/case bodies and function bodies
        self.pipe_mention = False  # an earlier element of this pipeline names openshell
        self.writer: str | None = None  # the first program that may have written any file

    # state changes, journalled -------------------------------------------------------

    def set_cwd(self, cwd: str | None) -> None:
        self.journal.append(("cwd", "", self.state.cwd))
        self.state.cwd = cwd if not self.compound else None

    def set_var(self, name: str, value: str | None, export: bool = False) -> None:
        state = self.state
        self.journal.append(("var", name, state.variables.get(name, _UNSET)))
        self.journal.append(("exp", name, name in state.exported))
        state.variables[name] = value if not self.compound else None
        if export or state.allexport or name in state.environ:
            state.exported.add(name)

    def unset_var(self, name: str) -> None:
        self.set_var(name, None)
        self.journal.append(("env", name, self.state.environ.get(name, _UNSET)))
        self.state.environ.pop(name, None)
        self.state.exported.discard(name)
        if not self.compound:
            self.state.variables.pop(name, None)

    def mark(self) -> int:
        return len(self.journal)

    def undo(self, mark: int) -> None:
        """Revert every change after ``mark`` (a subshell, a background job, a pipe)."""
        state = self.state
        while len(self.journal) > mark:
            kind, name, old = self.journal.pop()
            if kind == "cwd":
                state.cwd = old  # type: ignore[assignment]
            elif kind == "var":
                if old is _UNSET:
                    state.variables.pop(name, None)
                else:
                    state.variables[name] = old  # type: ignore[assignment]
            elif kind == "exp":
                (state.exported.add if old else state.exported.discard)(name)
            elif kind == "env" and old is not _UNSET:
                state.environ[name] = old  # type: ignore[assignment]
            elif kind == "dirs":
                state.dirstack[:] = old  # type: ignore[index]
            elif kind == "opaque":
                state.opaque = bool(old)

    def blur(self, mark: int) -> None:
        """Changes after ``mark`` may or may not have happened: their values become unknown."""
        changed = self.journal[mark:]
        for kind, name, _ in changed:
            if kind == "cwd":
                self.state.cwd = None
            elif kind in ("var", "env"):
                self.state.variables[name] = None
            elif kind == "dirs":
                self.state.dirstack[:] = [None] * len(self.state.dirstack)

    # the walk ------------------------------------------------------------------------

    def walk(self, text: str, depth: int, positional: tuple[str, ...] | None) -> None:
        if depth > MAX_DEPTH:
            raise TooComplex(f"more than {MAX_DEPTH} nested 'sh -c', 'eval' or '$(...)' levels")
        self.walk_items(scan(text, self.budget), depth, positional)

    def walk_items(self, items: list[Item], depth: int, positional: tuple[str, ...] | None) -> None:
        # One frame per open subshell: (journal mark at "(", the outer list's mark, first
        # and first command).
        frames: list[tuple[int, int, int | None, int]] = []
        list_start = len(self.commands)  # the current list's first command
        pipe_start = list_start
        braces: list[tuple[str, int]] = []  # ("fn"|"group", journal mark)
        case_depth = 0
        function_pending = False
        words: list[Word] = []
        redirects: list[tuple[str, Word | HereDoc]] = []
        redirect: str | None = None
        list_mark = self.mark()  # where the current and-or list started
        first_done: int | None = None  # journal mark after the list's first pipeline
        piped_in = False
        index = 0
        flat = [*items, ("op", "\n")]
        while index < len(flat):
            kind, item = flat[index]
            index += 1
            if kind == "heredoc":
                assert isinstance(item, HereDoc)
                redirects.append(("<<", item))
                continue
            if kind == "word":
                assert isinstance(item, Word)
                if redirect is not None:
                    redirects.append((redirect, item))
                    redirect = None
                    continue
                opening = not item.dynamic and item.value in ("{", "}")
                if opening and words and words[0].value == "function" and len(words) == 2:
                    words, function_pending = [], True
                if opening and not words:
                    if item.value == "{":
                        braces.append(("fn" if function_pending else "group", self.mark()))
                        if function_pending:
                            self._enter_function()
                        function_pending = False
                    elif braces:
                        opened, mark = braces.pop()
                        if opened == "fn":
                            self._leave_function(mark)
                    continue
                words.append(item)
                continue
            assert isinstance(item, str)
            if item in _REDIRECTS:
                redirect = item
                continue
            defining = len(words) == 1 or (len(words) == 2 and words[0].value == "function")
            if item == "(" and defining and flat[index][1] == ")":
                index += 1  # NAME ( ): a function definition; its body follows
                function_pending = True
                words = []
                continue
            if item == ")" and case_depth and not frames:
                words = []  # the end of a case pattern
                continue
            if item == "(" and words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\+?=", words[-1].raw):
                # NAME=(a b c): an array; its elements are words, not a subshell.
                index = self._past_parens(flat, index, depth, positional)
                words[-1] = Word(words[-1].value + "(...)", words[-1].raw + "$(:)", True)
                continue
            if item == "(" and not words and flat[index][1] == "(":
                # (( arithmetic )): runs only the substitutions in it.
                index = self._past_parens(flat, index, depth, positional)
                continue
            # A simple command ends here.
            piped_out = item in ("|", "|&")
            element = self.mark()
            if not piped_in:
                pipe_start = len(self.commands)
            if words or redirects:
                head = words[0].value if words and not words[0].dynamic else ""
                if head == "function" and len(words) == 2:
                    function_pending = True
                elif head == "case":
                    case_depth += 1
                    self.compound += 1
                elif head == "esac" and case_depth:
                    case_depth -= 1
                    self.compound = max(0, self.compound - 1)
                else:
                    self._command(words, redirects, depth, positional, piped_in)
            words, redirects, redirect = [], [], None
            if piped_out:
                self.undo(element)  # an element of a pipeline runs in a subshell
            elif piped_in:
                self.blur(element)  # the last one too in bash, not in zsh
                self._concurrent(pipe_start)  # the elements run at the same time
            piped_in = piped_out
            if not piped_out:
                self.pipe_mention = False
            if first_done is None and not piped_out:
                first_done = self.mark()
            if item == "||":
                self.blur(list_mark)  # what follows runs when something before failed
            elif item == "(":
                frames.append((self.mark(), list_mark, first_done, list_start))
                list_mark, first_done, list_start = self.mark(), None, len(self.commands)
            elif item == ")":
                if not frames:
                    raise ShellSyntaxError("unbalanced ')' in the command line")
                mark, list_mark, first_done, list_start = frames.pop()
                self.undo(mark)
                if first_done is None:
                    first_done = self.mark()
            elif item in _LIST_END:
                if item == "&":
                    self.undo(list_mark)  # a background job runs in a subshell
                    self._concurrent(list_start)  # ... while the rest of the line runs
                elif first_done is not None:
                    self.blur(first_done)  # only the first pipeline of a list surely ran
                list_mark, first_done, list_start = self.mark(), None, len(self.commands)
        if frames:
            raise ShellSyntaxError("unterminated '(' in the command line")

    def _concurrent(self, start: int) -> None:
        """Commands from ``start`` run while later commands of the line run too."""
        for command in self.commands[start:]:
            command.concurrent = True

    def finish(self) -> list[SimpleCommand]:
        """A command that runs concurrently (in the background, in a pipeline) races every
        write of the line, later ones included: it sees them all."""
        everything = WrittenBefore(self.state.written, len(self.state.written), self.writer)
        for command in self.commands:
            if command.concurrent:
                command.written_before = everything
        return self.commands

    def _past_parens(
        self, flat: list[Item], index: int, depth: int, positional: tuple[str, ...] | None
    ) -> int:
        """Index just past the ``)`` closing the open ``(``; the substitutions in the
        words between run (``a=($(cmd))``, ``(( x[$(cmd)] ))``) and are walked."""
        level = 1
        while index < len(flat) and level:
            kind, item = flat[index]
            if kind == "op" and item == "(":
                level += 1
            elif kind == "op" and item == ")":
                level -= 1
            elif isinstance(item, Word):
                for inner in w.substitutions(item.parts):
                    self._nested(inner, depth, positional, subshell=True)
            index += 1
        if level:
            raise ShellSyntaxError("unterminated '(' in the command line")
        return index

    def _enter_function(self) -> None:
        self.compound += 1
        self.journal.append(("opaque", "", self.state.opaque))
        self.state.opaque = True

    def _leave_function(self, mark: int) -> None:
        self.compound = max(0, self.compound - 1)
        changed = {(kind, name) for kind, name, _ in self.journal[mark:]}
        self.undo(mark)
        # The function may be called later: what its body changes is unknown from here on.
        for kind, name in changed:
            if kind == "cwd":
                self.state.cwd = None
            elif kind in ("var", "env"):
                self.state.variables[name] = None

    # one simple command --------------------------------------------------------------

    def _command(
        self,
        words: list[Word],
        redirects: list[tuple[str, Word | HereDoc]],
        depth: int,
        positional: tuple[str, ...] | None,
        piped_in: bool,
    ) -> SimpleCommand | None:
        state = self.state
        lookup = state.lookup(positional)
        for word in words:
            for inner in w.substitutions(word.parts):
                self._nested(inner, depth, positional, subshell=True)
        stdin: str | HereDoc | None = "pipe" if piped_in else None
        for operator, target in redirects:
            if isinstance(target, HereDoc):
                stdin = target
                if not target.quoted:  # an unquoted body runs its $(...) and `...`
                    for inner in w.find_substitutions(target.body):
                        self._nested(inner, depth, positional, subshell=True)
                continue
            for inner in w.substitutions(target.parts):  # `> >(cmd)`, `< $(cmd)`
                self._nested(inner, depth, positional, subshell=True)
            if operator == "<<<":
                stdin = target.raw
            elif operator == "<":
                stdin = "file"
            elif operator in _WRITE_REDIRECTS or (operator == ">&" and not _is_fd(target.value)):
                fields = w.expand(target.parts, lookup)
                if fields is not None and len(fields) == 1:
                    self._written(fields[0])
        while words and words[0].value in _KEYWORDS | _OPENERS | _CLOSERS and not words[0].dynamic:
            keyword = words[0].value
            if keyword in _OPENERS:
                self.compound += 1
                if keyword in ("for", "select"):
                    if len(words) > 1 and not words[1].dynamic:
                        self.set_var(words[1].value, None)  # the loop variable
                    return None  # `for NAME in WORDS`: no command runs here
            elif keyword in _CLOSERS:
                self.compound = max(0, self.compound - 1)
            words = words[1:]
        if not words:
            return None
        assignments: dict[str, str | None] = {}
        start = 0
        while start < len(words):
            match = _ASSIGNMENT.match(words[start].raw)
            if not match:
                break
            assignments[match.group(1)] = _assigned(words[start], match, lookup)
            start += 1
        rest = words[start:]
        if not rest:
            for name, value in assignments.items():
                self.set_var(name, value)
            self.commands.append(self._simple([], [], assignments, {}, state.cwd))
            return None
        simple = self._run(rest, assignments, depth, positional, stdin)
        if simple is not None:
            text = stdin.body if isinstance(stdin, HereDoc) else stdin
            if text not in (None, "pipe", "file") and w.names_openshell(str(text)):
                simple.fed_mention = True
            if piped_in and self.pipe_mention:
                simple.fed_mention = True
            named = [a for a in simple.args[1:] if a is not None]
            if any(w.names_openshell(a) for a in named) or simple.fed_mention:
                self.pipe_mention = True
        return simple

    def _run(
        self,
        rest: list[Word],
        assignments: dict[str, str | None],
        depth: int,
        positional: tuple[str, ...] | None,
        stdin: str | HereDoc | None,
    ) -> SimpleCommand:
        state = self.state
        lookup = state.lookup(positional)
        args: list[str | None] = []
        for word in rest:
            fields = w.expand(word.parts, lookup)
            args.extend(fields if fields is not None else [None])
        clear_env = False
        unset: set[str] = set()
        cwd = state.cwd
        indirect: str | None = None
        # Wrappers that run the rest of their arguments as a command.
        while args and args[0] is not None:
            name = os.path.basename(args[0])
            if name == "env":
                result = _env(args[1:], assignments, unset)
                if isinstance(result, str):
                    indirect = result
                    break
                args, clear, chdir, split = result
                clear_env = clear_env or clear
                if chdir is not None:
                    cwd = w.logical_path(chdir, cwd) if chdir else None
                if split is not None:
                    nested = split_words(split)
                    if nested is None:
                        indirect = "`env -S` splits a string the hook cannot read ahead of time"
                        break
                    args = nested + args
                continue
            if name in ("xargs", "find"):
                runs = _xargs(args[1:]) if name == "xargs" else _find_exec(args[1:])
                if runs is None:
                    break
                args = runs
                continue
            skipped = _wrapper(name, args[1:])
            if skipped is None:
                break
            args = skipped
        environment = self._environment(assignments, clear_env, unset)
        simple = self._simple(rest, args, assignments, environment, cwd)
        simple.indirect = indirect
        self.commands.append(simple)
        if indirect is not None or not args:
            return simple
        head = args[0]
        if head is None:
            simple.indirect = "its command name is only known when the shell runs it"
            return simple
        name = os.path.basename(head)
        executable = w.kernel_path(head, cwd) if "/" in head else None
        if executable is not None and _written_by_line(executable, state.written):
            simple.indirect = f"it runs {head}, a file this command line writes"
            return simple
        lowered = name.lower()
        if lowered in SHELLS:
            if any(v in assignments or v in state.variables for v in ("BASH_ENV", "ENV")):
                simple.indirect = "the shell first runs the file BASH_ENV or ENV names"
            else:
                simple.indirect = self._shell(args[1:], depth, stdin)
        elif lowered in ("eval",):
            if any(arg is None for arg in args[1:]):
                simple.indirect = "`eval` runs a string that is only known when the shell runs"
            else:
                self._nested(" ".join(a for a in args[1:] if a is not None), depth, positional)
        elif lowered in ("source", "."):
            target = args[1] if len(args) > 1 else None
            path = w.kernel_path(target, cwd) if target else None
            if target is not None and _is_stdin(target):
                simple.indirect = self._shell([], depth, stdin) or None
            elif path is None or _written_by_line(path, state.written):
                simple.indirect = "it sources a script the hook cannot read before it runs"
            self.blur(0)  # a sourced script may change any variable or the directory
            self.state.cwd = None
            for known in list(self.state.environ):
                self.state.variables[known] = None
        elif lowered == "hash" and any(a is None or a.startswith("-p") for a in args[1:]):
            simple.indirect = "`hash -p` changes which program a command name runs"
        elif lowered in ("alias", "trap"):
            simple.indirect = self._deferred(lowered, args[1:], depth)
        else:
            simple.indirect = self._embedded_shell(lowered, args, depth, positional)
            self._track(lowered, args[1:], cwd, simple)
        if self.writer is None and _may_write(lowered, args):
            self.writer = name
        return simple

    def _deferred(self, name: str, args: list[str | None], depth: int) -> str | None:
        """``alias NAME=TEXT``, ``trap TEXT SIGNAL``: TEXT runs later, in a state unknown now."""
        if name == "alias":
            texts = [a.partition("=")[2] if a is not None else None for a in args]
            texts = [t for t, a in zip(texts, args, strict=True) if a is None or "=" in a]
        else:
            operands = [a for a in args if a is None or not a.startswith("-")]
            texts = operands[:1] if len(operands) > 1 else []
        for text in texts:
            if text is None:
                return f"`{name}` defines a command that is only known when the shell runs"
            mark = self.mark()
            self._enter_function()
            self.walk(text, depth + 1, None)
            self._leave_function(mark)
        return None

    def _embedded_shell(
        self, name: str, args: list[str | None], depth: int, positional: tuple[str, ...] | None
    ) -> str | None:
        """``flock f bash -c TEXT``, ``some-tool eval TEXT``: another program runs a shell
        or ``eval``; its text is read like the line's own."""
        if name in _PRINTS:
            return None
        for index, arg in enumerate(args[1:], start=1):
            if arg is None:
                continue
            base = os.path.basename(arg).lower()
            if base in SHELLS:
                return self._shell(args[index + 1 :], depth, None)
            if base == "eval":
                rest = args[index + 1 :]
                if any(a is None for a in rest):
                    return "`eval` runs a string that is only known when the shell runs"
                self._nested(" ".join(a for a in rest if a is not None), depth, positional)
                return None
        return None

    def _nested(
        self,
        text: str,
        depth: int,
        positional: tuple[str, ...] | None,
        *,
        subshell: bool = False,
    ) -> None:
        mark = self.mark()
        outer_pipe_mention = self.pipe_mention
        self.walk(text, depth + 1, positional)
        self.pipe_mention = outer_pipe_mention
        if subshell:
            self.undo(mark)

    def _shell(self, args: list[str | None], depth: int, stdin: str | HereDoc | None) -> str | None:
        """``bash [OPTIONS] [-c STRING [NAME [ARG...]] | FILE | -s]``: parse what it runs."""
        options = _shell_options(args)
        if options is None:
            return "the shell's options or script are only known when the shell runs"
        command_mode, operands = options
        if command_mode:
            if not operands or operands[0] is None:
                return "the shell runs a string that is only known when the shell runs"
            rest = operands[1:]
            positional = None if any(a is None for a in rest) else tuple(a for a in rest if a)
            self._nested(operands[0], depth, positional or ("sh",), subshell=True)
            return None
        if operands and operands[0] is not None and _is_stdin(operands[0]):
            operands = []  # `bash /dev/stdin`: the script comes from standard input
        if operands:
            script = operands[0]
            path = w.kernel_path(script, self.state.cwd) if script else None
            if path is None or _written_by_line(path, self.state.written):
                return "the shell runs a script the hook cannot read before it runs"
            return None
        if isinstance(stdin, HereDoc):
            if not stdin.quoted and any(c in stdin.body for c in "$`\\"):
                return "the shell reads a here-document whose expansions are only known at run time"
            self._nested(stdin.body, depth, None, subshell=True)
            return None
        if isinstance(stdin, str) and stdin not in ("pipe", "file"):
            fields = w.expand(w.segments(stdin), self.state.lookup(None), assignment=True)
            if fields is None:
                return "the shell reads a here-string that is only known when the shell runs"
            self._nested(fields[0], depth, None, subshell=True)
            return None
        if stdin in ("pipe", "file"):
            return f"the shell reads its commands from a {stdin}, which the hook cannot see"
        return None

    def _environment(
        self, assignments: dict[str, str | None], clear: bool, unset: set[str]
    ) -> dict[str, str | None]:
        state = self.state
        if state.opaque:
            environment: dict[str, str | None] = {}
        elif clear:
            environment = {}
        else:
            environment = dict(state.environ)
            for name in state.exported:
                environment[name] = state.variables.get(name)
            for name, value in state.variables.items():
                if value is None and name in state.environ:
                    environment[name] = None  # an inherited variable the line made unknown
        for name in unset:
            environment.pop(name, None)
        environment.update(assignments)
        return environment

    def _simple(
        self,
        words: list[Word],
        args: list[str | None],
        assignments: dict[str, str | None],
        environment: dict[str, str | None],
        cwd: str | None,
    ) -> SimpleCommand:
        return SimpleCommand(
            words=list(words),
            args=args,
            assignments=dict(assignments),
            environment=environment,
            cwd=cwd if not self.state.opaque else None,
            written_before=WrittenBefore(self.state.written, len(self.state.written), self.writer),
        )

    def _written(self, value: str) -> None:
        cwd = self.state.cwd
        for path in (w.logical_path(value, cwd), w.kernel_path(value, cwd)):
            if path is not None:
                written = self.state.written
                # ``cp a.yaml dir/`` writes dir/a.yaml: record the directory too, so that
                # a file under it counts as written.
                for entry in (path, path.rstrip("/") + "/"):
                    written.setdefault(entry, len(written))

    def _track(
        self, name: str, args: list[str | None], cwd: str | None, simple: SimpleCommand
    ) -> None:
        """Follow what a command changes for the rest of the line."""
        values = [a for a in args if a is not None]
        unknown = len(values) != len(args)
        if name in ("cd", "pushd"):
            self._cd(name, args, simple.assignments)
        elif name == "popd":
            stack = self.state.dirstack
            self.journal.append(("dirs", "", list(stack)))
            self.set_cwd(stack.pop() if stack else None)
        elif name in ("export", "declare", "typeset", "readonly", "local"):
            export = name == "export" or any(
                v.startswith("-") and "x" in v for v in values if not _ASSIGNMENT.match(v)
            )
            options = [v for v in values if v.startswith(("-", "+")) and not _ASSIGNMENT.match(v)]
            unexport = name == "export" and any(v.startswith("-") and "n" in v for v in options)
            unexport = unexport or any(v.startswith("+") and "x" in v for v in options)
            nameref = name != "export" and any(v.startswith("-") and "n" in v for v in options)
            for value in args:
                if value is None:
                    continue
                match = _ASSIGNMENT.match(value)
                if match:
                    assigned: str | None = value[match.end() :]
                    if nameref or match.group(2):
                        assigned = None  # a name reference, or an append: unknown value
                    simple.exports[match.group(1)] = assigned
                    self.set_var(match.group(1), assigned, export=export)
                elif not value.startswith(("-", "+")) and unexport:
                    self.unset_var(value)
                elif not value.startswith(("-", "+")) and export:
                    self.set_var(value, self.state.lookup(None).variables.get(value), export=True)
            if unknown:
                self.blur(0)
        elif name in _SETS_VARIABLES:
            # read, mapfile, printf -v, getopts, let...: a value the hook does not compute.
            for value in values:
                target = value.partition("=")[0].partition("[")[0]
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", target):
                    self.set_var(target, None)
            self.set_var("REPLY", None)
            self.set_var("MAPFILE", None)
            if unknown:
                self.blur(0)
        elif name == "unset":
            for value in values:
                if not value.startswith("-"):
                    self.unset_var(value)
        elif name == "set":
            if any(v.startswith("-") and "a" in v and not v.startswith("--") for v in values) or (
                "allexport" in values
            ):
                self.state.allexport = True
        elif name == "tee":
            for value in values:
                if not value.startswith("-"):
                    self._written(value)
        elif name in ("cp", "mv", "install", "ln", "rsync", "touch", "mkdir", "dd"):
            targets = [v for v in values if not v.startswith("-")]
            if name in ("touch", "mkdir"):
                for target in targets:
                    self._written(target)
            elif targets:
                self._written(targets[-1])
        elif name in ("sed", "perl", "yq") and any(v.startswith("-i") for v in values):
            for target in [v for v in values if not v.startswith("-")][1:]:
                self._written(target)
        elif name == "curl":
            for target in _option_values(values, {"-o", "--output"}):
                self._written(target)
        elif name == "wget":
            for target in _option_values(values, {"-O", "--output-document"}):
                self._written(target)

    def _cd(self, name: str, args: list[str | None], assignments: dict[str, str | None]) -> None:
        """``cd [-L|-P] [DIR]`` as bash runs it, ``CDPATH`` included."""
        state = self.state
        physical = False
        targets: list[str | None] = []
        for arg in args:
            if arg is not None and arg.startswith("-") and arg != "-" and not targets:
                physical = physical or "P" in arg
                continue
            targets.append(arg)
        if name == "pushd":
            self.journal.append(("dirs", "", list(state.dirstack)))
            state.dirstack.append(state.cwd)
        lookup = state.lookup(None)
        lookup.variables.update(assignments)  # `CDPATH=x cd dir`: in effect for the builtin
        if not targets:
            home = lookup.variables.get("HOME")
            self.set_cwd(os.path.normpath(home) if home and name == "cd" else None)
            return
        target = targets[0]
        if target is None or target == "-" or (state.cwd is None and not target.startswith("/")):
            self.set_cwd(None)
            return
        candidates: list[str] = []
        cdpath = lookup.variables.get("CDPATH")
        if cdpath is None and "CDPATH" in lookup.variables:
            self.set_cwd(None)  # CDPATH was set to something unknown
            return
        if cdpath and not target.startswith(("/", "./", "../")) and target not in (".", ".."):
            for entry in cdpath.split(":"):
                base = w.logical_path(entry, state.cwd) if entry else state.cwd
                if base is not None:
                    candidates.append(os.path.join(base, target))
        candidates.append(target)
        for candidate in candidates:
            resolved = w.logical_path(candidate, state.cwd)
            if resolved is None:
                continue
            physical_path = w.kernel_path(candidate, state.cwd)
            if physical_path and os.path.isdir(physical_path) and os.access(physical_path, os.X_OK):
                self.set_cwd(physical_path if physical else resolved)
                return
        self.set_cwd(None)  # no such directory now: cd fails, or the line creates it


def _assigned(word: Word, match: re.Match[str], lookup: w.Lookup) -> str | None:
    if match.group(2):  # NAME+=value appends to a value the hook may not know
        return None
    value_parts = w.segments(word.raw[match.end() :])
    fields = w.expand(value_parts, lookup, assignment=True)
    return fields[0] if fields else ("" if fields == [] else None)


def _may_write(name: str, args: list[str | None]) -> bool:
    """The program may write files other than the ones the walk records."""
    if name in _READ_ONLY or name in _PRECISE_WRITERS or name == "eval":
        return False  # (what eval runs is walked in turn)
    if name in SHELLS:
        options = _shell_options(args[1:])
        return options is None or not options[0]  # a script file may write anything
    operands = [a for a in args[1:] if a is not None and not a.startswith("-")]
    if name == "git":
        no_config = not any(a is not None and a.startswith("-c") for a in args[1:])
        return not (no_config and operands and operands[0] in _GIT_READ_ONLY)
    if name == "policy-prover":
        return not (args[1:2] and args[1] in _POLICY_PROVER_READ_ONLY)
    if name == "sed":
        return any(a is not None and a.startswith(("-i", "--in-place")) for a in args)
    if name == "sort":
        return any(a is not None and a.startswith(("-o", "--output")) for a in args)
    return True


def _is_stdin(path: str) -> bool:
    return path in ("/dev/stdin", "-") or path.startswith(("/dev/fd/", "/proc/self/fd/"))


def _is_fd(value: str) -> bool:
    return value.isdigit() or value == "-"


def _written_by_line(path: str, written: dict[str, int] | WrittenBefore) -> bool:
    if path in written:
        return True
    parent = path
    while True:
        parent, _, _ = parent.rpartition("/")
        if not parent:
            return "/" in written
        if parent + "/" in written:
            return True


def split_words(text: str) -> list[str | None] | None:
    """A string split into words as ``env -S`` splits it, when it has no expansions."""
    if any(c in text for c in "$`\\#"):
        return None
    parts: list[str | None] = []
    for raw in re.findall(r"""(?:[^\s'"]+|'[^']*'|"[^"]*")+""", text):
        parts.append(w.literal_value(w.segments(raw)))
    return parts


_SUDO_VALUES = frozenset({"-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U", "-D", "-R", "-T"})
_WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "sudo": _SUDO_VALUES,
    "doas": frozenset({"-u", "-C"}),
    "command": frozenset(),
    "exec": frozenset({"-a"}),
    "builtin": frozenset(),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "setsid": frozenset(),
    "ionice": frozenset({"-c", "-n", "-p", "-t"}),
    "caffeinate": frozenset({"-t", "-w"}),
}


def _wrapper(name: str, args: list[str | None]) -> list[str | None] | None:
    """The command a wrapper runs (``sudo``, ``nohup``, ``timeout 5``...), else ``None``."""
    values = _WRAPPER_VALUES.get(name)
    if values is None:
        return None
    if name == "command" and any(a in ("-v", "-V") for a in args[:1]):
        return []  # `command -v NAME` prints where NAME is; it runs nothing
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None or not arg.startswith("-") or arg == "-":
            break
        if arg == "--":
            i += 1
            break
        if name == "sudo" and arg in ("-s", "-i", "--shell", "--login"):
            return None  # a shell: its input is not on this line
        i += 2 if arg in values else 1
    rest = args[i:]
    if name == "timeout" and rest:
        rest = rest[1:]  # the duration
    return rest


_XARGS_VALUES = frozenset(
    {"-a", "-d", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "-P", "-s", "--arg-file"}
    | {"--delimiter", "--eof", "--replace", "--max-lines", "--max-args", "--max-procs"}
    | {"--max-chars", "--process-slot-var"}
)


def _xargs(args: list[str | None]) -> list[str | None] | None:
    """The command ``xargs`` runs: its arguments come from standard input (``None``).

    With ``-I R`` (or ``-i``, ``--replace``) every ``R`` in the command is input too.
    """
    replace: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return None
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        name, eq, value = arg.partition("=")
        if name in ("-I", "--replace", "-i"):
            if name == "-I" and not eq:
                value = args[i + 1] if i + 1 < len(args) else None
                i += 1
            replace = value or "{}"
        elif len(arg) > 2 and arg[:2] in ("-I", "-i") and not arg.startswith("--"):
            replace = arg[2:]
        elif arg in _XARGS_VALUES and not eq and name not in ("-i", "-e", "-l"):
            i += 1
        i += 1
    command = args[i:] or ["echo"]
    if replace is None:
        return [*command, None]
    return [None if a is None or replace in a else a for a in command]


def _find_exec(args: list[str | None]) -> list[str | None] | None:
    """The first command ``find -exec``/``-execdir``/``-ok`` runs (``{}``: a found path)."""
    for i, arg in enumerate(args):
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            command: list[str | None] = []
            for part in args[i + 1 :]:
                if part in (";", "+"):
                    break
                command.append(None if part is None or "{}" in part else part)
            return command or None
    return None


def _env(
    args: list[str | None], assignments: dict[str, str | None], unset: set[str]
) -> tuple[list[str | None], bool, str | None, str | None] | str:
    """``env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... [COMMAND...]``.

    Returns (command, clear, chdir, split string), or the reason it cannot be read.
    """
    clear = False
    chdir: str | None = None
    split: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return "`env` gets an argument that is only known when the shell runs"
        if arg == "--":
            i += 1
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            takes = name in ("--unset", "--chdir", "--split-string", "--argv0")
            if takes and not eq:
                if i + 1 >= len(args) or args[i + 1] is None:
                    return "`env` gets an argument that is only known when the shell runs"
                value = args[i + 1] or ""
                i += 1
            if name == "--ignore-environment":
                clear = True
                assignments.clear()  # the shell's NAME=value prefixes are dropped too
            elif name == "--unset":
                unset.add(value)
                assignments.pop(value, None)
            elif name == "--chdir":
                chdir = value
            elif name == "--split-string":
                split = value
            i += 1
            continue
        if arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                flag = arg[j]
                if flag in "uCSPa":
                    value = arg[j + 1 :]
                    if not value:
                        if i + 1 >= len(args) or args[i + 1] is None:
                            return "`env` gets an argument that is only known when the shell runs"
                        value = args[i + 1] or ""
                        i += 1
                    if flag == "u":
                        unset.add(value)
                        assignments.pop(value, None)
                    elif flag == "C":
                        chdir = value
                    elif flag == "S":
                        split = value
                    elif flag == "P":
                        return "`env -P` looks the command up in a path the hook does not follow"
                    break
                if flag == "i":
                    clear = True
                    assignments.clear()
                j += 1
            i += 1
            continue
        if arg == "-":
            clear = True
            assignments.clear()
            i += 1
            continue
        match = _ASSIGNMENT.match(arg)
        if match and not match.group(2):
            assignments[match.group(1)] = arg[match.end() :]
            i += 1
            continue
        break
    return args[i:], clear, chdir, split


def _shell_options(args: list[str | None]) -> tuple[bool, list[str | None]] | None:
    """A shell's ``-c`` mode and its operands, reading options as bash does.

    ``-o NAME``/``+o NAME``, ``-O NAME``/``+O NAME``, ``--rcfile FILE`` and
    ``--init-file FILE`` take a value; single-letter options cluster; the first
    operand is the command string (with ``-c``) or the script file.
    """
    command_mode = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            return None
        if arg in ("--", "-"):
            i += 1
            break
        if arg.startswith("--"):
            i += 2 if arg in ("--rcfile", "--init-file") else 1
            continue
        if arg[:1] in "-+" and len(arg) > 1:
            takes = 0
            for flag in arg[1:]:
                if flag == "c":
                    command_mode = True
                elif flag in "oO":
                    takes += 1
            i += 1 + takes
            continue
        break
    return command_mode, args[i:]


def _option_values(values: list[str], names: set[str]) -> list[str]:
    found = []
    for i, value in enumerate(values):
        if value in names and i + 1 < len(values):
            found.append(values[i + 1])
        elif "=" in value and value.partition("=")[0] in names:
            found.append(value.partition("=")[2])
    return found


def split_commands(text: str, cwd: str | None, environ: dict[str, str]) -> list[SimpleCommand]:
    """The simple commands of ``text`` in order; ``cwd`` is where the line starts.

    Raises :class:`ShellSyntaxError` when the line cannot be split and
    :class:`TooComplex` when it exceeds the bounds on size and nesting.
    """
    walker = _Walker(environ, cwd)
    walker.walk(text, 0, None)
    return walker.finish()
