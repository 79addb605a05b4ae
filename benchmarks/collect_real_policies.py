"""Collect real OpenShell sandbox policies from local git mirrors into the test corpus.

Usage: ``python -m benchmarks.collect_real_policies OUT_DIR GITDIR[=owner/name] ...``

Every blob that ever existed in any commit of each repository (``git log --all``) is scanned:
YAML files (each document, and policy texts held in string values), Markdown fenced ``yaml``
blocks, Rust raw strings, Python triple-quoted strings, shell heredocs and JS/Go backtick
strings. A document is kept when it parses to a mapping with ``version: 1`` and at least one
policy section. Documents are deduplicated by the SHA-256 of their exact text; the provenance
file records repository, path, commit, license, extraction and whether the source reads as an
intentionally invalid fixture (a heuristic that is recorded with its basis).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

SECTIONS = {
    "filesystem_policy",
    "landlock",
    "process",
    "network_policies",
    "network_middlewares",
}
SCAN_EXT = (".yaml", ".yml", ".md", ".mdx", ".rs", ".py", ".sh", ".ts", ".js", ".go", ".txt")
MAX_BLOB = 2 * 1024 * 1024
MAX_DOC = 256 * 1024
ZERO = "0" * 40
NEGATIVE_FN = re.compile(r"(reject|invalid|error|fail|bad|malformed|unknown_field|must_not_parse)")
NEGATIVE_USE = re.compile(
    r"(is_err\(\)|unwrap_err\(|expect_err\(|should_panic|pytest\.raises|assert!\(matches!\([^)]*Err)"
)


@dataclass
class Found:
    text: str
    repo: str
    path: str
    commit: str
    extraction: str
    expect: str
    expect_basis: str


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", gitdir, *args], capture_output=True, text=True, check=True
    ).stdout


def blobs(gitdir: str) -> dict[str, tuple[str, str]]:
    """Blob id -> (path, commit) for every candidate file version in the whole history."""
    out = git(gitdir, "log", "--all", "--raw", "--no-abbrev", "--no-renames", "--format=C %H")
    seen: dict[str, tuple[str, str]] = {}
    commit = ""
    for line in out.splitlines():
        if line.startswith("C "):
            commit = line[2:].strip()
        elif line.startswith(":"):
            meta, _, path = line.partition("\t")
            parts = meta.split()
            blob = parts[3]
            if blob == ZERO or not path.lower().endswith(SCAN_EXT):
                continue
            seen.setdefault(blob, (path, commit))
    return seen


def read_blobs(gitdir: str, ids: list[str]) -> Iterator[tuple[str, bytes]]:
    proc = subprocess.Popen(
        ["git", "--git-dir", gitdir, "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout
    for blob in ids:
        proc.stdin.write(blob.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) < 3:
            continue
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        if size <= MAX_BLOB:
            yield blob, data
    proc.stdin.close()
    proc.wait()


def is_policy(data: object) -> bool:
    return (
        isinstance(data, dict)
        and data.get("version") in (1, "1")
        and any(key in data for key in SECTIONS)
    )


def parse(text: str) -> object:
    try:
        return yaml.safe_load(text)
    except Exception:
        return None


def yaml_docs(text: str) -> Iterator[tuple[str, str]]:
    """(label, exact text) of each document, plus policy texts held in string values."""
    lines = text.splitlines(keepends=True)
    docs: list[str] = []
    cur: list[str] = []
    for line in lines:
        if re.match(r"^---(\s|$)", line):
            docs.append("".join(cur))
            cur = []
        else:
            cur.append(line)
    docs.append("".join(cur))
    docs = [d for d in docs if d.strip()]
    if len(docs) <= 1:
        docs = [text]
    for index, doc in enumerate(docs):
        label = "file" if len(docs) == 1 else f"doc{index + 1}"
        yield label, doc
        data = parse(doc)
        for sub, value in enumerate(strings_in(data)):
            yield f"{label}-string{sub + 1}", value


def strings_in(data: object, depth: int = 0) -> Iterator[str]:
    if depth > 12:
        return
    if isinstance(data, dict):
        for value in data.values():
            yield from strings_in(value, depth + 1)
    elif isinstance(data, list):
        for value in data:
            yield from strings_in(value, depth + 1)
    elif isinstance(data, str) and "\n" in data and "version" in data:
        yield data


FENCE = re.compile(r"^([ \t>]*)(```+|~~~+)[ \t]*([A-Za-z0-9_+-]*)[^\n]*$")


def markdown_blocks(text: str) -> Iterator[tuple[str, str, str]]:
    """(label, block text, preceding prose) for fenced yaml blocks."""
    lines = text.splitlines(keepends=True)
    i = 0
    count = 0
    while i < len(lines):
        m = FENCE.match(lines[i].rstrip("\n"))
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j]
            if stripped.startswith(indent):
                stripped = stripped[len(indent) :]
            if stripped.strip().startswith(fence[:3]) and stripped.strip().strip(fence[0]) == "":
                break
            body.append(stripped)
            j += 1
        directive = "{" in lines[i]
        if directive:  # MyST ```{code-block} yaml: options such as :emphasize-lines: lead
            lang = "yaml" if "yaml" in lines[i].lower() or "yml" in lines[i].lower() else "x"
            while body and re.match(r"^:[A-Za-z][\w-]*:", body[0]):
                body.pop(0)
        if lang in ("yaml", "yml", ""):
            count += 1
            before = "".join(lines[max(0, i - 6) : i])
            yield f"block{count}", "".join(body), before
        i = j + 1


RUST_RAW = re.compile(r'r(#*)"(.*?)"\1', re.S)


def enclosing_fn(text: str, pos: int) -> str:
    names = re.findall(r"\b(?:fn|def)\s+([A-Za-z0-9_]+)", text[:pos])
    return names[-1] if names else ""


def following(text: str, end: int) -> str:
    rest = text[end : end + 3000]
    stop = re.search(r"\n\s*(#\[test\]|#\[tokio::test\]|fn |def |async fn )", rest)
    return rest[: stop.start()] if stop else rest


def negative(text: str, start: int, end: int) -> str:
    fn = enclosing_fn(text, start)
    after = following(text, end)
    body_before = text[max(0, start - 1500) : start]
    fn_start = max(body_before.rfind("fn "), body_before.rfind("def "))
    ctx = (body_before[fn_start:] if fn_start >= 0 else "") + after
    if NEGATIVE_FN.search(fn.lower()) and NEGATIVE_USE.search(ctx):
        return f"test {fn} expects a parse/validation error"
    if NEGATIVE_USE.search(after[:600]):
        return f"code after the text in {fn or 'file'} expects an error"
    return ""


def code_strings(path: str, text: str) -> Iterator[tuple[str, str, int, int]]:
    low = path.lower()
    if low.endswith(".rs"):
        for n, m in enumerate(RUST_RAW.finditer(text)):
            if "format!(" in text[max(0, m.start() - 40) : m.start()]:
                continue
            yield f"rs{n + 1}", m.group(2), m.start(), m.end()
    elif low.endswith(".py"):
        for n, m in enumerate(re.finditer(r'([rRbBfF]*)("""|\'\'\')(.*?)\2', text, re.S)):
            if "f" in m.group(1).lower():
                continue
            yield f"py{n + 1}", m.group(3), m.start(), m.end()
    elif low.endswith(".sh"):
        for n, m in enumerate(
            re.finditer(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n[ \t]*\2\s*$", text, re.S | re.M)
        ):
            quoted = bool(m.group(1))
            body = m.group(3)
            if not quoted and "$" in body:
                continue
            yield f"heredoc{n + 1}", body + "\n", m.start(), m.end()
    elif low.endswith((".ts", ".js", ".go")):
        for n, m in enumerate(re.finditer(r"`([^`]*)`", text, re.S)):
            if "${" in m.group(1):
                continue
            yield f"bt{n + 1}", m.group(1), m.start(), m.end()


def strip_leading_newline(body: str) -> str:
    body = body.lstrip("\n") if body.startswith("\n") else body
    body = textwrap.dedent(body)
    if not body.endswith("\n"):
        body += "\n"
    return body


def extract(repo: str, path: str, commit: str, text: str) -> Iterator[Found]:
    low = path.lower()
    cands: list[tuple[str, str, str]] = []  # label, text, negative-basis
    if low.endswith((".yaml", ".yml")):
        base = path.lower()
        neg = ""
        if re.search(r"(invalid|malformed|bad[-_])", base):
            neg = "file name marks an invalid fixture"
        for label, doc in yaml_docs(text):
            cands.append((label, doc, neg))
    elif low.endswith((".md", ".mdx", ".txt")):
        # Prose is no reliable sign of an invalid example ("Do not modify ..." precedes
        # valid templates), so Markdown blocks are all read as meant to be valid.
        for label, body, _before in markdown_blocks(text):
            cands.append((label, body, ""))
    else:
        for label, body, start, end in code_strings(path, text):
            if "version" not in body:
                continue
            cands.append((label, strip_leading_newline(body), negative(text, start, end)))
    for label, doc, neg in cands:
        if len(doc.encode()) > MAX_DOC or "version" not in doc:
            continue
        data = parse(doc)
        if is_policy(data):
            yield Found(
                doc,
                repo,
                path,
                commit,
                label,
                "invalid" if neg else "valid",
                neg or "",
            )
        elif neg and data is None and looks_like_policy(doc):
            yield Found(doc, repo, path, commit, label, "invalid", neg + " (not YAML)")


def looks_like_policy(doc: str) -> bool:
    return bool(re.search(r"^version:\s*1\s*$", doc, re.M)) and any(
        re.search(rf"^{key}:", doc, re.M) for key in SECTIONS
    )


def license_of(gitdir: str) -> str:
    for name in ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING", "LICENSE-APACHE"):
        try:
            head = git(gitdir, "show", f"HEAD:{name}")[:3000]
        except subprocess.CalledProcessError:
            continue
        if "Apache License" in head:
            return "Apache-2.0"
        if "MIT License" in head or "Permission is hereby granted, free of charge" in head:
            return "MIT"
        if "BSD" in head:
            return "BSD"
        if "GNU GENERAL PUBLIC LICENSE" in head:
            return "GPL"
        return f"see {name}"
    return "unknown"


def slug(repo: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-")


def short_name(path: str, label: str) -> str:
    stem = Path(path).name
    for ext in (*SCAN_EXT, ".yaml.example"):
        if stem.lower().endswith(ext):
            stem = stem[: -len(ext)]
    stem = re.sub(r"[^A-Za-z0-9]+", "-", stem).strip("-").lower()[:40] or "policy"
    return stem if label == "file" else f"{stem}-{label}"


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    prov_path = out / "PROVENANCE.json"
    entries: dict[str, dict] = {}
    if prov_path.exists():
        for entry in json.loads(prov_path.read_text())["entries"]:
            entries[entry["sha256"]] = entry
    for spec in argv[1:]:
        gitdir, _, repo = spec.partition("=")
        if not repo:
            repo = Path(gitdir).parent.name.replace("+", "/")
        lic = license_of(gitdir)
        found = 0
        fresh = 0
        table = blobs(gitdir)
        for blob, data in read_blobs(gitdir, list(table)):
            if b"version" not in data or not any(k.encode() in data for k in SECTIONS):
                continue
            path, commit = table[blob]
            text = data.decode("utf-8", "replace")
            for item in extract(repo, path, commit, text):
                found += 1
                digest = hashlib.sha256(item.text.encode()).hexdigest()
                if digest in entries:
                    continue
                fresh += 1
                rel = f"{slug(repo)}/{short_name(path, item.extraction)}-{digest[:8]}.yaml"
                target = out / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(item.text.encode())
                entries[digest] = {
                    "file": rel,
                    "sha256": digest,
                    "repo": repo,
                    "path": path,
                    "commit": commit,
                    "blob": blob,
                    "extraction": item.extraction,
                    "license": lic,
                    "expect": item.expect,
                    **({"expect_basis": item.expect_basis} if item.expect_basis else {}),
                }
        print(f"{repo}: {found} policy documents, {fresh} new", file=sys.stderr)
    ordered = sorted(entries.values(), key=lambda e: e["file"])
    prov_path.write_text(
        json.dumps({"format": 1, "entries": ordered}, indent=1, ensure_ascii=False) + "\n"
    )
    print(f"total distinct: {len(ordered)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
