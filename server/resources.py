"""MCP resources: the policy JSON Schema, the result catalogue, the environment document's
format and the example policies."""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from server.catalogue import catalogue
from server.examples import boundary_example, example, examples

SCHEMA_URI = "policy-prover://schema/policy"
RESULTS_URI = "policy-prover://reference/results"
EXAMPLES_URI = "policy-prover://examples"
ENVIRONMENT_URI = "policy-prover://reference/environment"
EXAMPLE_URI_TEMPLATE = "policy-prover://examples/{name}"


def example_uri(name: str) -> str:
    return EXAMPLE_URI_TEMPLATE.format(name=name)


def policy_schema() -> str:
    # Imported on first read: the schema module is part of the core, loaded only if asked.
    from prover.policy.model import PRESET_METHODS
    from prover.policy.schema import policy_json_schema
    from prover.proposal.credentials import CredentialSet

    schema = policy_json_schema()
    schema["x-policy-prover"] = {
        "access_presets": {
            name: ["every method"] if methods == ("*",) else list(methods)
            for name, methods in PRESET_METHODS.items()
        },
        "credentials": {
            "description": "assess_proposal's `credentials` argument: a list of credentials "
            "(or {credentials: [...]}). `type` is free text (e.g. api_key, oauth_token, "
            "github_token); only `target_hosts` (host patterns, every port) decides findings.",
            "schema": CredentialSet.model_json_schema(),
        },
        "grant_units": "How much access a policy grants, as explain counts it: per network "
        "rule, its binaries (at least 1) x the sum over its endpoints of ports x allow "
        "rules (an access preset or L4 endpoint counts as 1); plus 1 per read_only and 2 "
        "per read_write path.",
        "environment": {
            "description": "The tools' `environment` argument: facts about the sandbox "
            "image that let the prover decide what depends on it (`policy-prover "
            "environment --rootfs DIR | --image TAR` writes it). workdir: the image's "
            "working directory (include_workdir). user, group: the image's default "
            "identity; users, groups: name -> number (run_as_user names). symlinks: "
            "absolute path -> target, every symlink the image has beneath each path of "
            "symlinks_complete_beneath (so paths and binaries beneath them compare by "
            "prefix: e.g. a read_write entry /workspace/src/pkg inside /workspace/src). "
            "paths_exist: path -> whether the image has it (baseline paths, best_effort "
            "rulesets). gpu: whether the sandbox has a GPU. driver: docker, podman, "
            "kubernetes, openshift or vm. primary_gids: user -> primary gid.",
            "example": {
                "version": 1,
                "workdir": "/sandbox",
                "users": {"sandbox": 1000},
                "symlinks": {"/usr/bin/python3": "/usr/bin/python3.12"},
                "symlinks_complete_beneath": ["/usr/bin", "/workspace"],
            },
        },
        "boundary": "check_boundary and explain_counterexample: the most the candidate may "
        "get (your own policy when vetting a subagent's, else the environment's maximum "
        "policy); assess_proposal: the environment's maximum policy.",
    }
    return json.dumps(schema, indent=2)


#: The environment document in a few lines (prover/environment/document.py reads it):
#: the one small resource an agent may need beside tools/list.
ENVIRONMENT_GUIDE = """\
The `environment` argument: facts about the sandbox image, YAML or JSON. They let the
prover decide what depends on the image (unresolved_workdir, unresolved_filesystem_path,
unresolved_binary_path, named process identities) instead of answering unsupported.
Omitted: the server's default (policy-prover serve --environment FILE); "": none.
`policy-prover environment --rootfs DIR | --image TAR` writes it from the image.

Minimal example (no symlink at or beneath /workspace, so paths there compare by prefix):

    version: 1
    workdir: /sandbox
    symlinks_complete_beneath: [/workspace]

Every field (all optional except version; unknown fields are errors):

    version: 1
    workdir: /sandbox                 # the image's working directory (include_workdir)
    user: sandbox                     # the image's USER (run_as_user omitted)
    group: sandbox                    # the image's group (run_as_group omitted)
    users:  {root: 0, sandbox: 1000}  # name -> uid, from /etc/passwd
    groups: {root: 0, sandbox: 1000}  # name -> gid, from /etc/group
    symlinks: {/bin: usr/bin}         # every symlink beneath the paths below: path -> target
    symlinks_complete_beneath: [/usr/bin, /workspace]   # no other symlink at or beneath
    paths_exist: {/tmp: true, /app: false}  # paths the image has (the runtime adds
                                      # baseline paths, and best_effort keeps a ruleset,
                                      # only where they exist)
    gpu: false                        # whether the sandbox has a GPU (adds GPU paths)
    driver: docker                    # docker|podman|kubernetes|openshift|vm: how an
                                      # omitted identity is resolved
    primary_gids: {sandbox: 1000}     # user -> primary gid (/etc/passwd): the group of
                                      # an omitted run_as_group

Paths are absolute and canonical (no //, . or .. segment, no trailing /). The result's
receipt lists the facts the verdict relies on (assumptions): claim only what is true of
the image, since a wrong fact can make a verdict wrong.
"""


def environment_guide() -> str:
    return ENVIRONMENT_GUIDE


def result_catalogue() -> str:
    return json.dumps(catalogue(), indent=2)


def example_index() -> str:
    return json.dumps(
        {
            "boundary": boundary_example().name,
            "examples": [
                {
                    "name": e.name,
                    "uri": example_uri(e.name),
                    "role": e.role,
                    "description": e.description,
                    "expect": e.expect,
                }
                for e in examples()
            ],
        },
        indent=2,
    )


def example_policy(name: str) -> str:
    found = example(name)
    if found is None:
        raise ResourceNotFoundError(f"no example policy named {name!r}; see {EXAMPLES_URI}")
    return found.text


def register_resources(server: MCPServer) -> None:
    server.resource(
        SCHEMA_URI,
        name="policy-schema",
        title="Sandbox policy JSON Schema",
        description="JSON Schema of the authored OpenShell sandbox policy (version 1) that "
        "check_boundary accepts as candidate and boundary.",
        mime_type="application/schema+json",
    )(policy_schema)
    server.resource(
        RESULTS_URI,
        name="result-catalogue",
        title="Result values and reason codes",
        description="Every result value and reason_code of a check: what it means and what "
        "to do about it. Only within_boundary passes.",
        mime_type="application/json",
    )(result_catalogue)
    server.resource(
        ENVIRONMENT_URI,
        name="environment-format",
        title="The environment argument's format",
        description="The environment evidence document: a minimal example and every field.",
        mime_type="text/plain",
    )(environment_guide)
    server.resource(
        EXAMPLES_URI,
        name="example-policies",
        title="Example policies",
        description="Index of the bundled example policies: one boundary and candidates "
        "with the result each gets against it.",
        mime_type="application/json",
    )(example_index)
    server.resource(
        EXAMPLE_URI_TEMPLATE,
        name="example-policy",
        title="Example policy",
        description="One bundled example policy (YAML) by name; names are listed in "
        f"{EXAMPLES_URI}.",
        mime_type="application/yaml",
    )(example_policy)
