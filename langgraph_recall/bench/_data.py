"""Where the benchmarks find data sets that cannot ship in the wheel.

LoCoMo (CC BY-NC 4.0) is not redistributed with the package: the user downloads it and
names its folder with ``--data DIR`` or ``$LANGGRAPH_RECALL_LOCOMO_DIR``. A folder holds
either the upstream release file (``locomo10.json``: a list of conversations) or one
conversation per ``*.json`` file. In a source checkout, a ``shared/data/locomo-dev`` folder
beside the repository is found without either.

Example:
    ```python
    import tempfile
    from pathlib import Path

    from langgraph_recall.bench._data import locomo_data_dir
    from langgraph_recall.errors import BenchmarkDataError

    with tempfile.TemporaryDirectory() as empty:
        try:
            locomo_data_dir(empty)
        except BenchmarkDataError as exc:
            assert "locomo10.json" in str(exc) and "--data" in str(exc)
        (Path(empty) / "locomo10.json").write_text("[]")
        assert locomo_data_dir(empty) == Path(empty)
    ```
"""

from __future__ import annotations

import os
from pathlib import Path

from langgraph_recall.errors import BenchmarkDataError

__all__ = ["BEAM_ENV", "LOCOMO_DOWNLOAD", "LOCOMO_ENV", "beam_data_dir", "locomo_data_dir"]

LOCOMO_ENV = "LANGGRAPH_RECALL_LOCOMO_DIR"
"""Environment variable naming the LoCoMo folder (``--data DIR`` wins over it)."""
LOCOMO_URL = "https://github.com/snap-research/locomo/raw/main/data/locomo10.json"
LOCOMO_DOWNLOAD = (
    "LoCoMo is not shipped with langgraph-recall (its licence is CC BY-NC 4.0). "
    f"Download it into a folder: mkdir locomo && curl -L -o locomo/locomo10.json {LOCOMO_URL} "
    f"(from https://github.com/snap-research/locomo), then pass --data locomo or set "
    f"{LOCOMO_ENV}=locomo"
)
"""The download instructions every "no LoCoMo data" error carries."""
_CHECKOUT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo-dev"


def locomo_data_dir(given: str | Path | None = None) -> Path:
    """The LoCoMo folder: ``given``, else ``$LANGGRAPH_RECALL_LOCOMO_DIR``, else (in a
    source checkout) ``../shared/data/locomo-dev`` beside the repository.

    Raises:
        BenchmarkDataError: The folder holds no ``*.json`` file (or none was named and no
            checkout folder exists); the message has the download instructions.
    """
    return _data_folder(
        given, LOCOMO_ENV, _CHECKOUT_DATA, "*.json", "LoCoMo", "conversations", LOCOMO_DOWNLOAD
    )


BEAM_ENV = "LANGGRAPH_RECALL_BEAM_DIR"
"""Environment variable naming the BEAM folder (``--data DIR`` wins over it)."""
BEAM_DOWNLOAD = (
    "BEAM is not shipped with langgraph-recall. Get its chats from "
    "https://github.com/mohammadtavakoli78/BEAM (each chat a folder with chat.json and "
    f"probing_questions.json), then pass --data DIR or set {BEAM_ENV}=DIR"
)
"""The instructions every "no BEAM data" error carries."""
_CHECKOUT_BEAM = Path(__file__).resolve().parents[3] / "shared" / "data" / "beam-dev"


def beam_data_dir(given: str | Path | None = None) -> Path:
    """The BEAM folder: ``given``, else ``$LANGGRAPH_RECALL_BEAM_DIR``, else (in a source
    checkout) ``../shared/data/beam-dev`` beside the repository. It holds one or more chat
    folders (``chat.json`` + ``probing_questions.json``) at any depth.

    Raises:
        BenchmarkDataError: No chat folder there; the message says where to get BEAM.
    """
    return _data_folder(
        given, BEAM_ENV, _CHECKOUT_BEAM, "**/chat.json", "BEAM", "chat", BEAM_DOWNLOAD
    )


def _data_folder(
    given: str | Path | None,
    env: str,
    checkout: Path,
    pattern: str,
    name: str,
    holds: str,
    download: str,
) -> Path:
    """``given``, else ``$env``, else ``checkout``, if it holds a file matching ``pattern``;
    else a :class:`BenchmarkDataError` saying which of these was missing and ``download``."""
    named = given if given is not None else os.environ.get(env) or None
    folder = Path(named).expanduser() if named is not None else checkout
    if folder.is_dir() and any(folder.glob(pattern)):
        return folder
    if named is None:
        where = f"no {name} data given (--data DIR or {env})"
    elif not folder.is_dir():
        where = f"the {name} folder {str(folder)!r} does not exist"
    else:
        where = f"no {name} {holds} ({pattern.rsplit('/', 1)[-1]}) in {str(folder)!r}"
    raise BenchmarkDataError(f"{where}. {download}")
