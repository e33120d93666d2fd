"""The dependency rule, read from the import graph: `api/` and `web/` -> `operations/` -> `domain/`
-> `store/`, never the other way, and nothing reaches past a layer into `store/` but for the
database types. Entry points (`app.py`, `cli.py`) may import anything; nothing imports them,
`api/` or `web/`."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "licensegate"
LAYERS = ("api", "web", "operations", "domain", "store")
# Besides itself, third-party code and the top-level support modules (config, ids, services, ...),
# each layer may import these layers.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "api": frozenset({"operations", "domain"}),
    "web": frozenset({"operations", "domain"}),
    "operations": frozenset({"domain"}),
    "domain": frozenset({"store"}),
    "store": frozenset(),
}
# Support modules (at the top of the package) serve every layer, so they import no layer above
# the domain.
SUPPORT_MAY_IMPORT = frozenset({"domain", "store"})
# The Database/Row types may be named above the domain (a call object holds its database handle).
TYPES_ONLY = frozenset({"licensegate.store.database"})
ENTRY_POINTS = frozenset({"licensegate.app", "licensegate.cli", "licensegate.__main__"})


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # what it imports: a module, or a name inside one
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(root: Path) -> list[Import]:
    """Every import of the package's own modules, at any depth of the code (lazy ones too)."""
    found: list[Import] = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: resolved against the importing package
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            found += [Import(module, t, node.lineno) for t in targets if t.split(".")[0] == root.name]
    return found


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def violations(root: Path) -> list[str]:
    """One line per import against the rule."""
    bad: list[str] = []
    for imp in imports_in(root):
        target_module = imp.target
        source, target = layer_of(imp.module), layer_of(imp.target)
        where = f"{imp.module}:{imp.line} imports {imp.target}"
        if imp.module in ENTRY_POINTS:
            continue
        if any(target_module == e or target_module.startswith(e + ".") for e in ENTRY_POINTS):
            bad.append(f"{where}: nothing imports an entry point")
            continue
        if source == target or target is None:
            continue
        if any(target_module == t or target_module.startswith(t + ".") for t in TYPES_ONLY):
            continue
        allowed = SUPPORT_MAY_IMPORT if source is None else MAY_IMPORT[source]
        if target not in allowed:
            who = "a support module" if source is None else f"{source}/"
            bad.append(f"{where}: {who} may not import {target}/")
    return bad


def test_the_package_follows_the_dependency_rule() -> None:
    assert violations(PACKAGE) == []


# --- the checker itself, on fabricated packages -------------------------------------------------


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "licensegate"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            (root / parent / "__init__.py").touch()
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"domain/users.py": "from licensegate.operations import declarations\n"},
            "domain/ may not import operations/",
        ),
        ({"domain/users.py": "import licensegate.api.envelope\n"}, "domain/ may not import api/"),
        ({"store/users.py": "from licensegate.domain import errors\n"}, "store/ may not import domain/"),
        ({"api/endpoint.py": "from licensegate.store import users\n"}, "api/ may not import store/"),
        (
            {"operations/x.py": "from licensegate.store.users import find\n"},
            "operations/ may not import store/",
        ),
        ({"web/page.py": "from licensegate.api.request import read_query\n"}, "web/ may not import api/"),
        ({"api/endpoint.py": "from licensegate.web import page\n"}, "api/ may not import web/"),
        (
            {"operations/x.py": "def f():\n    from licensegate.api import envelope\n"},
            "operations/ may not import api/",
        ),
        (
            {"services.py": "from licensegate.operations import invoke\n"},
            "a support module may not import operations/",
        ),
        ({"domain/x.py": "from licensegate import app\n"}, "nothing imports an entry point"),
        ({"store/users.py": "from ..domain import errors\n"}, "store/ may not import domain/"),
    ],
)
def test_the_checker_reports_an_import_against_the_rule(
    tmp_path: Path, files: dict[str, str], expected: str
) -> None:
    [problem] = violations(_package(tmp_path, files))
    assert expected in problem


def test_the_checker_accepts_imports_along_the_rule(tmp_path: Path) -> None:
    root = _package(
        tmp_path,
        {
            "app.py": "from licensegate.api import x\nfrom licensegate.web import y\n",
            "__main__.py": "from licensegate.cli import main\n",
            "api/x.py": "from licensegate.operations import invoke\nfrom licensegate.domain import x\n",
            "web/page.py": "from licensegate.operations import invoke\nfrom licensegate import bodies\n",
            "operations/x.py": "from licensegate.domain import x\nfrom licensegate.store.database import D\n",
            "domain/users.py": "from licensegate.store import users\nfrom licensegate import ids\n",
            "store/users.py": "from licensegate.store.database import Row\nimport sqlite3\n",
            "services.py": "from licensegate.store.database import Db\nfrom licensegate.domain import x\n",
        },
    )
    assert violations(root) == []
