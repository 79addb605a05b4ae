"""The runtime's reading: what OpenShell enforces for a loaded policy (the effective policy).

Between loading and checking: the checks compare what the sandbox actually runs with,
not the policy's text. Facts from NVIDIA/OpenShell's source; each module cites its files.
"""
