"""Pydantic-free stand-ins of the schema's models, for policies the fast loader read.

:mod:`prover.policy.fast` builds these from a document it fully recognises; everything
else is validated by the pydantic schema (:mod:`prover.policy.schema`), which remains the
one definition of what is valid. Each record class has its model's name, fields (in the
same order), defaults and ``model_fields_set``, and the part of the pydantic surface the
check reads: attributes, ``==`` and ``hash`` (as pydantic's frozen models), ``repr``,
``model_dump`` (``mode``, ``include``, ``exclude``, ``exclude_none``), ``model_copy`` and
``model_construct``. ``tests/prover/policy/test_fast_loader.py`` holds the two
definitions together and compares the models of both loaders.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from typing import Any, ClassVar, Self

#: A field's default: a value, or a factory (``dict``) called for each record.
Default = object


class Record:
    """A frozen record of named fields with a pydantic model's reading surface."""

    #: ``(name, default)`` of every field, in the model's order.
    FIELDS: ClassVar[tuple[tuple[str, Default], ...]] = ()
    _NAMES: ClassVar[tuple[str, ...]] = ()
    _NAME_SET: ClassVar[frozenset[str]] = frozenset()
    #: The defaults that are values (shared: immutable), and the fields whose default
    #: is a new ``dict`` for each record.
    _VALUES: ClassVar[dict[str, object]] = {}
    _FRESH: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls) -> None:
        cls._NAMES = tuple(name for name, _ in cls.FIELDS)
        cls._NAME_SET = frozenset(cls._NAMES)
        cls._VALUES = {name: default for name, default in cls.FIELDS if default is not dict}
        cls._FRESH = tuple(name for name, default in cls.FIELDS if default is dict)

    def __init__(self, **values: object) -> None:
        if not values.keys() <= self._NAME_SET:
            unknown = sorted(set(values) - self._NAME_SET)
            raise TypeError(f"{type(self).__name__} has no field {unknown[0]!r}")
        state = self.__dict__
        state.update(self._VALUES)
        for name in self._FRESH:
            if name not in values:
                state[name] = {}
        state.update(values)
        state["_fields_set"] = frozenset(values)

    @classmethod
    def model_construct(cls, **values: object) -> Self:
        """A record of ``values`` and the defaults, unvalidated (as pydantic's)."""
        return cls(**values)

    @property
    def model_fields_set(self) -> set[str]:
        """The fields the document gave explicitly."""
        return set(self.__dict__["_fields_set"])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _values(self) -> Iterator[tuple[str, object]]:
        state = self.__dict__
        return ((name, state[name]) for name in self._NAMES)

    def __iter__(self) -> Iterator[tuple[str, object]]:
        return self._values()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return type(self) is type(other) and all(
            self.__dict__[name] == other.__dict__[name] for name in self._NAMES
        )

    def __hash__(self) -> int:
        values = tuple(value for _, value in self._values())
        return hash(values[0] if len(values) == 1 else values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in self._values())
        return f"{type(self).__name__}({inner})"

    def model_copy(self, *, update: Mapping[str, object] | None = None) -> Self:
        """A copy with ``update`` applied, unvalidated (as pydantic's ``model_copy``)."""
        copy = object.__new__(type(self))
        state = copy.__dict__
        state.update(self.__dict__)
        if update:
            state.update(update)
            state["_fields_set"] = self.__dict__["_fields_set"] | frozenset(update)
        return copy

    def model_dump(
        self,
        *,
        mode: str = "python",
        include: Collection[str] | None = None,
        exclude: Collection[str] | None = None,
        exclude_none: bool = False,
    ) -> dict[str, Any]:
        """The fields in order, nested records as dicts; ``mode="json"`` makes tuples
        lists. ``include``/``exclude`` name top-level fields; ``exclude_none`` applies
        at every level, as in pydantic."""
        result: dict[str, Any] = {}
        for name, value in self._values():
            if include is not None and name not in include:
                continue
            if exclude is not None and name in exclude:
                continue
            if exclude_none and value is None:
                continue
            result[name] = _dump(value, mode, exclude_none)
        return result


