"""``policy-prover serve --transport streamable-http`` as a subprocess on a free loopback port.

Shared by the load and hostile-HTTP tests and by ``benchmarks/load_http.py``. Besides
starting and stopping the server it reads what /proc says about it: peak resident memory
(``VmHWM``), CPU time, and CPU time per thread (to see worker threads stop burning CPU).
Only loopback is ever used.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import server

REPO_ROOT = str(Path(server.__file__).resolve().parent.parent)
HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def serve_command(port: int, extra: Sequence[str] = ()) -> list[str]:
    """``policy-prover serve ...`` from this interpreter's environment."""
    script = Path(sys.executable).parent / "policy-prover"
    head = [str(script), "serve"] if script.exists() else [sys.executable, "-m", "server"]
    return [*head, "--transport", "streamable-http", "--host", HOST, "--port", str(port), *extra]


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def _status(self) -> dict[str, str]:
        text = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def peak_rss_kib(self) -> int:
        """``VmHWM``: the peak resident set size so far."""
        return int(self._status()["VmHWM"].split()[0])

    def rss_kib(self) -> int:
        return int(self._status()["VmRSS"].split()[0])

    def threads(self) -> int:
        return int(self._status()["Threads"].strip())

    def cpu_seconds(self) -> float:
        """User plus system CPU time of the whole process."""
        return _stat_cpu(Path(f"/proc/{self.process.pid}/stat"))

    def thread_cpu_seconds(self) -> dict[int, float]:
        """CPU time per thread id."""
        tasks = Path(f"/proc/{self.process.pid}/task")
        result: dict[int, float] = {}
        for task in tasks.iterdir():
            try:
                result[int(task.name)] = _stat_cpu(task / "stat")
            except (FileNotFoundError, ProcessLookupError):
                continue  # the thread ended meanwhile
        return result

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def _stat_cpu(path: Path) -> float:
    fields = path.read_text(encoding="ascii").rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15.
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def wait_for_health(port: int, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log_path.read_text(errors='replace')}")
        connection = http.client.HTTPConnection(HOST, port, timeout=2)
        try:
            connection.request("GET", "/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.05)
        finally:
            connection.close()
    raise RuntimeError(f"the server did not answer /health: {log_path.read_text(errors='replace')}")


@contextmanager
def serve_http(
    log_path: Path, extra: Sequence[str] = (), env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    """A running server; stopped (SIGTERM, then SIGKILL) when the block ends."""
    port = free_port()
    environment = {**os.environ, "PYTHONPATH": REPO_ROOT, **(env or {})}
    if "POLICY_PROVER_TOKEN" not in (env or {}):
        environment.pop("POLICY_PROVER_TOKEN", None)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            serve_command(port, extra),
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    try:
        wait_for_health(port, process, log_path)
        yield ServerProcess(process=process, port=port, log_path=log_path)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
