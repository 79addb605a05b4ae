"""Which OpenShell commands apply a policy, and what they apply.

The command line is read as the OpenShell CLI's clap definitions read it
(``crates/openshell-cli/src/main.rs``: ``struct Cli``, ``enum Commands``,
``enum SandboxCommands``, ``enum PolicyCommands``, ``enum DraftCommands``):

* global options anywhere: ``-g``/``--gateway VALUE``, ``--gateway-endpoint VALUE``,
  ``--workspace VALUE``, ``--gateway-insecure``, ``-v``/``--verbose``, ``-h``/``--help``,
  ``-V``/``--version``; short options cluster (``-vg gw``, ``-vggw``, ``-g=gw``);
* ``openshell policy set [NAME] --policy FILE [--global] [--yes] [--wait] [--timeout N]``
  (alias ``pol``); it has no ``--dry-run`` (clap refuses the command: nothing applied);
* ``openshell sandbox create [...] [--policy FILE] [-- CMD...]`` (alias ``sb``):
  ``--gpu`` takes an optional value (``--gpu --policy f`` leaves ``--policy`` an option);
  ``--policy`` wins over ``OPENSHELL_SANDBOX_POLICY``, read from the CLI's environment
  only without it (``openshell-policy/src/lib.rs``, ``load_sandbox_policy``); without
  either, the sandbox gets the image's or the built-in policy, which no hook can see;
* ``NAME=... OPENSHELL_SANDBOX_POLICY=FILE cmd`` and ``export OPENSHELL_SANDBOX_POLICY=FILE``:
  the policy every later ``sandbox create`` (and the sandbox supervisor) loads;
* ``openshell policy update [NAME] --add-endpoint ... --add-allow ...`` (``policy_update.rs``);
  ``--remove-*`` and ``--add-deny`` only take access away; ``--dry-run`` applies nothing;
* ``openshell rule approve|approve-all`` (alias ``rl``) approves draft rules the hook
  cannot see.

Beyond the command itself, every other mention of ``openshell`` as a command (in a word
given to a program that may run it, ``alias x=openshell``, ``git -c alias.x=!openshell``,
``python -c "...openshell..."``) is accounted for. This module only reads words: it
imports nothing of the prover.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from server.hooks.shell import SimpleCommand
from server.hooks.words import kernel_path, names_openshell

POLICY_ENV = "OPENSHELL_SANDBOX_POLICY"
OPENSHELL = "openshell"

# -- the CLI's options (main.rs) -------------------------------------------------------

_GLOBAL_LONG = {
    "--gateway": "value",
    "--gateway-endpoint": "value",
    "--workspace": "value",
    "--gateway-insecure": "flag",
    "--verbose": "flag",
    "--help": "help",
    "--version": "help",
}
_GLOBAL_SHORT = {"g": "--gateway", "v": "--verbose", "h": "--help", "V": "--version"}
_TOP = {"sandbox": "sandbox", "sb": "sandbox", "policy": "policy", "pol": "policy"}
_TOP |= {"rule": "rule", "rl": "rule"}
_LEAVES: dict[tuple[str, str], dict[str, str]] = {
    ("policy", "set"): {
        "--policy": "value",
        "--timeout": "value",
        "--global": "flag",
        "--yes": "flag",
        "--wait": "flag",
    },
    ("policy", "update"): {
        **{
            name: "value"
            for name in (
                "--add-endpoint",
                "--remove-endpoint",
                "--add-allow",
                "--add-deny",
                "--remove-rule",
                "--binary",
                "--rule-name",
                "--timeout",
            )
        },
        "--dry-run": "flag",
        "--wait": "flag",
    },
    ("sandbox", "create"): {
        **{
            name: "value"
            for name in (
                "--name",
                "--from",
                "--upload",
                "--editor",
                "--cpu",
                "--memory",
                "--driver-config-json",
                "--provider",
                "--policy",
                "--forward",
                "--label",
                "--env",
                "--approval-mode",
                "--output",
            )
        },
        "--gpu": "optional",
        **{
            name: "flag"
            for name in (
                "--no-git-ignore",
                "--keep",
                "--no-keep",
                "--tty",
                "--no-tty",
                "--detach",
                "--auto-providers",
                "--no-auto-providers",
                "--no-credential-warnings",
            )
        },
    },
    ("rule", "approve"): {"--chunk-id": "value"},
    ("rule", "approve-all"): {"--include-security-flagged": "flag"},
}
_LEAF_SHORT: dict[tuple[str, str], dict[str, str]] = {("sandbox", "create"): {"o": "--output"}}

#: Programs that print or search their arguments and never run them.
_NON_EXECUTING = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "rg", "ag", "man", "which", "type", "whereis"}
    | {"apropos", "tldr", "help", "cat", "less", "more", "head", "tail", "wc", "policy-prover"}
    | {"ls", "stat", "file", "diff", "touch", "mkdir", "rm", "cp", "mv", "ln", "test", "["}
    | {"true", "false", ":", "cd", "pushd", "export", "unset", "readonly", "declare"}
    | {"tee", "sort", "uniq", "cut", "tr", "jq", "base64", "sha256sum", "md5sum", "nl"}
)
#: git subcommands that never run a configured command from their arguments.
_GIT_SAFE = frozenset({"commit", "log", "show", "diff", "grep", "status", "add", "rm", "mv"})
_GIT_SAFE |= {"tag", "blame", "shortlog", "restore", "checkout", "switch", "stash"}


class SpecError(ValueError):
    """An ``--add-endpoint``/``--add-allow`` value the OpenShell CLI would refuse."""


class PolicyFile(NamedTuple):
    """A command applies the policy in a file; ``path`` is absolute (or ``None``)."""

    form: str  # e.g. "openshell policy set"
    given: str  # the path as written
    path: str | None
    written_by_line: bool
    #: An earlier program on the line that may have changed any file (``git pull``).
    writer: str = ""


class Unverifiable(NamedTuple):
    """A command may apply a policy the hook cannot see; ``reason`` says why.

    ``ask``: nothing on the line names OpenShell, so the command may well be unrelated;
    the tool asks its user instead of denying.
    """

    form: str
    reason: str
    ask: bool = False


class PolicyUpdate(NamedTuple):
    """``openshell policy update`` adding access: the proposals to assess, in order."""

    form: str
    proposals: tuple[dict[str, Any], ...]
    #: The ``--add-allow`` groups: (host, port, [L7 rules]) applied after the proposals.
    allow_groups: tuple[tuple[str, int, tuple[dict[str, Any], ...]], ...]
    specs: tuple[str, ...]


Action = PolicyFile | Unverifiable | PolicyUpdate


class Parsed:
    """An ``openshell`` command line as clap reads it; ``unknown`` says why its meaning
    depends on a word the hook cannot know, if it does."""

    def __init__(self) -> None:
        self.path: list[str] = []
        self.options: dict[str, list[str | None]] = {}
        self.flags: set[str] = set()
        self.unknown_options: list[str] = []
        self.positionals: list[str] = []
        self.unknown: str | None = None
        self.help = False


def mentions_openshell(text: str) -> bool:
    """``openshell`` (any case, quotes and backslashes removed) appears in ``text``."""
    folded = text.casefold()
    if OPENSHELL in folded:
        return True
    return OPENSHELL in re.sub(r"['\"\\]|\$'|\\\n", "", folded)


def _is_openshell(value: str | None) -> bool:
    # Case-insensitive: on macOS's default file system `OpenShell` runs `openshell`.
    return value is not None and os.path.basename(value).casefold() == OPENSHELL


def _executable(name: str, command: SimpleCommand) -> str | None:
    """The file the shell runs for ``name`` (a ``PATH`` search without a slash)."""
    if "/" in name:
        path = kernel_path(name, command.cwd)
        return path if path and os.path.isfile(path) else None
    search = command.environment.get("PATH")
    for directory in (search or "").split(":"):
        candidate = os.path.join(directory or command.cwd or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _is_openshell_binary(name: str, command: SimpleCommand) -> bool:
    """``name`` runs the OpenShell CLI under another name: a symbolic or hard link to it,
    or a copy of it (same size and same first 64 KiB as the ``openshell`` on ``PATH``)."""
    key = (name, command.environment.get("PATH"), command.cwd)
    if key not in _BINARY_CACHE:
        _BINARY_CACHE[key] = _runs_openshell(name, command)
    return _BINARY_CACHE[key]


#: One hook call looks each command name up once (a line may repeat one 100,000 times).
_BINARY_CACHE: dict[tuple[str, str | None, str | None], bool] = {}


def _runs_openshell(name: str, command: SimpleCommand) -> bool:
    found = _executable(name, command)
    if found is None:
        return False
    real = os.path.realpath(found)
    if os.path.basename(real).casefold() == OPENSHELL:
        return True
    original = _executable(OPENSHELL, command)
    if original is None:
        return False
    try:
        mine, theirs = os.stat(real), os.stat(os.path.realpath(original))
        if (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino):
            return True
        if mine.st_size != theirs.st_size or mine.st_size == 0:
            return False
        with open(real, "rb") as a, open(original, "rb") as b:
            return a.read(65536) == b.read(65536)
    except OSError:
        return False


def actions(
    commands: list[SimpleCommand], environ: dict[str, str], line_mentions: bool = True
) -> list[Action]:
    """The policy-applying actions of a command line's simple commands, in order.

    ``line_mentions``: the line names OpenShell somewhere (quotes and case aside); a
    command the hook cannot see through is then denied, else the user is asked.
    """
    found: list[Action] = []
    for command in commands:
        found.extend(_actions_of(command, line_mentions))
    return found


def _actions_of(command: SimpleCommand, line_mentions: bool) -> list[Action]:
    found: list[Action] = []
    args = command.args
    is_openshell = (
        bool(args)
        and args[0] is not None
        and (_is_openshell(args[0]) or _is_openshell_binary(args[0], command))
    )
    if POLICY_ENV in command.assignments and not is_openshell:
        found.append(_policy_file(f"{POLICY_ENV}=", command.assignments[POLICY_ENV], command))
    if POLICY_ENV in command.exports:
        form = f"export {POLICY_ENV}="
        found.append(_policy_file(form, command.exports[POLICY_ENV], command))
    if command.indirect is not None:
        program = _program(command)
        found.append(
            Unverifiable(
                program,
                f"{command.indirect}, so the hook cannot tell whether it runs openshell or "
                "applies a policy; run the openshell command directly, with literal arguments",
                ask=not line_mentions,
            )
        )
        return [action for action in found if action is not None]
    if is_openshell:
        found.extend(_openshell_actions(command, args))
    elif args:
        found.extend(_embedded(command) or _fed(command, line_mentions))
    return [action for action in found if action is not None]


def _fed(command: SimpleCommand, line_mentions: bool) -> list[Action]:
    """A program that reads text naming openshell (a here-document, a here-string, a pipe
    from ``echo 'openshell ...'``) or a file this line wrote, on a line naming openshell:
    ``python3 <<EOF ... os.system("openshell ...")``, ``python3 x.py``."""
    program = os.path.basename(command.args[0] or "")
    if program in _NON_EXECUTING or not line_mentions:
        return []
    if program == "git" and _git_safe(command.args[1:]):
        return []
    what = None
    if command.fed_mention:
        what = "reads text that names openshell from its standard input"
    else:
        for arg in command.args[1:]:
            path = kernel_path(arg, command.cwd) if arg and not arg.startswith("-") else None
            if path is not None and command.written_before.covers(path):
                what = f"reads {arg}, which this command line writes"
                break
    if what is None:
        return []
    return [
        Unverifiable(
            program,
            f"`{program}` {what}, and may run openshell in a way the hook cannot check; run "
            "the openshell command directly",
        )
    ]


def _program(command: SimpleCommand) -> str:
    if command.args and command.args[0] is not None:
        return os.path.basename(command.args[0])
    return command.words[0].value if command.words else "command"


def _embedded(command: SimpleCommand) -> list[Action]:
    """Another program given ``openshell``: ``xargs openshell ...``, ``ssh h openshell``,
    ``git -c alias.x=!openshell``, ``python -c "...openshell..."``."""
    args = command.args
    program = os.path.basename(args[0] or "")
    if program in _NON_EXECUTING or (program == "git" and _git_safe(args[1:])):
        return []
    for index, arg in enumerate(args[1:], start=1):
        if arg is None:
            continue
        if _is_openshell(arg):
            parsed = parse(args[index + 1 :])
            if parsed.unknown is None and not _applies(parsed):
                continue  # e.g. `ssh host openshell sandbox list`
        elif not names_openshell(arg):
            continue
        return [
            Unverifiable(
                f"{program} openshell",
                f"`{program}` runs openshell with arguments or in a place the hook cannot see "
                "(openshell is among its arguments); run the openshell command directly",
            )
        ]
    return []


def _git_safe(args: list[str | None]) -> bool:
    """A git command that runs no configured command: no ``-c``, a safe subcommand."""
    for arg in args:
        if arg is None or arg.startswith(("-c", "--config-env", "--exec-path")):
            return False
        if not arg.startswith("-"):
            return arg in _GIT_SAFE
    return True


def parse(args: list[str | None]) -> Parsed:
    """Read an ``openshell`` argument list (after the program name) as clap reads it."""
    parsed = Parsed()
    leaf: dict[str, str] = {}
    leaf_short: dict[str, str] = {}
    i = 0
    rest = False
    while i < len(args):
        arg = args[i]
        i += 1
        if rest:
            continue  # after --: the sandbox's command, or NAME (no option)
        if arg is None:
            parsed.unknown = "an argument that is only known when the shell runs it"
            if len(parsed.path) < 2:
                return parsed
            continue
        if arg == "--":
            rest = True
            continue
        if arg.startswith("--") and len(arg) > 2:
            name, eq, value = arg.partition("=")
            kind = leaf.get(name) or _GLOBAL_LONG.get(name)
            if kind is None:
                parsed.unknown_options.append(name)
                continue
            i = _take(parsed, args, i, name, kind, value if eq else None)
            continue
        if arg.startswith("-") and len(arg) > 1:
            j = 1
            while j < len(arg):
                long_name = leaf_short.get(arg[j]) or _GLOBAL_SHORT.get(arg[j])
                if long_name is None:
                    parsed.unknown_options.append("-" + arg[j])
                    j += 1
                    continue
                kind = leaf.get(long_name) or _GLOBAL_LONG[long_name]
                if kind == "value":
                    attached = arg[j + 1 :]
                    attached = attached[1:] if attached.startswith("=") else attached
                    i = _take(parsed, args, i, long_name, kind, attached or None)
                    break
                _take(parsed, args, i, long_name, kind, None)
                j += 1
            continue
        if not parsed.path:
            top = _TOP.get(arg)
            parsed.path.append(top or arg)
            if top is None:
                return parsed  # a command that applies no policy
            continue
        if len(parsed.path) == 1:
            parsed.path.append(arg)
            leaf = _LEAVES.get((parsed.path[0], arg), {})
            leaf_short = _LEAF_SHORT.get((parsed.path[0], arg), {})
            if not leaf:
                return parsed
            continue
        parsed.positionals.append(arg)
    return parsed


def _take(
    parsed: Parsed, args: list[str | None], i: int, name: str, kind: str, value: str | None
) -> int:
    """Record option ``name``; returns the index of the next argument."""
    if kind == "help":
        parsed.help = True
    elif kind == "flag":
        parsed.flags.add(name)
    elif value is not None:
        parsed.options.setdefault(name, []).append(value)
    elif kind == "optional":
        # num_args = 0..=1: clap takes the next argument unless it looks like an option.
        nxt = args[i] if i < len(args) else ""
        if nxt is None:
            parsed.unknown = f"the value of {name} is only known when the shell runs"
            return i + 1
        if nxt and not nxt.startswith("-"):
            parsed.options.setdefault(name, []).append(nxt)
            return i + 1
        parsed.options.setdefault(name, []).append("")
    else:
        nxt = args[i] if i < len(args) else ""
        if nxt is not None and nxt.startswith("-") and len(nxt) > 1:
            # clap refuses a value that looks like an option: it is read as one.
            parsed.options.setdefault(name, [])
            return i
        parsed.options.setdefault(name, []).append(nxt)
        return i + 1
    return i


def _applies(parsed: Parsed) -> bool:
    return tuple(parsed.path[:2]) in _LEAVES


def _policy_file(form: str, given: str | None, command: SimpleCommand) -> Any:
    if given == "":
        return None  # an empty value: no policy file is named
    if given is None:
        return PolicyFile(
            form=form, given="(a value only known at run time)", path=None, written_by_line=False
        )
    path = kernel_path(given, command.cwd)
    written = path is not None and command.written_before.covers(path)
    writer = "" if written else command.written_before.writer or ""
    return PolicyFile(form, given, path, written or bool(writer), writer)


def _openshell_actions(command: SimpleCommand, args: list[str | None]) -> list[Action]:
    parsed = parse(args[1:])
    if parsed.help:
        return []  # clap prints the help or the version and exits
    key = tuple(parsed.path[:2])
    if key not in _LEAVES:
        if parsed.unknown is not None:
            return [Unverifiable("openshell", f"its subcommand depends on {parsed.unknown}")]
        return []
    form = "openshell " + " ".join(key)
    if key == ("policy", "set") and "--dry-run" in parsed.unknown_options:
        return []  # not an option of `policy set`: clap refuses the command
    if key == ("policy", "update") and "--dry-run" in parsed.flags:
        return []  # a preview: nothing is sent to the gateway
    policies = parsed.options.get("--policy")
    if key == ("policy", "set"):
        # Without --policy the CLI refuses `policy set`: nothing is applied.
        found: list[Action] = [_policy_file(form, p, command) for p in policies or []]
    elif key == ("sandbox", "create"):
        found = _create_action(policies, command)
    elif key == ("policy", "update"):
        found = _update_actions(parsed)
    else:
        found = [
            Unverifiable(
                form,
                "approving draft rules adds network access the hook cannot see; review them "
                "with `openshell rule get`, assess each with `policy-prover assess` (MCP: "
                "assess_proposal), then approve them yourself",
            )
        ]
    if parsed.unknown is not None and not any(
        isinstance(a, PolicyFile) and a.path is None for a in found
    ):
        found.append(Unverifiable(form, f"it is given {parsed.unknown}"))
    return found


def _create_action(policies: list[str | None] | None, command: SimpleCommand) -> list[Any]:
    if policies:
        form = "openshell sandbox create --policy"
        return [_policy_file(form, policy, command) for policy in policies]
    if POLICY_ENV in command.environment:
        form = f"openshell sandbox create ({POLICY_ENV})"
        from_env = command.environment[POLICY_ENV]
        if from_env == "":
            return []  # the CLI cannot read "" and stops: nothing is applied
        return [_policy_file(form, from_env, command)]
    return [
        Unverifiable(
            "openshell sandbox create",
            "the sandbox gets no policy file (no --policy and no OPENSHELL_SANDBOX_POLICY), so "
            "it runs with the image's or OpenShell's built-in policy, which the hook cannot "
            "check; pass --policy FILE",
        )
    ]


def _update_actions(update: Parsed) -> list[Action]:
    names = {
        "--add-endpoint": "add_endpoints",
        "--add-allow": "add_allow",
        "--binary": "binaries",
    }
    lists = {attr: update.options.get(flag, []) for flag, attr in names.items()}
    if not lists["add_endpoints"] and not lists["add_allow"]:
        return []  # removals and deny rules only take access away
    if any(value is None for values in lists.values() for value in values):
        return [Unverifiable("openshell policy update", "a value is only known at run time")]
    rule_names = [n for n in update.options.get("--rule-name", []) if n is not None]
    try:
        proposals = build_endpoint_proposals(
            [v for v in lists["add_endpoints"] if v is not None],
            [v for v in lists["binaries"] if v is not None],
            rule_names[-1] if rule_names else None,
        )
        groups = group_allow_rules([v for v in lists["add_allow"] if v is not None])
    except SpecError as exc:
        return [Unverifiable("openshell policy update", str(exc))]
    specs = tuple(
        [f"--add-endpoint {spec}" for spec in lists["add_endpoints"]]
        + [f"--add-allow {spec}" for spec in lists["add_allow"]]
    )
    return [PolicyUpdate("openshell policy update", tuple(proposals), tuple(groups), specs)]


# -- the OpenShell CLI's spec parsers (policy_update.rs), building authored policy data ----


def generated_rule_name(host: str, port: int) -> str:
    """The rule name ``policy update`` derives from an endpoint (``allow_<host>_<port>``)."""
    sanitized = "".join(
        c for c in host.replace(".", "_").replace("-", "_") if c.isalnum() or c == "_"
    )
    return f"allow_{sanitized}_{port}"


def _host(flag: str, spec: str, host: str) -> str:
    host = host.strip()
    if not host:
        raise SpecError(f"{flag} has an empty host segment in '{spec}'")
    if any(c.isspace() for c in host):
        raise SpecError(f"{flag} host must not contain whitespace in '{spec}'")
    if "/" in host:
        raise SpecError(f"{flag} host must not contain '/' in '{spec}'")
    return host


def _port(flag: str, spec: str, port: str) -> int:
    port = port.strip()
    if not port:
        raise SpecError(f"{flag} has an empty port segment in '{spec}'")
    if not (port.isascii() and port.isdigit()):
        raise SpecError(f"{flag} port segment must be a base-10 integer, got '{port}' in '{spec}'")
    value = int(port)
    if not 1 <= value <= 65535:
        raise SpecError(f"{flag} port must be in the range 1-65535, got '{value}' in '{spec}'")
    return value


def parse_endpoint_spec(spec: str) -> dict[str, Any]:
    """``host:port[:access[:protocol[:enforcement[:options]]]]`` as an authored endpoint."""
    parts = spec.split(":")
    if not 2 <= len(parts) <= 6:
        raise SpecError(
            "--add-endpoint expects host:port[:access[:protocol[:enforcement[:options]]]], "
            f"got '{spec}'"
        )
    host = _host("--add-endpoint", spec, parts[0])
    port = _port("--add-endpoint", spec, parts[1])
    access, protocol, enforcement, options = (
        (parts[i].strip() if i < len(parts) else "") for i in range(2, 6)
    )
    if len(parts) == 3 and not access:
        raise SpecError(f"--add-endpoint has an empty access segment in '{spec}'")
    if len(parts) == 6 and not options:
        raise SpecError(f"--add-endpoint has an empty options segment in '{spec}'")
    if enforcement and not protocol:
        raise SpecError(f"--add-endpoint cannot set enforcement without protocol in '{spec}'")
    if access and access not in ("read-only", "read-write", "full"):
        raise SpecError(
            "--add-endpoint access segment must be one of read-only, read-write, or full; "
            f"got '{access}' in '{spec}'"
        )
    if protocol and protocol not in ("tcp", "rest", "websocket", "sql"):
        raise SpecError(
            "--add-endpoint protocol segment must be 'tcp', 'rest', 'websocket', or 'sql'; "
            f"got '{protocol}' in '{spec}'"
        )
    if protocol == "tcp" and (access or enforcement):
        raise SpecError(
            f"--add-endpoint protocol 'tcp' does not support access or enforcement in '{spec}'"
        )
    if enforcement and enforcement not in ("enforce", "audit"):
        raise SpecError(
            "--add-endpoint enforcement segment must be 'enforce' or 'audit'; "
            f"got '{enforcement}' in '{spec}'"
        )
    endpoint: dict[str, Any] = {"host": host, "port": port}
    for key, value in (("protocol", protocol), ("enforcement", enforcement), ("access", access)):
        if value:
            endpoint[key] = value
    _apply_options(spec, endpoint, options)
    return endpoint


def _apply_options(spec: str, endpoint: dict[str, Any], options: str) -> None:
    if not options:
        return
    protocol = endpoint.get("protocol", "")
    for option in (part.strip() for part in options.split(",")):
        if not option:
            raise SpecError(
                f"--add-endpoint options segment must not contain empty options in '{spec}'"
            )
        if option == "allow-uninspected-credentials":
            endpoint["allow_uninspected_credentials"] = True
        elif option == "websocket-credential-rewrite":
            if protocol not in ("rest", "websocket"):
                raise SpecError(
                    "websocket-credential-rewrite endpoint option requires --add-endpoint "
                    f"protocol segment to be 'rest' or 'websocket'; got '{protocol or '<empty>'}' "
                    f"in '{spec}'"
                )
            endpoint["websocket_credential_rewrite"] = True
        elif option == "request-body-credential-rewrite":
            if protocol != "rest":
                raise SpecError(
                    "request-body-credential-rewrite endpoint option requires --add-endpoint "
                    f"protocol segment to be 'rest'; got '{protocol or '<empty>'}' in '{spec}'"
                )
            endpoint["request_body_credential_rewrite"] = True
        elif option.startswith("allowed-ip="):
            value = option.partition("=")[2].strip()
            if not value:
                raise SpecError(
                    f"--add-endpoint allowed-ip option must include a CIDR or IP value in '{spec}'"
                )
            if any(c.isspace() for c in value):
                raise SpecError(
                    f"--add-endpoint allowed-ip option must not contain whitespace in '{spec}'"
                )
            ips = endpoint.setdefault("allowed_ips", [])
            if value not in ips:
                ips.append(value)
        else:
            raise SpecError(
                "--add-endpoint options segment supports only 'allow-uninspected-credentials', "
                "'websocket-credential-rewrite', 'request-body-credential-rewrite', and "
                f"'allowed-ip=<CIDR-or-IP>'; got '{option}' in '{spec}'"
            )


def build_endpoint_proposals(
    specs: list[str], binaries: list[str], rule_name: str | None
) -> list[dict[str, Any]]:
    """One ``{rule_name, rule}`` proposal per ``--add-endpoint``, as the CLI builds them."""
    if any(not binary.strip() for binary in binaries):
        raise SpecError("--binary values must not be empty")
    if binaries and not specs:
        raise SpecError("--binary can only be used with --add-endpoint")
    if rule_name is not None and len(specs) > 1:
        raise SpecError("--rule-name is only supported when exactly one --add-endpoint is provided")
    paths: list[str] = []
    for binary in binaries:
        if binary.strip() not in paths:
            paths.append(binary.strip())
    proposals = []
    for spec in specs:
        endpoint = parse_endpoint_spec(spec)
        name = (rule_name or "").strip() or generated_rule_name(endpoint["host"], endpoint["port"])
        rule: dict[str, Any] = {"name": name, "endpoints": [endpoint]}
        if paths:
            rule["binaries"] = [{"path": path} for path in paths]
        proposals.append({"rule_name": name, "rule": rule})
    return proposals


def parse_allow_spec(spec: str) -> tuple[str, int, dict[str, Any]]:
    """``host:port:METHOD:path_glob`` as (host, port, L7 allow rule)."""
    flag = "--add-allow"
    parts = spec.split(":")
    if len(parts) != 4:
        raise SpecError(f"{flag} expects host:port:METHOD:path_glob, got '{spec}'")
    host = _host(flag, spec, parts[0])
    port = _port(flag, spec, parts[1])
    method = parts[2].strip()
    if not method:
        raise SpecError(f"{flag} has an empty METHOD segment in '{spec}'")
    if any(c.isspace() for c in method):
        raise SpecError(f"{flag} METHOD must not contain whitespace in '{spec}'")
    path = parts[3].strip()
    if not path:
        raise SpecError(f"{flag} has an empty path segment in '{spec}'")
    if not path.startswith("/") and path != "**" and not path.startswith("**/"):
        raise SpecError(f"{flag} path must start with '/' or be '**', got '{path}' in '{spec}'")
    return host, port, {"allow": {"method": method.upper(), "path": path}}


def group_allow_rules(specs: list[str]) -> list[tuple[str, int, tuple[dict[str, Any], ...]]]:
    """``--add-allow`` rules grouped by (host, port) in the CLI's (sorted) order."""
    grouped: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for spec in specs:
        host, port, rule = parse_allow_spec(spec)
        grouped.setdefault((host, port), []).append(rule)
    return [(host, port, tuple(rules)) for (host, port), rules in sorted(grouped.items())]