def _dump(value: object, mode: str, exclude_none: bool) -> object:
    if isinstance(value, Record):
        return value.model_dump(mode=mode, exclude_none=exclude_none)
    if isinstance(value, tuple):
        items = [_dump(item, mode, exclude_none) for item in value]
        return items if mode == "json" else tuple(items)
    if isinstance(value, list):
        return [_dump(item, mode, exclude_none) for item in value]
    if isinstance(value, dict):
        return {key: _dump(item, mode, exclude_none) for key, item in value.items()}
    return value


# -- the schema's models, field for field (prover/policy/schema.py) ----------------------


class FilesystemPolicySection(Record):
    FIELDS = (("include_workdir", None), ("read_only", ()), ("read_write", ()))


class LandlockSection(Record):
    FIELDS = (("compatibility", None),)


class ProcessSection(Record):
    FIELDS = (("run_as_user", None), ("run_as_group", None))


class QueryAny(Record):
    FIELDS = (("any", None),)


class QueryGlob(Record):
    FIELDS = (("glob", None),)


class L7Matcher(Record):
    FIELDS = (
        ("method", None),
        ("path", None),
        ("command", None),
        ("query", None),
        ("operation_type", None),
        ("operation_name", None),
        ("fields", None),
        ("tool", None),
        ("params", None),
    )


class L7AllowRule(Record):
    FIELDS = (("allow", None),)


class McpOptions(Record):
    FIELDS = (
        ("max_body_bytes", None),
        ("strict_tool_names", None),
        ("allow_all_known_mcp_methods", None),
        ("versions", None),
    )


class JsonRpcOptions(Record):
    FIELDS = (("max_body_bytes", None),)


class CredentialBinding(Record):
    FIELDS = (("provider", None),)


class GraphqlPersistedQuery(Record):
    FIELDS = (("operation_type", None), ("operation_name", None), ("fields", None))


class EndpointSection(Record):
    FIELDS = (
        ("host", None),
        ("port", None),
        ("ports", ()),
        ("path", None),
        ("allowed_ips", ()),
        ("protocol", None),
        ("tls", None),
        ("enforcement", None),
        ("access", None),
        ("rules", ()),
        ("deny_rules", ()),
        ("allow_encoded_slash", None),
        ("allow_uninspected_credentials", None),
        ("websocket_credential_rewrite", None),
        ("request_body_credential_rewrite", None),
        ("credential_signing", None),
        ("signing_service", None),
        ("signing_region", None),
        ("credential_binding", None),
        ("persisted_queries", None),
        ("graphql_persisted_queries", None),
        ("graphql_max_body_bytes", None),
        ("json_rpc", None),
        ("mcp", None),
    )


class BinarySection(Record):
    FIELDS = (("path", None),)


class NetworkRuleSection(Record):
    FIELDS = (("name", None), ("endpoints", ()), ("binaries", ()))


class MiddlewareEndpoints(Record):
    FIELDS = (("include", ()), ("exclude", ()))


class MiddlewareSection(Record):
    FIELDS = (
        ("name", None),
        ("middleware", None),
        ("order", None),
        ("config", None),
        ("on_error", None),
        ("endpoints", None),
    )


class InferenceSection(Record):
    FIELDS = (("allowed_routes", ()), ("allowed_routing_hints", ()))


class AuthoredPolicy(Record):
    FIELDS = (
        ("version", None),
        ("cedar_policy", None),
        ("filesystem_policy", None),
        ("landlock", None),
        ("process", None),
        ("network_policies", dict),
        ("network_middlewares", dict),
        ("inference", None),
    )


#: Every record class by name (the schema's model of the same name is its definition).
RECORDS: dict[str, type[Record]] = {
    cls.__name__: cls
    for cls in (
        FilesystemPolicySection,
        LandlockSection,
        ProcessSection,
        QueryAny,
        QueryGlob,
        L7Matcher,
        L7AllowRule,
        McpOptions,
        JsonRpcOptions,
        CredentialBinding,
        GraphqlPersistedQuery,
        EndpointSection,
        BinarySection,
        NetworkRuleSection,
        MiddlewareEndpoints,
        MiddlewareSection,
        InferenceSection,
        AuthoredPolicy,
    )
}
