"""The README's commands, the operations guide's examples and `licensegate --help` checked against
the code, so that they cannot drift apart again: every subcommand is in the help's summary and in
the docs, every command the README shows exists with the options it uses (its PostgreSQL example is
run), and `create-app`'s output has the fields every page says it prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from licensegate.operations.client.registry import registry as client_registry
from licensegate.store import migrate
from tests import databases
from tests.live import LICENSEGATE, create_app_by_command

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OPERATIONS = ROOT / "docs" / "operations.md"
CLIENTS = ROOT / "docs" / "clients.md"
FENCE = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)


def _help(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "1000"}  # no wrapping (argparse breaks lines at hyphens)
    done = subprocess.run(
        [*LICENSEGATE, *args, "--help"], capture_output=True, text=True, check=True, timeout=60, env=env
    )
    return done.stdout


def subcommands() -> list[str]:
    usage = re.search(r"\{([a-z,-]+)\}", _help())
    assert usage is not None
    return usage.group(1).split(",")


def readme_commands() -> list[list[str]]:
    """Every command line of the README's code blocks, without comments and env assignments."""
    commands = []
    for block in FENCE.findall(README.read_text()):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if not line or line.startswith("#") or line.startswith(("{", "http")):
                continue
            words = shlex.split(line)
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                words.pop(0)
            if words:
                commands.append(words)
    return commands


def test_the_help_summary_names_every_subcommand() -> None:
    summary = " ".join(_help().split("\n\n")[1].split())
    names = subcommands()
    assert {"backup", "restore"} <= set(names)
    for name in names:
        assert name in summary, f"`licensegate --help` does not name {name} in its summary"


def test_every_subcommand_is_documented() -> None:
    docs = README.read_text() + "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    for name in subcommands():
        assert f"licensegate {name}" in docs, f"no doc shows `licensegate {name}`"


def test_every_command_the_readme_shows_exists_with_its_options() -> None:
    names = set(subcommands())
    seen = set()
    for words in readme_commands():
        program = words[0]
        seen.add(program)
        if program.startswith("./scripts/"):
            script = ROOT / program
            assert script.is_file(), program
            assert os.access(script, os.X_OK), program
        elif program == ".venv/bin/licensegate":
            assert words[1] in names, words
            usage = _help(words[1])
            for option in (w for w in words[2:] if w.startswith("--")):
                assert option in usage, f"`licensegate {words[1]}` has no {option}"
        elif program == "curl":
            url = next(w for w in words if w.startswith("http"))
            parts = urlsplit(url)
            kind = parse_qs(parts.query)["type"][0]
            if parts.path.startswith("/api/1."):
                assert client_registry.knows(kind), url
    assert {"./scripts/serve", "./scripts/test", ".venv/bin/licensegate", "curl", "createdb"} <= seen
    # `scripts/serve --workers 2` (the PostgreSQL example) is `licensegate serve --workers`.
    assert "--workers" in _help("serve")


def test_the_readme_postgresql_example_runs(tmp_path: Path) -> None:
    """Its `createdb` and `migrate`, with a database name of this test's own."""
    block = next(b for b in FENCE.findall(README.read_text()) if "createdb" in b)
    name = databases.unique_name("lgreadme")
    base = urlsplit(databases.POSTGRES_ADMIN_URL)
    databases.drop_database(name)
    try:
        for line in block.strip().splitlines():
            if "scripts/serve" in line:
                continue  # serving is what the live-server tests do
            line = line.replace(":5432/licensegate ", f":5432/{name} ")
            line = line.replace("127.0.0.1", base.hostname or "127.0.0.1")
            env = {**os.environ, "LICENSEGATE_DATA_DIR": str(tmp_path)}
            words = shlex.split(line)
            while re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                key, _, value = words.pop(0).partition("=")
                env[key] = value
            if words[0] == "createdb":
                words[-1] = name
            if words[0] == ".venv/bin/licensegate":
                words = [*LICENSEGATE, *words[1:]]
            done = subprocess.run(words, env=env, capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, (line, done.stderr)
    finally:
        databases.drop_database(name)


def _documented_keys(text: str, pattern: str) -> set[str]:
    found = re.search(pattern, text, re.S)
    assert found is not None, pattern
    return set(re.findall(r'"([a-z_]+)"', found.group(1)))


@pytest.mark.server
def test_create_app_prints_what_the_docs_say(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'docs.db'}"
    migrate.upgrade(url)
    printed = create_app_by_command(url, tmp_path, "you", "MyApp")
    keys = set(printed)
    assert keys == {"ownerid", "name", "sellerkey", "public_key", "secret"}
    assert (
        _documented_keys(OPERATIONS.read_text(), r"licensegate create-app --owner.*?prints[^`]*`(\{.*?\})`")
        == keys
    )
    assert _documented_keys(README.read_text(), r"create-app --owner you --name MyApp\n(.*?)```") == keys
    assert (
        _documented_keys(CLIENTS.read_text(), r"create-app --owner you --name MyApp` prints\n+```\n(.*?)```")
        == keys
    )
