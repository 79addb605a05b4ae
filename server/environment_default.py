"""The server's default environment evidence (``policy-prover serve --environment FILE``).

A tool call that passes no ``environment`` argument uses this document; one that passes
an empty string uses none.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidatorFunctionWrapHandler, WithJsonSchema, WrapValidator

_default: str | None = None


def set_default_environment(text: str | None) -> None:
    global _default
    _default = text


def environment_for_call(argument: str | None) -> str | None:
    """The evidence text a call uses: its own argument, else the server's default."""
    if argument is None:
        return _default
    return argument or None


def _none_or_text(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return None if value is None else handler(value)


#: The tools' ``environment`` argument. Annotated as exactly ``str`` (with null admitted by
#: a wrap validator), because the SDK JSON-decodes string arguments of any other
#: annotation, which would turn a JSON evidence document into a mapping and reject it.
EnvironmentArgument = Annotated[
    str,
    WrapValidator(_none_or_text),
    WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
    Field(
        description="Image facts (YAML/JSON) that settle unresolved_* results, e.g. "
        "'version: 1\\nworkdir: /sandbox\\nsymlinks_complete_beneath: [/workspace]'; every "
        "field: policy-prover://reference/environment. Omitted: server default; '': none."
    ),
]
