"""The uid and gid the sandboxed process runs as, per compute driver.

- The gateway keeps omitted fields for Docker and Podman; other drivers fill them with
  ``sandbox`` first (``ensure_sandbox_process_identity``, ``openshell-policy/src/lib.rs``).
- ``resolve_process_identity`` (``openshell-supervisor-process/src/identity.rs``):
  Kubernetes and OpenShift (``DriverIdentity::Resolved``) overwrite both fields with the
  driver's ids; Docker and Podman (``DriverIdentity::OciUser``) keep explicit fields and
  fill omitted ones from the image's ``USER`` (``resolve_oci_process_identity_at``): the
  user part, and the group part or else the primary gid ``/etc/passwd`` gives that
  ``USER`` (even when ``run_as_user`` is explicit); root, uid or gid 0, an empty
  ``USER`` or a name missing from ``/etc/passwd`` abort. The VM driver
  (``DriverIdentity::None``) fills ``sandbox``.
- ``drop_privileges_with_identity`` (``openshell-supervisor-process/src/process.rs``):
  a resolved OCI id wins; else a decimal field is the id itself; else the name is looked
  up (``/etc/passwd`` for the user, ``/etc/group`` for the group), a missing one aborts.

Supplementary groups (``initgroups``) are not modelled: images here list no members.
"""

from __future__ import annotations

from tests.soundness.sandbox_oracle.filesystem import SandboxDoesNotStart
from tests.soundness.sandbox_oracle.image import Image
from tests.soundness.sandbox_oracle.policy import Policy
from tests.soundness.sandbox_oracle.validate import rust_u32


def _u32(value: str) -> int | None:
    return rust_u32(value)


def _oci(image: Image, user: str, group: str) -> tuple[str, str, int | None, int | None]:
    """``resolve_oci_process_identity_at``: (user, group, resolved uid, resolved gid)."""
    explicit_user, explicit_group = bool(user), bool(group)
    if explicit_user and explicit_group:
        return user, group, None, None
    declaration = image.user or ""
    oci_user, _, oci_group_text = declaration.partition(":")
    oci_group = oci_group_text if ":" in declaration else None
    needs_primary_gid = not explicit_group and oci_group is None
    resolved: tuple[int, int | None] | None = None
    if not explicit_user or needs_primary_gid:
        if not oci_user:
            raise SandboxDoesNotStart("OCI USER is required because run_as_user is omitted")
        if oci_user == "root":
            raise SandboxDoesNotStart(f"OCI USER '{declaration}' selects root")
        uid = _u32(oci_user)
        if uid is not None:
            if uid == 0:
                raise SandboxDoesNotStart("OCI USER selects UID 0")
            gid = None
            if needs_primary_gid:
                gid = next((g for u, g in image.passwd.values() if u == uid), None)
            if gid == 0:
                raise SandboxDoesNotStart("OCI USER resolves to prohibited primary GID 0")
            resolved = (uid, gid)
        else:
            if oci_user not in image.passwd:
                raise SandboxDoesNotStart(f"OCI USER name '{oci_user}' not in /etc/passwd")
            uid, gid = image.passwd[oci_user]
            if uid == 0:
                raise SandboxDoesNotStart("OCI USER resolves to prohibited UID 0")
            if needs_primary_gid and gid == 0:
                raise SandboxDoesNotStart("OCI USER resolves to prohibited primary GID 0")
            resolved = (uid, gid if needs_primary_gid else None)
    oci_uid = None if explicit_user else resolved[0]  # type: ignore[index]
    if not explicit_user:
        user = oci_user
    oci_gid = None
    if not explicit_group:
        if oci_group is not None and oci_group:
            if oci_group == "root":
                raise SandboxDoesNotStart("OCI USER selects root group")
            gid = _u32(oci_group)
            if gid is None:
                if oci_group not in image.groups:
                    raise SandboxDoesNotStart(f"OCI group '{oci_group}' not in /etc/group")
                gid = image.groups[oci_group]
            if gid == 0:
                raise SandboxDoesNotStart("OCI USER resolves to prohibited GID 0")
            group, oci_gid = oci_group, gid
        elif oci_group is not None:
            raise SandboxDoesNotStart("OCI USER has an empty group component")
        else:
            gid = resolved[1] if resolved else None
            if gid is None:
                raise SandboxDoesNotStart("numeric OCI USER without a primary GID")
            group, oci_gid = str(gid), gid
    return user, group, oci_uid, oci_gid


def process_identity(policy: Policy, image: Image) -> tuple[int, int]:
    """The (uid, gid) the workload runs as; :class:`SandboxDoesNotStart` if none."""
    user, group = policy.process or ("", "")
    resolved_uid = resolved_gid = None
    if image.driver in ("kubernetes", "openshift"):
        user, group = (str(i) for i in image.driver_ids)
    elif image.driver == "vm":
        user, group = user or "sandbox", group or "sandbox"
    else:
        user, group, resolved_uid, resolved_gid = _oci(image, user, group)
    if resolved_uid is not None:
        uid = resolved_uid
    elif _u32(user) is not None:
        uid = _u32(user)
    elif user in image.passwd:
        uid = image.passwd[user][0]
    else:
        raise SandboxDoesNotStart(f"Sandbox user not found: {user}")
    if resolved_gid is not None:
        gid = resolved_gid
    elif _u32(group) is not None:
        gid = _u32(group)
    elif group in image.groups:
        gid = image.groups[group]
    else:
        raise SandboxDoesNotStart(f"Sandbox group not found: {group}")
    return uid, gid
