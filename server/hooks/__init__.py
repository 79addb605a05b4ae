"""Pre-execution hooks for coding agents: check a policy before OpenShell applies it.

``policy-prover hook claude-code`` (a Claude Code ``PreToolUse`` hook) and ``policy-prover
hook cursor`` (a Cursor ``beforeShellExecution`` hook) read one event on stdin, find the
OpenShell commands in its shell command line that apply a policy, run the prover on them
and deny the command with the verdict when it is anything but ``within_boundary``.

Modules, in the order data flows: :mod:`.events` reads the event and writes the answer
in each tool's format, :mod:`.shell` walks a command line's simple commands with the
state the line gives them and :mod:`.words` expands their words, :mod:`.openshell` reads
them as the OpenShell CLI does and recognises the commands that apply a policy,
:mod:`.verdicts` runs the prover on them. Everything up to the recognition is cheap and
imports no part of the prover, so a command that applies no policy costs milliseconds.
"""
