"""The building blocks the campaign's policies and actions are made of.

Realistic values (the hosts, paths and binaries real sandbox policies name) plus the
edge values the boundary-check spec singles out: empty glob segments, ``HEAD`` for
``GET``, IPv4-mapped IPv6, private and always-blocked ranges, control ports, gateway
aliases, dotted query values. Everything is a tuple so that sampling with a seeded
``random.Random`` is reproducible.
"""

from __future__ import annotations

#: Exact DNS hosts (one upper-case spelling: host matching is case-insensitive).
EXACT_HOSTS: tuple[str, ...] = (
    "api.example.com",
    "www.example.com",
    "example.com",
    "api.github.com",
    "github.com",
    "pypi.org",
    "files.pythonhosted.org",
    "db.corp.example",
    "registry.npmjs.org",
    "api-v2.example.com",
    "_svc.example.com",
    "API.Example.COM",
)
GATEWAY_HOSTS: tuple[str, ...] = (
    "host.openshell.internal",
    "host.docker.internal",
    "host.containers.internal",
)
IPV4_LITERAL_HOSTS: tuple[str, ...] = ("8.8.8.8", "10.0.0.5", "203.0.113.7", "1.1.1.1")
WILDCARD_HOSTS: tuple[str, ...] = (
    "*.example.com",
    "**.example.com",
    "api*.example.com",
    "*-api.example.com",
    "api.*.example.com",
    "*.*.example.com",
    "*.github.com",
    "**.github.com",
    "*.openshell.internal",
    "host.*.internal",
    "**.docker.internal",  # (**.internal: a TLD wildcard the runtime refuses)
    "*.corp.example",
)
#: Hosts no generated policy names and no generated wildcard matches.
FOREIGN_HOSTS: tuple[str, ...] = ("exfil.attacker.invalid", "c2.evil.invalid")

#: Ports; the control-plane ports and the extremes are edge values.
ORDINARY_PORTS: tuple[int, ...] = (443, 80, 8080, 8443, 5432, 9000)
EDGE_PORTS: tuple[int, ...] = (2379, 2380, 6443, 10250, 10255, 1, 65535)
CONTROL_PORTS: tuple[int, ...] = (2379, 2380, 6443, 10250, 10255)

#: ``allowed_ips`` entries the model supports (v4, v6, bare addresses, mapped v4).
ALLOWED_IPS: tuple[str, ...] = (
    "10.0.0.0/8",
    "10.1.0.0/16",
    "10.1.2.0/24",
    "8.8.8.0/24",
    "8.8.0.0/16",
    "192.168.1.0/24",
    "172.16.0.0/12",
    "100.64.0.0/10",
    "203.0.113.7",
    "93.184.216.0/24",
    "2001:db8::/32",
    "2001:db8:1::/48",
    "fc00::/7",
    "2606:4700::/32",
    "::ffff:10.0.0.0/104",
    "::ffff:8.8.8.8",
)
#: Entries shape validation refuses (always-blocked overlap, not an address).
UNSUPPORTED_ALLOWED_IPS: tuple[str, ...] = (
    "127.0.0.0/8",
    "0.0.0.0/0",
    "169.254.0.0/16",
    "fe80::/10",
    "::ffff:127.0.0.1",
    "not-an-ip",
)

#: Destination addresses every sampled action may use.
EDGE_IPS: tuple[str, ...] = (
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "10.0.0.1",
    "10.1.2.3",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",
    "192.0.2.1",
    "198.18.0.1",
    "255.255.255.255",
    "203.0.113.7",
    "127.0.0.1",
    "0.0.0.0",
    "169.254.169.254",
    "169.254.1.1",
    "2001:db8::1",
    "2606:4700::1111",
    "fc00::1",
    "fe80::1",
    "::1",
    "::",
    "::ffff:8.8.8.8",
    "::ffff:10.0.0.1",
    "::ffff:127.0.0.1",
    "::ffff:169.254.1.1",
    "::ffff:169.254.169.254",
)

#: REST allow/deny methods: tokens, ``*``, lower case and an unknown verb.
METHODS: tuple[str, ...] = (
    "GET",
    "GET",
    "POST",
    "PUT",
    "PATCH",
    "DELETE",
    "HEAD",
    "OPTIONS",
    "*",
    "get",
    "post",
    "PURGE",
    "M-SEARCH",
)
#: Methods a REST action may carry beyond those the policies name.
ACTION_METHODS: tuple[str, ...] = ("GET", "HEAD", "POST", "DELETE", "OPTIONS", "PURGE", "get")

#: Path globs for rules and endpoint selectors (``""`` = any path).
RULE_PATHS: tuple[str, ...] = (
    "/**",
    "**",
    "/",
    "/v1/**",
    "/v1/models",
    "/v1/models/*",
    "/v1/chat/completions",
    "/repos/*/*/issues",
    "/repos/**",
    "/a/**/b",
    "/items/*",
    "/**/info/refs*",
    "/**/git-upload-pack",
    "/x*y/z",
    "/v1/*",
    "/api/v2/**/status",
)
SELECTOR_PATHS: tuple[str, ...] = ("/**", "**", "/v1/**", "/api/*", "/repos/**")
#: Concrete segments substituted for ``*``/``**`` (empty, dotted, non-ASCII included).
SEGMENTS: tuple[str, ...] = ("", "a", "models", "x.y", "info", "é", "v1", "-", "b")

QUERY_KEYS: tuple[str, ...] = ("page", "q", "per_page", "v", "format")
#: Exact query values; ``*`` is added separately. Dotted values matter for ``*``.
QUERY_VALUES: tuple[str, ...] = ("1", "", "json", "1.2", "a.b.c", "main")
#: Values an action may send for a ``*`` matcher or an unconstrained key.
ACTION_QUERY_VALUES: tuple[str, ...] = ("", "abc", "a/b", "a b+c%&=", "1.2", ".", "json")

EXACT_BINARIES: tuple[str, ...] = (
    "/usr/bin/curl",
    "/usr/bin/git",
    "/usr/bin/python3",
    "/usr/local/bin/claude",
    "/sandbox/.venv/bin/pip",
    "/usr/bin/node",
    "/usr/bin/gh",
)
GLOB_BINARIES: tuple[str, ...] = (
    "/usr/bin/*",
    "/usr/local/bin/*",
    "/sandbox/.venv/**",
    "/**",
    "/usr/**/python3",
    "/usr/bin/py*",
)
#: Processes that are only ever ancestors (shells, launchers).
ANCESTOR_BINARIES: tuple[str, ...] = ("/bin/bash", "/usr/bin/env", "/usr/local/bin/claude")

READ_ONLY_PATHS: tuple[str, ...] = (
    "/usr",
    "/lib",
    "/etc",
    "/proc",
    "/var/log",
    "/app",
    "/dev/urandom",
    "/usr/",
    "/usr//./lib",
)
READ_WRITE_PATHS: tuple[str, ...] = ("/tmp", "/sandbox", "/dev/null", "/app/data", "/var/tmp")
#: Paths no policy lists; read or written only where ``/`` is granted.
OTHER_PATHS: tuple[str, ...] = ("/etc/shadow", "/root", "/tmp/cache", "/")

#: (root and 0 are refused by the runtime: an error, prover.runtime.validation)
IDENTITIES: tuple[str, ...] = ("sandbox", "1000", "1500", "")
UNSUPPORTED_IDENTITIES: tuple[str, ...] = ("nobody", "4294967295", "-1")
