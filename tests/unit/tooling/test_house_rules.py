"""The house's structural rules, held by tests: small modules, no import cycle, no reaching
into another package's private modules, and the shared memory layer below what users import."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "langgraph_recall"
MAX_LINES = 800


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def test_no_module_is_over_800_lines() -> None:
    long = {
        name: n
        for name, path in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"split these modules: {long}"


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules ``name`` imports, function-level imports included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            # "from package import submodule" imports the submodule, not a name of the package
            named = any(module not in known for module in submodules)
            targets = ([base] if named else []) + submodules
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def test_no_import_cycle_between_the_package_modules() -> None:
    """Modules importing each other, directly or through others -- also inside functions,
    the usual way a cycle is hidden (a package's ``__init__`` counts as a module)."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    assert cycles == [], f"import cycles: {cycles}"


# A private module (``_name``) belongs to its top-level subpackage: other packages use the
# package's public face, or a shared private layer whose modules have public names (``_pg``,
# ``_internal``, ``_memory``). The exceptions below are contracts a package keeps with named
# neighbours -- private module -> the top-level names allowed to import it. Keep this short:
# a name several packages need belongs in a shared layer or in the package's public face.
PRIVATE_IMPORTS_ALLOWED: dict[str, frozenset[str]] = {
    # The store's capability flags (``store_supports``): how what users import asks a store
    # what only ours can do (docs/architecture.md, "The layers").
    "langgraph_recall.store._capabilities": frozenset({"erasure", "nodes", "transfer"}),
    # The store's own input checks (keys, namespaces, value sizes, text and time bounds):
    # the memory tools, the MCP server, export/import and date parsing refuse exactly what
    # the store refuses, before they write.
    "langgraph_recall.store._values": frozenset({"mcp_server", "nodes", "transfer"}),
    "langgraph_recall.store._namespace": frozenset({"transfer"}),
    "langgraph_recall.store._bounds": frozenset({"extraction", "nodes"}),
    # The lease token layout every backend issues (docs/architecture.md, "Where a new
    # backend plugs in"); the Postgres and Redis lease backends live in ``checkpoint``.
    "langgraph_recall.lease._tokens": frozenset({"checkpoint"}),
    # Retrieval's pure scoring pieces, shared by the store's ranking and the retrieve node.
    "langgraph_recall.retrieval._updates": frozenset({"store"}),
    "langgraph_recall.retrieval._profile": frozenset({"nodes", "store"}),
    # The episode planner: the extract node writes episodes as ``ingest_history`` does.
    "langgraph_recall.episodes._plan": frozenset({"nodes"}),
    # The store-users benchmark sizes its loads with the bulk loader's batching.
    "langgraph_recall.store.postgres._bulk": frozenset({"bench"}),
}

# What users import; the shared memory layer sits below all of it.
USER_FACING = ("nodes", "middleware", "episodes", "graphs", "erasure")


def _top(module: str) -> str:
    """The top-level subpackage (or module) of the package ``module`` belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_private_module(module: str) -> bool:
    """A module whose path below its top-level subpackage has a ``_name`` part."""
    return any(part.startswith("_") for part in module.split(".")[2:])


def _private_crossings(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """``(importer, private module)`` pairs that cross top-level subpackages."""
    return {
        (name, target)
        for name, targets in graph.items()
        for target in targets
        if _top(target) != _top(name) and _is_private_module(target)
    }


def _disallowed(crossings: set[tuple[str, str]]) -> list[str]:
    return sorted(
        f"{name} -> {target}"
        for name, target in crossings
        if _top(name) not in PRIVATE_IMPORTS_ALLOWED.get(target, frozenset())
    )


def test_no_module_imports_a_private_module_of_another_package() -> None:
    crossings = _private_crossings(_graph())
    assert _disallowed(crossings) == [], (
        "import the public face (or move the shared piece to a shared layer such as "
        "langgraph_recall._memory) instead of another package's private module"
    )
    used = {(target, _top(name)) for name, target in crossings}
    stale = sorted(
        f"{target}: {top}"
        for target, tops in PRIVATE_IMPORTS_ALLOWED.items()
        for top in tops
        if (target, top) not in used
    )
    assert stale == [], f"no longer needed, remove from PRIVATE_IMPORTS_ALLOWED: {stale}"


def test_the_private_import_rule_catches_a_crossing() -> None:
    graph = {
        "langgraph_recall.middleware.memory": {"langgraph_recall.nodes._base"},
        "langgraph_recall.nodes.retrieve": {
            "langgraph_recall.store._plan",
            "langgraph_recall.store._capabilities",  # allowed for nodes
            "langgraph_recall.nodes._base",  # its own package
        },
        "langgraph_recall.erasure": {
            "langgraph_recall.store.postgres._bulk",  # allowed for bench only
            "langgraph_recall._memory.registry",  # a shared layer
        },
    }
    assert _disallowed(_private_crossings(graph)) == [
        "langgraph_recall.erasure -> langgraph_recall.store.postgres._bulk",
        "langgraph_recall.middleware.memory -> langgraph_recall.nodes._base",
        "langgraph_recall.nodes.retrieve -> langgraph_recall.store._plan",
    ]


def test_the_memory_layer_imports_nothing_users_import() -> None:
    """``_memory`` is below the nodes, the middleware, the episodes, the graphs and the
    erasure: each of them may use it, it uses none of them."""
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in _graph().items()
        if _top(name) == "_memory"
        for target in targets
        if _top(target) in USER_FACING
    )
    assert upward == []
