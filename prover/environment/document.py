"""The environment evidence document: facts about the sandbox image, read strictly.

A YAML or JSON mapping with a closed set of keys (an unknown or misspelt key is an error
naming it), read by the same strict reader as policies (size, depth and node limits, no
duplicate or merge keys)::

    version: 1
    workdir: /sandbox                 # the image's working directory
    user: sandbox                     # the image's USER (run_as_user omitted)
    group: sandbox                    # the image's group (run_as_group omitted); optional
    users:  {root: 0, sandbox: 1000}  # name -> uid, from /etc/passwd
    groups: {root: 0, sandbox: 1000}  # name -> gid, from /etc/group
    symlinks: {/bin: usr/bin}         # physical link path -> target as stored
    symlinks_complete_beneath: [/]    # no other symlink exists at or beneath these
    paths_exist: {/app: false, /tmp: true}  # whether a path exists in the image
    gpu: false                        # whether the sandbox has a GPU (adds GPU paths)
    driver: docker                    # docker, podman, kubernetes, openshift or vm
    primary_gids: {sandbox: 1000}     # user name -> primary gid, from /etc/passwd

Every path is absolute and canonical (no ``//``, ``.``/``..`` segment or trailing ``/``)
and names the physical location: none of its ancestors is a symlink.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
)

from prover.errors import PolicyLoadError, ProverError
from prover.policy.messages import describe_errors

MAX_ID = 4_294_967_294
MAX_SYMLINKS = 10_000
MAX_NAMES = 10_000
MAX_TARGET_CHARS = 4096


class EnvironmentLoadError(ProverError):
    """An environment document could not be read; the message names the field."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def __str__(self) -> str:
        return self.message


def path_problem(path: str) -> str | None:
    """Why ``path`` is not an absolute canonical path, or None."""
    if not path.startswith("/"):
        return "must be an absolute path"
    if "\x00" in path:
        return "contains a NUL byte"
    if path == "/":
        return None
    if path.endswith("/") or "//" in path:
        return "must be canonical (no '//' and no trailing '/')"
    if any(seg in (".", "..") for seg in path.split("/")):
        return "must not contain '.' or '..' segments"
    return None


#: The compute drivers, by how they resolve an omitted identity
#: (``openshell-supervisor-process/src/identity.rs``, ``DriverIdentity``).
Driver = Literal["docker", "podman", "kubernetes", "openshift", "vm"]
Id = Annotated[StrictInt, Field(ge=0, le=MAX_ID)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=256)]


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    workdir: StrictStr | None = None
    user: Name | None = None
    group: Name | None = None
    users: dict[Name, Id] = Field(default_factory=dict, max_length=MAX_NAMES)
    groups: dict[Name, Id] = Field(default_factory=dict, max_length=MAX_NAMES)
    symlinks: dict[StrictStr, Annotated[StrictStr, Field(min_length=1)]] = Field(
        default_factory=dict, max_length=MAX_SYMLINKS
    )
    symlinks_complete_beneath: list[StrictStr] = Field(
        default_factory=list, max_length=MAX_SYMLINKS
    )
    paths_exist: dict[StrictStr, StrictBool] = Field(default_factory=dict, max_length=MAX_NAMES)
    gpu: StrictBool | None = None
    driver: Driver | None = None
    primary_gids: dict[Name, Id] = Field(default_factory=dict, max_length=MAX_NAMES)


@dataclass(frozen=True)
class Environment:
    """Validated evidence; ``sha256`` is the SHA-256 of the document's bytes."""

    sha256: str
    workdir: str | None = None
    user: str | None = None
    group: str | None = None
    users: dict[str, int] = field(default_factory=dict)
    groups: dict[str, int] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)
    complete_beneath: tuple[str, ...] = ()
    paths_exist: dict[str, bool] = field(default_factory=dict)
    gpu: bool | None = None
    driver: str | None = None
    primary_gids: dict[str, int] = field(default_factory=dict)


#: Entries checked between two calls of the reader's checkpoint.
CHECKPOINT_EVERY = 512


def _semantic_problem(
    doc: _Document, checkpoint: Callable[[], None] | None = None
) -> tuple[str, str] | None:
    """The first (message, field) problem pydantic's types cannot express."""
    if doc.workdir is not None:
        problem = path_problem(doc.workdir)
        if problem:
            return f"field 'workdir' {problem} (got {doc.workdir!r})", "workdir"
    for key in ("user", "group"):
        value = getattr(doc, key)
        if value is not None and ("\x00" in value or ":" in value):
            return f"field '{key}' must be a name or a decimal id (got {value!r})", key
    for index, (link, target) in enumerate(doc.symlinks.items()):
        if checkpoint is not None and index % CHECKPOINT_EVERY == 0:
            checkpoint()
        problem = path_problem(link)
        if problem or link == "/":
            why = problem or "must not be '/'"
            return f"field 'symlinks' key {why} (got {link!r})", f"symlinks.{link}"
        if "\x00" in target or len(target) > MAX_TARGET_CHARS:
            return f"field 'symlinks.{link}' must be a link target", f"symlinks.{link}"
    for path in doc.paths_exist:
        problem = path_problem(path)
        if problem:
            return f"field 'paths_exist' key {problem} (got {path!r})", f"paths_exist.{path}"
    for index, path in enumerate(doc.symlinks_complete_beneath):
        if checkpoint is not None and index % CHECKPOINT_EVERY == 0:
            checkpoint()
        problem = path_problem(path)
        if problem:
            where = f"symlinks_complete_beneath[{index}]"
            return f"field '{where}' {problem} (got {path!r})", where
    return None


def _decode(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text


def load_environment(
    text: str | bytes, checkpoint: Callable[[], None] | None = None
) -> Environment:
    """Read an environment document; every problem is an ``EnvironmentLoadError``.

    ``checkpoint`` (a check's budget) is called while reading and checking it, as for
    policies: a document of 10,000 symlinks takes a few hundred milliseconds to read.
    """
    from prover.policy.reader import read_policy_data

    try:
        data = read_policy_data(text, checkpoint)
    except PolicyLoadError as exc:
        message = str(exc).replace("policy", "environment document")
        raise EnvironmentLoadError(f"invalid environment: {message}", exc.path) from None
    try:
        doc = _Document.model_validate(data)
    except ValidationError as error:
        message, path = describe_errors(error.errors(include_url=False))
        message = message.replace("authored policy", "environment document")
        raise EnvironmentLoadError(f"invalid environment: {message}", path) from None
    if checkpoint is not None:
        checkpoint()
    problem = _semantic_problem(doc, checkpoint)
    if problem is not None:
        raise EnvironmentLoadError(f"invalid environment: {problem[0]}", problem[1])
    return Environment(
        sha256=hashlib.sha256(_decode(text)).hexdigest(),
        workdir=doc.workdir,
        user=doc.user,
        group=doc.group,
        users=dict(doc.users),
        groups=dict(doc.groups),
        symlinks=dict(doc.symlinks),
        complete_beneath=tuple(doc.symlinks_complete_beneath),
        paths_exist=dict(doc.paths_exist),
        gpu=doc.gpu,
        driver=doc.driver,
        primary_gids=dict(doc.primary_gids),
    )
