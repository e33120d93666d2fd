"""`licensegate-client` (clients/python/) on its own: built and installed into an empty virtual
environment (pip finds the dependencies where this machine's pip is configured to: its wheel folder,
local indexes, else the package registry), it brings only what it imports, imports nothing of the
server, and the runnable example of docs/clients.md, run there, licenses a key on a real server."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import LiveServer, seller_call

pytestmark = pytest.mark.server

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "python"
CLIENTS_DOC = ROOT / "docs" / "clients.md"
# What the client may bring: itself, its four dependencies and theirs (and the venv's own tools).
ALLOWED = {
    "licensegate-client",
    "httpx",
    "httpcore",
    "h11",
    "anyio",
    "sniffio",
    "idna",
    "certifi",
    "typing-extensions",
    "orjson",
    "pynacl",
    "cffi",
    "pycparser",
    "cryptography",
    "pip",
    "setuptools",
}


@pytest.fixture(scope="module")
def client_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("client-venv")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "venv")], check=True, timeout=300)
    python = folder / "venv" / "bin" / "python"
    wheels = folder / "dist"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    # Built from a copy: setuptools writes build/ and *.egg-info beside the sources it builds.
    source = folder / "source"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    built = subprocess.run(
        [str(python), "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("licensegate_client-*.whl")
    installed = subprocess.run(
        [str(python), "-m", "pip", "install", str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert installed.returncode == 0, installed.stderr
    return python


def test_the_package_brings_only_what_it_imports(client_venv: Path) -> None:
    listed = subprocess.run(
        [str(client_venv), "-m", "pip", "list", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    names = {entry["name"].lower().replace("_", "-") for entry in json.loads(listed.stdout)}
    assert "licensegate-client" in names
    assert names <= ALLOWED, names - ALLOWED
    imported = subprocess.run(
        [str(client_venv), "-c", "import licensegate_client as c; print(c.Client.__name__)"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=client_venv.parent,
    )
    assert (imported.returncode, imported.stdout.strip()) == (0, "Client"), imported.stderr


def test_the_package_imports_nothing_of_the_server() -> None:
    for path in (PACKAGE / "src" / "licensegate_client").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert name.split(".")[0] != "licensegate", f"{path.name} imports {name}"


def runnable_example() -> str:
    text = CLIENTS_DOC.read_text()
    section = text[text.index("A runnable program") :]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


def test_the_documented_example_runs_against_a_server(
    client_venv: Path, live_server: LiveServer, tmp_path: Path
) -> None:
    example = runnable_example()
    assert "asyncio.run(main())" in example  # no top-level `async with`: it runs as a script
    created = live_server.create_app("client-package", "MyApp")
    key = seller_call(live_server, created["sellerkey"], "add", expiry="1").json()["key"]
    program = tmp_path / "check_license.py"
    program.write_text(example)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LICENSEGATE_URL": live_server.url,
        "LICENSEGATE_OWNERID": created["ownerid"],
        "LICENSEGATE_APP": "MyApp",
        "LICENSEGATE_PUBLIC_KEY": created["public_key"],
        "LICENSE_KEY": key,
    }
    done = subprocess.run(
        [str(client_venv), str(program)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("licensed until "), done.stdout
    env["LICENSE_KEY"] = "NOT-A-KEY"
    refused = subprocess.run(
        [str(client_venv), str(program)], capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path
    )
    assert refused.stdout.startswith("refused: "), (refused.stdout, refused.stderr)
