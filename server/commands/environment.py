"""``policy-prover environment --rootfs DIR | --image FILE.tar [--workdir W] [--user U]
[-o FILE]``: write an environment evidence document.

Reads a root filesystem (an unpacked image, or ``/`` inside a running sandbox) or an
image archive (``docker save`` or an OCI layout), with no container runtime. The
document goes to ``-o FILE`` or stdout; progress goes to stderr. Every failure is one
line on stderr and exit 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from server.output import write

EXIT_ERROR = 2


def add_parser(subparsers: argparse._SubParsersAction[Any]) -> None:
    parser = subparsers.add_parser(
        "environment",
        help="write an environment evidence document from a root filesystem or an image",
        description=(
            "Collect facts about a sandbox image for --environment: the working directory, "
            "the image's user, users and groups (/etc/passwd, /etc/group), and every symlink "
            "(not beneath /proc, /sys or /dev; a directory that cannot be read is left out "
            "of symlinks_complete_beneath)."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--rootfs", metavar="DIR", help="a root filesystem directory")
    source.add_argument(
        "--image", metavar="FILE", help="an image archive: docker save or an OCI layout tar"
    )
    parser.add_argument("--workdir", metavar="W", help="the working directory (absolute)")
    parser.add_argument(
        "--user", metavar="U[:G]", help="the image's user (name or uid), optionally its group"
    )
    parser.add_argument(
        "-o", "--output-file", metavar="FILE", dest="output_file", help="write here, not stdout"
    )
    parser.set_defaults(run=run)


def _progress(message: str) -> None:
    # a message may quote a path of the image: escaped, so it cannot forge a line
    write(sys.stderr, f"policy-prover environment: {_escape(message)}\n")


def run(args: argparse.Namespace) -> int:
    from prover.environment.collect import CollectError

    if args.workdir is not None and not args.workdir.startswith("/"):
        write(sys.stderr, "policy-prover: --workdir must be an absolute path\n")
        return EXIT_ERROR
    try:
        text = _collect(args)
    except CollectError as exc:
        write(sys.stderr, f"policy-prover: {_escape(str(exc))}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # never a traceback
        write(
            sys.stderr,
            f"policy-prover: cannot collect: {type(exc).__name__}: {_escape(str(exc))}\n",
        )
        return EXIT_ERROR
    if args.output_file is None:
        return 0 if write(sys.stdout, text) else EXIT_ERROR
    try:
        with open(args.output_file, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        write(
            sys.stderr,
            f"policy-prover: cannot write '{_escape(args.output_file)}': {exc.strerror}\n",
        )
        return EXIT_ERROR
    return 0


def _escape(text: str) -> str:
    from prover.results.text import escape_control

    return escape_control(text)


def _collect(args: argparse.Namespace) -> str:
    import json

    from prover.environment import load_environment
    from prover.environment.collect import collect_rootfs
    from prover.environment.image import collect_image

    if args.rootfs is not None:
        data = collect_rootfs(args.rootfs, workdir=args.workdir, user=args.user, progress=_progress)
    else:
        data = collect_image(args.image, progress=_progress, workdir=args.workdir, user=args.user)
    # JSON is YAML: one value a line keeps it diffable, and it reads back exactly.
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    load_environment(text)  # what is written must read back
    _progress(
        f"{len(data['symlinks'])} symlinks, complete beneath "
        f"{len(data['symlinks_complete_beneath'])} paths"
    )
    return text
