"""Which OpenShell commands apply a policy, and what they apply.

The command forms follow the OpenShell CLI (``crates/openshell-cli/src/main.rs`` and
``policy_update.rs``):

* ``openshell policy set [NAME] --policy FILE [--global] [--wait] ...``;
* ``openshell sandbox create [--policy FILE] ... [-- CMD...]``; without ``--policy`` the
  CLI falls back to ``OPENSHELL_SANDBOX_POLICY``, and without either the sandbox gets the
  image's or the built-in policy, which no hook can see;
* ``NAME=... OPENSHELL_SANDBOX_POLICY=FILE cmd`` and ``export OPENSHELL_SANDBOX_POLICY=FILE``:
  the policy every later ``sandbox create`` (and the sandbox supervisor) loads;
* ``openshell policy update [NAME] --add-endpoint host:port[:access[:protocol[:enforcement
  [:options]]]] [--binary PATH]... [--rule-name NAME] --add-allow host:port:METHOD:path``.
  ``--remove-endpoint``, ``--remove-rule`` and ``--add-deny`` only take access away and are
  not checked; ``--dry-run`` applies nothing.

Aliases (``pol``, ``sb``), the global flags (``-g``/``--gateway``, ``--gateway-endpoint``,
``--workspace``, ``-v``) and ``--flag=value`` spellings are understood. This module only
reads words: it imports nothing of the prover.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from server.hooks.shell import SimpleCommand, resolve

POLICY_ENV = "OPENSHELL_SANDBOX_POLICY"

_GLOBAL_WITH_VALUE = frozenset({"-g", "--gateway", "--gateway-endpoint", "--workspace"})
_HELP = frozenset({"-h", "--help", "-V", "--version"})
_UPDATE_LISTS = {
    "--add-endpoint": "add_endpoints",
    "--remove-endpoint": "remove_endpoints",
    "--add-allow": "add_allow",
    "--add-deny": "add_deny",
    "--remove-rule": "remove_rules",
    "--binary": "binaries",
}
_UPDATE_VALUES = frozenset({*_UPDATE_LISTS, "--rule-name", "--timeout"})
_SET_VALUES = frozenset({"--policy", "--timeout"})
#: ``sandbox create`` options that take a value (so that the value is not read as a flag).
_CREATE_VALUES = frozenset(
    {
        "--policy",
        "--name",
        "--from",
        "--image",
        "--gpu",
        "--cpu",
        "--memory",
        "--driver-config-json",
        "--provider",
        "--forward",
        "--upload",
        "--approval-mode",
        "--runtime",
    }
)


#: Programs that name ``openshell`` without running it.
_NON_EXECUTING = frozenset(
    {"echo", "printf", "grep", "egrep", "fgrep", "rg", "man", "which", "type", "whereis"}
    | {"apropos", "git", "tldr", "help", "cat", "less", "head", "tail", "wc", "policy-prover"}
)
_APPLYING = (
    ["policy", "set"],
    ["pol", "set"],
    ["policy", "update"],
    ["pol", "update"],
    ["sandbox", "create"],
    ["sb", "create"],
)


class SpecError(ValueError):
    """An ``--add-endpoint``/``--add-allow`` value the OpenShell CLI would refuse."""


@dataclass(frozen=True)
class PolicyFile:
    """A command applies the policy in a file; ``path`` is absolute (or ``None``)."""

    form: str  # e.g. "openshell policy set"
    given: str  # the path as written
    path: str | None
    written_by_line: bool


@dataclass(frozen=True)
class Unverifiable:
    """A command applies a policy the hook cannot see; ``reason`` says why."""

    form: str
    reason: str


@dataclass(frozen=True)
class PolicyUpdate:
    """``openshell policy update`` adding access: the proposals to assess, in order."""

    form: str
    proposals: tuple[dict[str, Any], ...]
    #: The ``--add-allow`` groups: (host, port, [L7 rules]) applied after the proposals.
    allow_groups: tuple[tuple[str, int, tuple[dict[str, Any], ...]], ...]
    specs: tuple[str, ...]


Action = PolicyFile | Unverifiable | PolicyUpdate


@dataclass
class _Parsed:
    positionals: list[str] = field(default_factory=list)
    options: dict[str, list[str]] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)


def mentions_openshell(text: str) -> bool:
    """The cheap filter: a command line that never says ``openshell`` applies no policy."""
    return "openshell" in text.lower()


def actions(commands: list[SimpleCommand], environ: dict[str, str]) -> list[Action]:
    """The policy-applying actions of a command line's simple commands, in order."""
    found: list[Action] = []
    for command in commands:
        found.extend(_actions_of(command, environ))
    return found


def _actions_of(command: SimpleCommand, environ: dict[str, str]) -> list[Action]:
    words = command.words
    variables = {**environ, **command.variables, **command.assignments}
    is_openshell = bool(words) and not words[0].dynamic and _is_openshell(words[0].value)
    found: list[Action] = []
    if POLICY_ENV in command.assignments and not (is_openshell and _is_create(words)):
        found.append(
            _policy_file(f"{POLICY_ENV}=", command.assignments[POLICY_ENV], command, variables)
        )
    if words and words[0].value in ("export", "declare", "typeset", "readonly"):
        for word in words[1:]:
            if word.value.startswith(POLICY_ENV + "="):
                given = word.value.partition("=")[2]
                found.append(_policy_file(f"export {POLICY_ENV}=", given, command, variables))
    for word in words:
        if word.dynamic and mentions_openshell(word.raw) and _looks_applying(word.raw):
            found.append(
                Unverifiable(
                    "command substitution",
                    f"the command substitution {word.raw!r} runs OpenShell, and its output is "
                    "only known once the shell runs it; run the openshell command directly",
                )
            )
    if is_openshell:
        found.extend(_openshell_actions(command, variables))
    elif words and os.path.basename(words[0].value) not in _NON_EXECUTING:
        found.extend(_embedded(command, variables))
    return [action for action in found if action is not None]


