"""How the sandbox refuses nested user namespaces (a program that makes one gets every
capability inside it, and could mount an unsized tmpfs in host memory).

- bubblewrap 0.8 or later: ``--disable-userns`` (with ``--unshare-user``), which sets the
  sandbox's ``user.max_user_namespaces`` to 0, so ``unshare(CLONE_NEWUSER)`` fails;
- an older bubblewrap: a seccomp filter given with ``--seccomp FD`` that fails ``unshare``
  and ``clone`` with ``CLONE_NEWUSER`` (``EPERM``) and ``clone3`` (``ENOSYS``, so the C
  library falls back to ``clone``), on x86-64 and AArch64;
- neither (an older bubblewrap on another architecture): :func:`userns_problem` says so and
  no code runs.
"""

from __future__ import annotations

import errno
import os
import platform
import re
import struct
import subprocess
from functools import cache

DISABLE_USERNS_VERSION = (0, 8, 0)
"""The first bubblewrap with ``--disable-userns``."""

_CLONE_NEWUSER = 0x10000000
# (audit arch, unshare, clone, clone3) per machine; little-endian only (args[0]'s low word at offset 16).
_SYSCALLS = {
    "x86_64": (0xC000003E, 272, 56, 435),
    "aarch64": (0xC00000B7, 97, 220, 435),
}
_LD_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000


@cache
def bwrap_version(bwrap: str) -> tuple[int, ...] | None:
    """bubblewrap's version (``None`` when ``--version`` does not say)."""
    try:
        out = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out)
    return tuple(int(g or 0) for g in found.groups()) if found else None


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The classic-BPF seccomp filter refusing new user namespaces (``None``: no filter for
    this machine)."""
    known = _SYSCALLS.get(machine or platform.machine())
    if known is None:
        return None
    arch, unshare, clone, clone3 = known
    deny, nosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    program = [
        (_LD_ABS, 0, 0, 4),  # 0: the architecture
        (_JEQ, 1, 0, arch),  # 1: native -> 3
        (_RET, 0, 0, deny),  # 2: another ABI (i386 on x86-64): refused
        (_LD_ABS, 0, 0, 0),  # 3: the syscall number
        (_JGE, 6, 0, _X32_BIT),  # 4: x32 numbers -> 11 (refused)
        (_JEQ, 3, 0, unshare),  # 5: -> 9
        (_JEQ, 2, 0, clone),  # 6: -> 9
        (_JEQ, 5, 0, clone3),  # 7: -> 13
        (_RET, 0, 0, _ALLOW),  # 8
        (_LD_ABS, 0, 0, 16),  # 9: flags (args[0], low word)
        (_JSET, 0, 1, _CLONE_NEWUSER),  # 10: CLONE_NEWUSER -> 11, else 12
        (_RET, 0, 0, deny),  # 11
        (_RET, 0, 0, _ALLOW),  # 12
        (_RET, 0, 0, nosys),  # 13: clone3 (its flags are in memory the filter cannot read)
    ]
    return b"".join(struct.pack("=HBBI", *op) for op in program)


def userns_args(bwrap: str) -> tuple[list[str], bytes | None]:
    """bubblewrap arguments refusing nested user namespaces, and the seccomp program to pass
    on the file descriptor the ``{seccomp_fd}`` argument names (``None``: none needed)."""
    version = bwrap_version(bwrap)
    if version is not None and version >= DISABLE_USERNS_VERSION:
        return ["--disable-userns"], None
    program = seccomp_program()
    if program is None:
        raise OSError(userns_problem(bwrap) or "nested user namespaces cannot be refused")
    return ["--seccomp", "{seccomp_fd}"], program


def userns_problem(bwrap: str) -> str | None:
    """Why this host cannot refuse nested user namespaces (``None``: it can)."""
    version = bwrap_version(bwrap)
    if version is not None and version >= DISABLE_USERNS_VERSION:
        return None
    if seccomp_program() is not None:
        return None
    shown = ".".join(map(str, version)) if version else "of unknown version"
    return (
        f"bubblewrap {shown} has no --disable-userns (0.8 or later has it) and there is no seccomp filter for "
        f"{platform.machine()}: code in the sandbox could make its own user namespace; upgrade bubblewrap"
    )


def seccomp_fd(program: bytes) -> int:
    """A readable file descriptor holding ``program`` at offset 0 (the caller closes it)."""
    fd = os.memfd_create("holistic-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
