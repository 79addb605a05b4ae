"""The symbolic network action of spec §9.1, its domain, and decoding a model into a
concrete :class:`~prover.policy.model.NetworkAction`.

Fields: ``binary``/``ancestor_binary`` (identity mode only), ``host`` (unconstrained: the
runtime applies host globs to raw input), ``port`` (1..65535), ``is_rest`` (the layer),
``method`` (non-empty), ``path`` (a normalised absolute path), the destination IP (128
bits + family flag), ``trusted_gateway`` and the query classes of §9.5.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, field

import z3

from prover.encode.globs import GlobCompiler
from prover.encode.ip import IpTerms, SymbolicIp
from prover.encode.query import QuerySpace
from prover.policy.model import NetworkAction, Policy

MAX_PATH_LENGTH = 4096
MAX_BINARY_LENGTH = 4096


class WitnessDecodeError(ValueError):
    """A model value that cannot be read back as the exact concrete value."""


@dataclass(frozen=True)
class SymbolicAction:
    """One symbolic request or connection, all terms in ``ctx``."""

    ctx: z3.Context
    globs: GlobCompiler
    identity: bool
    binary: z3.SeqRef
    ancestor_binary: z3.SeqRef
    host: z3.SeqRef
    port: z3.ArithRef
    is_rest: z3.BoolRef
    method: z3.SeqRef
    path: z3.SeqRef
    ip: SymbolicIp
    trusted_gateway: z3.BoolRef
    query: QuerySpace
    engine: bool = False
    """Requests as OpenShell's engine reads them (``Policy.engine_requests``): a
    request method is compared upper-cased, so witnesses name upper-case methods."""
    ip_terms: IpTerms = field(init=False)
    shared_ip_terms: InitVar[IpTerms | None] = None

    def __post_init__(self, shared_ip_terms: IpTerms | None) -> None:
        terms = shared_ip_terms if shared_ip_terms is not None else IpTerms(self.ip, self.port)
        object.__setattr__(self, "ip_terms", terms)


def new_action(
    ctx: z3.Context,
    policies: Iterable[Policy],
    *,
    identity: bool,
    globs: GlobCompiler | None = None,
    name: str = "action",
    like: SymbolicAction | None = None,
) -> SymbolicAction:
    """A fresh symbolic action whose query classes cover every key of ``policies``.

    ``like`` (an action of the same context, for another solver: the other identity
    mode of one check) lends its glob compiler, port and address with their fixed
    predicates, which are the same in every mode and cost a millisecond or two to
    build; the string, query and remaining fields are fresh."""
    prefix = f"{name}_{'strict' if identity else 'relaxed'}"
    policies = tuple(policies)
    engine = bool(policies) and all(policy.engine_requests for policy in policies)
    if like is not None:
        return SymbolicAction(
            ctx=ctx,
            globs=like.globs,
            identity=identity,
            binary=z3.String(f"{prefix}_binary", ctx),
            ancestor_binary=z3.String(f"{prefix}_ancestor_binary", ctx),
            host=z3.String(f"{prefix}_host", ctx),
            port=like.port,
            is_rest=z3.Bool(f"{prefix}_is_rest", ctx),
            method=z3.String(f"{prefix}_method", ctx),
            path=z3.String(f"{prefix}_path", ctx),
            ip=like.ip,
            trusted_gateway=z3.Bool(f"{prefix}_trusted_gateway", ctx),
            query=QuerySpace(policies, prefix, ctx),
            engine=engine,
            shared_ip_terms=like.ip_terms,
        )
    return SymbolicAction(
        ctx=ctx,
        globs=globs or GlobCompiler(ctx),
        identity=identity,
        binary=z3.String(f"{prefix}_binary", ctx),
        ancestor_binary=z3.String(f"{prefix}_ancestor_binary", ctx),
        host=z3.String(f"{prefix}_host", ctx),
        port=z3.Int(f"{prefix}_port", ctx),
        is_rest=z3.Bool(f"{prefix}_is_rest", ctx),
        method=z3.String(f"{prefix}_method", ctx),
        path=z3.String(f"{prefix}_path", ctx),
        ip=SymbolicIp.fresh(prefix, ctx),
        trusted_gateway=z3.Bool(f"{prefix}_trusted_gateway", ctx),
        query=QuerySpace(policies, prefix, ctx),
        engine=engine,
    )


def string_subject(action: SymbolicAction, name: str) -> z3.SeqRef:
    terms = {
        "host": action.host,
        "method": action.method,
        "path": action.path,
        "binary": action.binary,
        "ancestor": action.ancestor_binary,
    }
    return terms[name]


def domain_regexes(action: SymbolicAction) -> dict[str, z3.ReRef]:
    """Per string field, the regex part of its domain (lengths aside)."""
    regexes = {
        "method": z3.Plus(action.globs.any_char),
        # Starts with "/", none of "//", "/./", "/../", ";", "?", "#", does not end in
        # "/." or "/.." (the reference's constraints, as one equivalent regex).
        "path": action.globs.normalized_path(action.globs.chars_except("/;?#")),
    }
    if action.identity:
        regexes["binary"] = regexes["ancestor"] = action.globs.path("/**")
    return regexes


DOMAIN_LENGTHS = {
    "path": MAX_PATH_LENGTH,
    "binary": MAX_BINARY_LENGTH,
    "ancestor": MAX_BINARY_LENGTH,
}


def scalar_domain(action: SymbolicAction) -> dict[str, list[z3.BoolRef]]:
    """The constraints of :func:`domain_by_subject` on the non-string fields only (the
    main query mentions no string, so it needs no string languages built)."""
    return {
        "ip": [action.ip.domain()],
        "port": [action.port >= 1, action.port <= 65535],
    }


def domain_by_subject(action: SymbolicAction) -> dict[str, list[z3.BoolRef]]:
    """The constraints every concrete action satisfies (spec §9.1), per field."""
    domain = scalar_domain(action)
    for name, regex in domain_regexes(action).items():
        term = string_subject(action, name)
        domain[name] = [z3.InRe(term, regex)]
        if name in DOMAIN_LENGTHS:
            domain[name].append(z3.Length(term) <= DOMAIN_LENGTHS[name])
    return domain


def action_domain(action: SymbolicAction) -> list[z3.BoolRef]:
    """The constraints every concrete action satisfies (spec §9.1)."""
    return [c for constraints in domain_by_subject(action).values() for c in constraints]


# ---------------------------------------------------------------------------------------
# Decoding


def string_value(text: str, ctx: z3.Context) -> z3.SeqRef | None:
    """``text`` as a Z3 string constant, or ``None`` when Z3 would read it differently
    (``StringVal`` interprets escapes such as ``\\u{41}``)."""
    if "\\" in text:
        return None
    value = z3.StringVal(text, ctx)
    return value if value.as_string() == text else None


def exact_string(model: z3.ModelRef, term: z3.SeqRef) -> str:
    """The model's value of ``term``, only if it reads back as exactly the same value."""
    value = model.eval(term, model_completion=True)
    if not z3.is_string_value(value):
        raise WitnessDecodeError(f"{term} has no concrete string value")
    decoded = value.as_string()
    # The binding prints characters it cannot show as "\u{..}" text, and StringVal
    # reads such text back as the character: a backslash can never be trusted (no
    # canonical witness contains one).
    if "\\" in decoded:
        raise WitnessDecodeError(f"{term} has a value with escapes")
    same = z3.simplify(value == z3.StringVal(decoded, term.ctx))
    if not z3.is_true(same):
        raise WitnessDecodeError(f"{term} does not round-trip exactly")
    return decoded