def _embedded(command: SimpleCommand, variables: dict[str, str]) -> list[Action]:
    """``xargs openshell policy set ...``, ``find -exec openshell ...``, ``ssh h openshell``:
    another program runs OpenShell with arguments the hook may not see."""
    for index, word in enumerate(command.words[1:], start=1):
        if word.dynamic or not _is_openshell(word.value):
            continue
        inner = SimpleCommand(
            words=command.words[index:],
            assignments={},
            variables=command.variables,
            cwd=command.cwd,
            written_before=command.written_before,
        )
        if _openshell_actions(inner, variables) or _applying_path(inner.argv[1:]):
            program = os.path.basename(command.words[0].value)
            return [
                Unverifiable(
                    f"{program} openshell",
                    f"`{program}` runs openshell with arguments or in a place the hook cannot "
                    "see; run the openshell command directly",
                )
            ]
    return []


def _applying_path(args: list[str]) -> bool:
    path = _parse(args, _SET_VALUES | _UPDATE_VALUES | _CREATE_VALUES).positionals[:2]
    return path in _APPLYING


def _is_openshell(value: str) -> bool:
    return os.path.basename(value) == "openshell"


def _looks_applying(raw: str) -> bool:
    return bool(
        re.search(r"\b(policy|pol)\s+(set|update)\b|\b(sandbox|sb)\s+create\b", raw)
        or POLICY_ENV in raw
    )


def _is_create(words: list[Any]) -> bool:
    parsed = _parse([word.value for word in words[1:]], _CREATE_VALUES)
    return parsed.positionals[:2] in (["sandbox", "create"], ["sb", "create"])


def _policy_file(form: str, given: str, command: SimpleCommand, variables: dict[str, str]) -> Any:
    if not given:
        return None  # an empty value: no policy file is named
    path = resolve(given, command.cwd, variables)
    written = path is not None and (
        path in command.written_before
        or any(w.endswith("/") and path.startswith(w) for w in command.written_before)
    )
    return PolicyFile(form=form, given=given, path=path, written_by_line=written)


def _parse(args: list[str], with_value: frozenset[str]) -> _Parsed:
    """Split arguments into positionals, ``--option value`` lists and flags (up to ``--``)."""
    parsed = _Parsed()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if arg.startswith("--") and eq and (name in with_value or name in _GLOBAL_WITH_VALUE):
            parsed.options.setdefault(name, []).append(value)
        elif arg in with_value or arg in _GLOBAL_WITH_VALUE:
            if i + 1 < len(args):
                parsed.options.setdefault(arg, []).append(args[i + 1])
            i += 1
        elif re.fullmatch(r"-g.+", arg):
            parsed.options.setdefault("-g", []).append(arg[2:].lstrip("="))
        elif arg.startswith("-") and arg != "-":
            parsed.flags.add(arg)
        else:
            parsed.positionals.append(arg)
        i += 1
    return parsed


def _openshell_actions(command: SimpleCommand, variables: dict[str, str]) -> list[Action]:
    args = command.argv[1:]
    parsed = _parse(args, _SET_VALUES | _UPDATE_VALUES | _CREATE_VALUES)
    if parsed.flags & _HELP:
        return []
    path = parsed.positionals[:2]
    if path in (["policy", "set"], ["pol", "set"]):
        policies = _parse(args, _SET_VALUES).options.get("--policy")
        # Without --policy the CLI refuses `policy set`: nothing is applied.
        return [_policy_file("openshell policy set", p, command, variables) for p in policies or []]
    if path in (["sandbox", "create"], ["sb", "create"]):
        return _create_action(args, command, variables)
    if path in (["policy", "update"], ["pol", "update"]):
        update = _parse(args, _UPDATE_VALUES)
        if "--dry-run" in update.flags:
            return []
        return _update_actions(update)
    return []


def _create_action(args: list[str], command: SimpleCommand, variables: dict[str, str]) -> list[Any]:
    policies = _parse(args, _CREATE_VALUES).options.get("--policy")
    if policies:
        form = "openshell sandbox create --policy"
        return [_policy_file(form, policy, command, variables) for policy in policies]
    from_env = variables.get(POLICY_ENV)
    if from_env:
        form = f"openshell sandbox create ({POLICY_ENV})"
        return [_policy_file(form, from_env, command, variables)]
    return [
        Unverifiable(
            "openshell sandbox create",
            "the sandbox gets no policy file (no --policy and no OPENSHELL_SANDBOX_POLICY), so "
            "it runs with the image's or OpenShell's built-in policy, which the hook cannot "
            "check; pass --policy FILE",
        )
    ]


def _update_actions(update: _Parsed) -> list[Action]:
    lists = {attr: update.options.get(flag, []) for flag, attr in _UPDATE_LISTS.items()}
    if not lists["add_endpoints"] and not lists["add_allow"]:
        return []  # removals and deny rules only take access away
    rule_names = update.options.get("--rule-name", [])
    try:
        proposals = build_endpoint_proposals(
            lists["add_endpoints"], lists["binaries"], rule_names[-1] if rule_names else None
        )
        groups = group_allow_rules(lists["add_allow"])
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
