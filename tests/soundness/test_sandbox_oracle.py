"""The independent oracle's rules, one table row per runtime fact.

Rows marked ``validate`` / ``decide`` record what OpenShell's own validator and engine
(built from ``2f7fb65``, see /work/shared/tools/openshell) answered for the same input;
the others follow the cited function directly. The oracle must not import ``prover``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.soundness.sandbox_oracle import Image, World, build_sandbox
from tests.soundness.sandbox_oracle.filesystem import effective_lists
from tests.soundness.sandbox_oracle.judge import first_excess, judge
from tests.soundness.sandbox_oracle.network import Request
from tests.soundness.sandbox_oracle.policy import parse_policy

ORACLE = Path(__file__).parent / "sandbox_oracle"

BASE = Image(
    files=frozenset({"/usr/bin/curl", "/usr/bin/python3.11", "/etc/passwd", "/dev/urandom"}),
    dirs=frozenset({"/usr/lib", "/lib", "/etc", "/app", "/var/log", "/proc", "/tmp", "/sandbox"}),
    symlinks={"/bin": "usr/bin", "/usr/bin/python3": "python3.11", "/usr/bin/py": "python3"},
    passwd={"root": (0, 0), "sandbox": (1000, 100), "agent": (1001, 1001)},
    groups={"root": 0, "users": 100, "sandbox": 1000, "agent": 1001},
    user="sandbox",
    workdir="/sandbox",
)


def image(**changes: object) -> Image:
    fields = {k: getattr(BASE, k) for k in BASE.__dataclass_fields__}
    return Image(**{**fields, **changes})  # type: ignore[arg-type]


def test_the_oracle_imports_nothing_from_the_prover() -> None:
    for source in ORACLE.glob("*.py"):
        tree = ast.parse(source.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] != "prover", f"{source.name} imports {name}"


# -- which policies run (parse_sandbox_policy, validate_sandbox_policy, ambiguity) ----------

REFUSED = [
    # validate: parse error "unknown field `inference`" (PolicyFile deny_unknown_fields)
    ("version: 1\ninference: {}\n", "unknown field `inference`"),
    ("version: 1\nfilesystem_policy: {read_only: [/usr], extra: 1}\n", "unknown field `extra`"),
    ("filesystem_policy: {}\n", "missing field `version`"),
    # is_valid_sandbox_identity
    ("version: 1\nprocess: {run_as_user: root}\n", "run_as_user"),
    ("version: 1\nprocess: {run_as_group: '0'}\n", "run_as_group"),
    ("version: 1\nprocess: {run_as_user: agent}\n", "run_as_user"),
    # filesystem paths
    ("version: 1\nfilesystem_policy: {read_write: [/]}\n", "overly broad"),
    ("version: 1\nfilesystem_policy: {read_only: [tmp]}\n", "absolute"),
    ("version: 1\nfilesystem_policy: {read_only: [/tmp/../etc]}\n", "traversal"),
]
NET = "version: 1\nnetwork_policies:\n  p:\n    binaries: [{path: /usr/bin/curl}]\n    endpoints:\n"
REFUSED += [
    (NET + "      - {host: '*.com', port: 443}\n", "TLD wildcard"),
    (NET + "      - {host: '*', port: 443}\n", "invalid host wildcard"),
    (NET + "      - {host: a.example.com, ports: [0]}\n", "invalid port 0"),
    (NET + "      - {host: a.example.com}\n", "at least one port"),
    (NET + "      - {host: a.example.com, port: 443, protocol: rest}\n", "rules or access"),
    (
        NET + "      - {host: a.example.com, port: 443, protocol: https, access: full}\n",
        "unknown protocol",
    ),
    (NET + "      - {host: 10.0.0.1, port: 443, protocol: tcp}\n", "DNS hostname"),
    # find_endpoint_ambiguities: overlapping selectors, one explicit tcp
    (
        NET + "      - {host: a.example.com, port: 443, protocol: tcp}\n"
        "      - {host: '*.example.com', port: 443}\n",
        "transparent_tcp_eligible",
    ),
]


@pytest.mark.parametrize(("text", "reason"), REFUSED)
def test_the_runtime_refuses(text: str, reason: str) -> None:
    sandbox = build_sandbox(text, BASE)
    assert not sandbox.runs
    assert reason in " ".join(sandbox.refused)


def test_a_refused_candidate_judged_within_is_unsound() -> None:
    findings = judge(
        "version: 1\ninference: {}\n", "version: 1\n", BASE, {"verdict": "within_boundary"}
    )
    assert [(f.kind, f.domain) for f in findings] == [("unsound", "validation")]


def test_accepted_as_mainline_accepts() -> None:
    # spec README: `landlock.compatibility: strict`, a numeric run_as_user, explicit nulls.
    text = (
        "version: 1\nlandlock: {compatibility: strict}\nprocess: {run_as_user: 1001}\n"
        "network_policies: null\n"
    )
    assert build_sandbox(text, BASE).runs


# -- filesystem: enrichment and Landlock --------------------------------------------------

PROXY = "network_policies: {p0: {}}\n"
HARD = "landlock: {compatibility: hard_requirement}\n"
FS_ROWS = [
    # validate a.yaml: an empty section, include_workdir false -> no Landlock at all
    ("version: 1\nfilesystem_policy: {}\n", {}, ([], [])),
    # validate b.yaml: no section -> FilesystemPolicy::default() (include_workdir true)
    ("version: 1\n", {}, ([], ["/sandbox"])),
    # validate c.yaml (--missing /app --missing /lib): proxy baseline, missing paths skipped
    (
        "version: 1\n" + PROXY,
        {
            "dirs": frozenset({"/etc", "/var/log", "/proc", "/tmp", "/sandbox", "/usr"}),
            "workdir": None,
        },
        (["/usr", "/etc", "/var/log", "/proc", "/dev/urandom"], ["/tmp"]),
    ),
    # validate d.yaml: `/tmp/` listed read-only is not the string `/tmp`: /tmp rw added
    (
        "version: 1\nfilesystem_policy: {read_only: [/tmp/], include_workdir: false}\n" + PROXY,
        {},
        (["/tmp", "/usr", "/lib", "/etc", "/app", "/var/log", "/proc", "/dev/urandom"], ["/tmp"]),
    ),
    # enrich_proto_baseline_paths_with: /tmp listed read-only -> the rw baseline is skipped
    (
        "version: 1\nfilesystem_policy: {read_only: [/tmp]}\n" + PROXY,
        {},
        (["/tmp", "/usr", "/lib", "/etc", "/app", "/var/log", "/proc", "/dev/urandom"], []),
    ),
    # validate e.yaml (--gpu): GPU paths, /proc promoted from read-only to read-write
    (
        "version: 1\nfilesystem_policy: {read_only: [/proc, /tmp]}\n" + PROXY,
        {
            "files": BASE.files
            | {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia-modeset"},
            "dirs": BASE.dirs | {"/run/nvidia-persistenced"},
        },
        (
            [
                "/tmp",
                "/usr",
                "/lib",
                "/etc",
                "/app",
                "/var/log",
                "/dev/urandom",
                "/run/nvidia-persistenced",
            ],
            ["/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-modeset", "/proc", "/dev/nvidia0"],
        ),
    ),
]


GPU = {"files": BASE.files | {"/dev/nvidiactl", "/dev/nvidia-uvm"}}
FS_ROWS += [
    # validate a.yaml --gpu: GPU enrichment needs no network rule; an empty section
    # (Landlock off without a GPU) gets a ruleset of the GPU paths alone.
    (
        "version: 1\nfilesystem_policy: {}\n",
        GPU,
        ([], ["/dev/nvidiactl", "/dev/nvidia-uvm", "/proc"]),
    ),
]


@pytest.mark.parametrize(("text", "changes", "expected"), FS_ROWS)
def test_effective_filesystem_lists(text: str, changes: dict, expected: tuple) -> None:
    read_only, read_write, _ = effective_lists(parse_policy(text), image(**changes))
    assert (read_only, read_write) == expected


def test_landlock_off_allows_any_write() -> None:
    sandbox = build_sandbox("version: 1\nfilesystem_policy: {include_workdir: false}\n", BASE)
    assert sandbox.allows_file("write", "/etc/passwd")
    on = build_sandbox("version: 1\nfilesystem_policy: {read_only: [/usr, /etc]}\n", BASE)
    assert on.allows_file("read", "/etc/passwd") and not on.allows_file("write", "/etc/passwd")


def test_a_rule_on_a_symlink_binds_its_target() -> None:
    # PathFd::new follows the link: read_only /bin is read access to /usr/bin.
    sandbox = build_sandbox("version: 1\nfilesystem_policy: {read_only: [/bin]}\n", BASE)
    assert sandbox.allows_file("read", "/usr/bin/curl")
    assert not sandbox.allows_file("read", "/etc/passwd")


def test_hard_requirement_with_a_missing_path_does_not_start() -> None:
    text = "version: 1\nfilesystem_policy: {read_only: [/data]}\n" + HARD
    assert build_sandbox(text, BASE).aborted
    # Best effort skips it; with no path left to open the ruleset is abandoned:
    # the sandbox runs without Landlock.
    best = build_sandbox(text.replace("hard_requirement", "best_effort"), BASE)
    assert best.runs and best.allows_file("write", "/etc/passwd")
    some = build_sandbox(
        text.replace("hard_requirement", "best_effort").replace("/data", "/data, /usr"), BASE
    )
    assert some.allows_file("read", "/usr/bin/curl") and not some.allows_file("read", "/etc/passwd")


def test_without_landlock_in_the_kernel() -> None:
    text = "version: 1\nfilesystem_policy: {read_only: [/usr]}\n"
    assert build_sandbox(text, BASE, World(kernel_landlock=False)).allows_file("write", "/etc/x")
    hard = text + "landlock: {compatibility: hard_requirement}\n"
    assert build_sandbox(hard, BASE, World(kernel_landlock=False)).aborted


def test_the_issue_example_is_unsound_within() -> None:
    # issue 22: Landlock off for a candidate with both lists empty.
    cand = "version: 1\nfilesystem_policy: {include_workdir: false}\n" + HARD
    bound = "version: 1\nfilesystem_policy: {read_only: [/usr, /etc]}\n"
    excess = first_excess(cand, bound, BASE)
    assert excess is not None and excess.domain == "filesystem"


# -- identity ------------------------------------------------------------------------------

IDENTITY_ROWS = [
    # resolve_oci_process_identity_at: omitted group -> USER's primary gid from /etc/passwd
    ("version: 1\n", {}, (1000, 100)),
    ("version: 1\n", {"user": "sandbox:agent"}, (1000, 1001)),
    ("version: 1\nprocess: {run_as_user: '1001'}\n", {}, (1001, 100)),
    ("version: 1\nprocess: {run_as_group: sandbox}\n", {}, (1000, 1000)),
    # u32 parsing takes a leading '+' (is_valid_sandbox_identity, drop_privileges)
    ("version: 1\nprocess: {run_as_user: '+1001', run_as_group: '+7'}\n", {}, (1001, 7)),
    # DriverIdentity::Resolved overwrites both fields
    ("version: 1\nprocess: {run_as_user: '1001'}\n", {"driver": "kubernetes"}, (1000, 1000)),
    # DriverIdentity::None: `sandbox`, names through /etc/passwd and /etc/group
    ("version: 1\n", {"driver": "vm"}, (1000, 1000)),
]


@pytest.mark.parametrize(("text", "changes", "expected"), IDENTITY_ROWS)
def test_identity(text: str, changes: dict, expected: tuple[int, int]) -> None:
    img = image(**{"driver_ids": (1000, 1000), **changes})
    assert build_sandbox(text, img).identity == expected


def test_an_oci_user_root_does_not_start() -> None:
    assert build_sandbox("version: 1\n", image(user="root")).aborted


# -- binaries and network ------------------------------------------------------------------

DECIDE = (
    NET.replace("[{path: /usr/bin/curl}]", "[{path: /usr/bin/curl}, {path: '/usr/lib/*'}]")
    + "      - host: api.example.com\n        port: 443\n        protocol: rest\n"
    "        enforcement: enforce\n        rules:\n"
    "          - allow: {method: get, path: '/repos/**'}\n          - allow: {method: POST}\n"
    "        deny_rules:\n          - {method: '*'}\n"
    "          - {method: GET, path: /repos/secret, query: {q: 'x*'}}\n"
    "      - {host: '*.example.com', port: 8080}\n"
)
IP = "93.184.216.34"
DECIDE_ROWS = [
    # decide: GET rule matches HEAD; a deny rule without path never fires
    (Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "HEAD", "/repos/a"), True),
    # decide: an allow rule without path allows nothing
    (Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "POST", "/repos/a"), False),
    # decide: a deny query fires when any value matches
    (
        Request(
            "/usr/bin/curl",
            (),
            "api.example.com",
            443,
            IP,
            "http",
            "GET",
            "/repos/secret",
            (("q", ("xy", "zz")),),
        ),
        False,
    ),
    (
        Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "GET", "/repos/secret"),
        True,
    ),
    # decide: glob binaries use `/` as separator; an ancestor matches; cmdline does not
    (Request("/usr/lib/x/y", (), "a.example.com", 8080, IP, "connect"), False),
    (Request("/usr/bin/git", ("/usr/lib/git-core",), "a.example.com", 8080, IP, "connect"), True),
    (Request("/usr/bin/curl", (), "a.b.example.com", 8080, IP, "connect"), False),
    # destination: a wildcard host reaches public addresses only (build_validation_plan)
    (Request("/usr/bin/curl", (), "a.example.com", 8080, "10.1.2.3", "connect"), False),
    # an L7 endpoint refuses bytes that are not HTTP
    (Request("/usr/bin/curl", (), "api.example.com", 443, IP, "raw"), False),
]


@pytest.mark.parametrize(("req", "allowed"), DECIDE_ROWS)
def test_network_decision(req: Request, allowed: bool) -> None:
    assert build_sandbox(DECIDE, BASE).allows_request(req) is allowed


def test_audit_forwards_a_denied_request() -> None:
    text = DECIDE.replace("enforcement: enforce", "enforcement: audit")
    req = Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "POST", "/repos/a")
    assert build_sandbox(text, BASE).allows_request(req)


def test_the_proxy_selects_a_configuration_by_its_own_path_matcher() -> None:
    # select_l7_config_for_path uses endpoint_path::matches (`/api/**` matches `/api`),
    # the Rego's endpoint_matches_l7_request uses glob.match (it does not): the request
    # meets an enforcing configuration that no allow rule of it can match.
    text = NET + (
        "      - host: api.example.com\n        port: 443\n        protocol: rest\n"
        "        path: /api/**\n        enforcement: ENFORCE\n        access: full\n"
    )
    sandbox = build_sandbox(text.replace("ENFORCE", "enforce"), BASE)
    at = Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "GET", "/api")
    below = Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "GET", "/api/x")
    other = Request("/usr/bin/curl", (), "api.example.com", 443, IP, "http", "GET", "/x")
    assert not sandbox.allows_request(at) and sandbox.allows_request(below)
    assert not sandbox.allows_request(other)
    audit = build_sandbox(text.replace("ENFORCE", "audit"), BASE)
    # audit forwards a denied request of a selected configuration, not an unselected one
    assert audit.allows_request(at) and not audit.allows_request(other)


def test_binary_symlinks_resolve_in_the_last_component_only() -> None:
    # resolve_binary_in_container: /usr/bin/py -> python3 -> python3.11 (chain followed);
    # /bin/curl with /bin -> usr/bin is not a symlink itself: matched literally, by no exe.
    text = NET.replace("[{path: /usr/bin/curl}]", "[{path: /usr/bin/py}, {path: /bin/curl}]")
    text += "      - {host: api.example.com, port: 443}\n"
    sandbox = build_sandbox(text, BASE)
    assert sandbox.data[0].binaries == ("/usr/bin/py", "/usr/bin/python3.11", "/bin/curl")
    reach = Request("/usr/bin/python3.11", (), "api.example.com", 443, IP, "connect")
    curl = Request("/usr/bin/curl", (), "api.example.com", 443, IP, "connect")
    assert sandbox.allows_request(reach) and not sandbox.allows_request(curl)


def test_a_witness_naming_a_symlinked_binary_is_a_false_exceed() -> None:
    text = (
        NET.replace("/usr/bin/curl", "/bin/curl") + "      - {host: api.example.com, port: 443}\n"
    )
    cex = {
        "domain": "network",
        "binary": "/bin/curl",
        "ancestor_binary": "/bin/curl",
        "binary_identity_required": True,
        "host": "api.example.com",
        "destination_ip": IP,
        "trusted_gateway": False,
        "port": 443,
        "protocol": "l4",
        "method": None,
        "path": None,
    }
    findings = judge(
        text, "version: 1\n", BASE, {"verdict": "exceeds_boundary", "counterexample": cex}
    )
    assert [f.domain for f in findings] == ["network:symlink-exe"]


def test_an_empty_query_glob_makes_the_sandbox_fall_back_to_the_default() -> None:
    # l7_matchers_to_json drops the empty glob; validate_l7_policies refuses `{}`;
    # load_policy then runs restrictive_default_policy (no network at all).
    text = DECIDE.replace("query: {q: 'x*'}", "query: {q: ''}")
    sandbox = build_sandbox(text, BASE)
    assert sandbox.runs and sandbox.fallback and sandbox.data == []


def test_refusals_agree_with_openshell_on_the_real_policy_corpus() -> None:
    import json

    from tests.corpus import corpus_entries
    from tests.soundness.sandbox_oracle import Unmodelled
    from tests.soundness.sandbox_oracle.policy import ParseError
    from tests.soundness.sandbox_oracle.validate import ambiguities, validation_violations

    table = json.loads(
        (Path(__file__).parent.parent / "data" / "oracle_corpus_validation.json").read_text()
    )
    expected = table["by_sha256"]
    compared = unmodelled = 0
    for entry in corpus_entries():
        if entry.sha256 not in expected:
            continue
        try:
            policy = parse_policy(entry.text)
            undecided: list[str] = []
            mine = "violations" if validation_violations(policy, undecided) else ""
            mine = mine or ("ambiguity" if ambiguities(policy, undecided) else "")
            if not mine and undecided:
                raise Unmodelled(undecided[0])
            mine = mine or "runs"
        except ParseError:
            mine = "parse"
        except Unmodelled:
            unmodelled += 1
            continue
        compared += 1
        assert mine == expected[entry.sha256], entry.file
    assert compared >= 370 and unmodelled <= 45, (compared, unmodelled)


def test_a_witness_binary_the_candidate_cannot_execute_is_a_false_exceed() -> None:
    # execve needs LANDLOCK_ACCESS_FS_EXECUTE on the file: /opt is covered by no rule.
    img = image(files=BASE.files | {"/opt/tools/agent"})
    text = NET.replace("/usr/bin/curl", "/opt/tools/agent")
    text += "      - {host: api.example.com, port: 443}\n"
    cex = {
        "domain": "network",
        "binary": "/opt/tools/agent",
        "ancestor_binary": None,
        "binary_identity_required": True,
        "host": "api.example.com",
        "destination_ip": IP,
        "trusted_gateway": False,
        "port": 443,
        "protocol": "l4",
        "method": None,
        "path": None,
    }
    outcome = {"verdict": "exceeds_boundary", "counterexample": cex}
    findings = judge(text, "version: 1\n", img, outcome)
    assert [f.domain for f in findings] == ["network:no-exec"]
    readable = text.replace(
        "network_policies:", "filesystem_policy: {read_only: [/opt]}\nnetwork_policies:"
    )
    assert judge(readable, "version: 1\n", img, outcome) == []