def decode_action(
    model: z3.ModelRef, action: SymbolicAction, strings: Mapping[str, str] | None = None
) -> NetworkAction:
    """Read a concrete action out of ``model`` (no canonicality checks here); string
    fields named in ``strings`` take those values instead of the model's."""

    def text(name: str) -> str:
        if strings is not None and name in strings:
            return strings[name]
        return exact_string(model, string_subject(action, name))

    port_value = model.eval(action.port, model_completion=True)
    if not isinstance(port_value, z3.IntNumRef):
        raise WitnessDecodeError("port has no concrete value")
    port = port_value.as_long()
    if not 1 <= port <= 65535:
        raise WitnessDecodeError(f"port {port} is out of range")
    rest = z3.is_true(model.eval(action.is_rest, model_completion=True))
    binary = ancestor = None
    if action.identity:
        binary = text("binary")
        ancestor = text("ancestor")
    try:
        destination = action.ip.decode(model)
    except ValueError as exc:
        raise WitnessDecodeError(str(exc)) from exc
    return NetworkAction(
        host=text("host"),
        port=port,
        destination_ip=destination,
        protocol="rest" if rest else "l4",
        method=text("method") if rest else None,
        path=text("path") if rest else None,
        query=action.query.decode(model) if rest else (),
        binary=binary,
        ancestor_binary=ancestor,
        binary_identity_required=action.identity,
        trusted_gateway=z3.is_true(model.eval(action.trusted_gateway, model_completion=True)),
    )
