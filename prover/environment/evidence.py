"""The evidence one check uses, and the facts it relied on (the receipt's assumptions).

A check gets one :class:`Evidence` per run. Each rule that decides something from the
document calls :meth:`Evidence.rely` with the fact it used, so that the receipt lists
exactly what a verdict depends on; a verdict that used no fact lists none.
"""

from __future__ import annotations

from prover.environment.document import Environment
from prover.environment.identity import Resolved, resolve_identity
from prover.environment.paths import PathResolver

MAX_ASSUMPTIONS = 64


class Evidence:
    def __init__(self, env: Environment) -> None:
        self.env = env
        self.paths = PathResolver(env.symlinks, env.complete_beneath)
        self._facts: dict[str, None] = {}

    @property
    def assumptions(self) -> tuple[str, ...]:
        facts = list(self._facts)
        if len(facts) > MAX_ASSUMPTIONS:
            extra = len(facts) - MAX_ASSUMPTIONS
            facts = [*facts[:MAX_ASSUMPTIONS], f"and {extra} more facts of the environment"]
        return tuple(facts)

    def rely(self, *facts: str) -> None:
        for fact in facts:
            self._facts[fact] = None

    def workdir(self) -> str | None:
        return self.env.workdir

    def gpu(self) -> bool | None:
        """Whether the sandbox has a GPU (the runtime then adds GPU paths), or None."""
        if self.env.gpu is not None:
            self.rely(f"the sandbox {'has' if self.env.gpu else 'has no'} GPU")
        return self.env.gpu

    def path_exists(self, path: str) -> bool | None:
        """Whether ``path`` exists in the image, or None where the evidence is silent."""
        known = self.env.paths_exist.get(path)
        if known is not None:
            self.rely(f"{path} {'exists' if known else 'does not exist'} in the image")
        return known

    def identity(self, value: str, field: str) -> Resolved | None:
        return resolve_identity(value, field, self.env)

    def resolve_path(self, path: str) -> str | None:
        """``path`` resolved through the listed symlinks, or None where evidence is silent.

        Records nothing: call :meth:`rely_on_path` for a path a decision used.
        """
        return self.paths.resolve(path)[0]

    def rely_on_path(self, path: str) -> None:
        resolved, used = self.paths.resolve(path)
        for link in used:
            self.rely(f"{link} is a symlink to {self.env.symlinks[link]}")
        if resolved is not None:
            # the narrowest complete path at or above each path walked
            for walked in (path, resolved, *used):
                narrowest = self.paths.narrowest_complete(walked)
                if narrowest is not None:
                    self.rely(f"no unlisted symlinks at or beneath {narrowest}")
