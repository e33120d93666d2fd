"""Settings: read from the environment as declared, validated with one clear message, and
documented in docs/operations.md exactly as declared."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

import pytest

from licensegate import config
from licensegate.config import ConfigError, Settings

ROOT = Path(__file__).resolve().parent.parent
OPERATIONS = ROOT / "docs" / "operations.md"


def from_env(**variables: str) -> Settings:
    return Settings.from_env({config.ENV_PREFIX + name: value for name, value in variables.items()})


def test_every_default_is_a_value_its_own_rule_accepts() -> None:
    defaults = Settings()
    for declared in config.declared():
        rule: config.Rule = declared.metadata["rule"]
        assert rule.doc.strip(), f"{declared.name} has no description"
        value = getattr(defaults, declared.name)
        if isinstance(value, int) and rule.minimum is not None:
            assert value >= rule.minimum, declared.name
        if rule.choices:
            assert value in rule.choices, declared.name


def test_an_empty_environment_gives_the_defaults() -> None:
    assert Settings.from_env({}) == Settings()
    assert from_env(PORT="  ", REDIS_URL="") == Settings()
    assert Settings().database_url == "sqlite:///data/licensegate.db"


def test_each_kind_of_setting_is_read() -> None:
    read = from_env(
        DATA_DIR="/srv/lg",
        PORT=" 9000 ",
        REDIS_URL="redis://127.0.0.1:6379/2",
        LOG_LEVEL="INFO",
        TRUSTED_PROXIES="10.0.0.0/8; ::1,",
        OUTBOUND_ALLOW="svc.internal, 127.0.0.1",
        PUBLIC_URL="https://lg.example/",
        SHUTDOWN_DRAIN="0",
    )
    assert read.data_dir == Path("/srv/lg")
    assert read.database_url == "sqlite:////srv/lg/licensegate.db"  # follows the data folder
    assert read.port == 9000
    assert read.redis_url == "redis://127.0.0.1:6379/2"
    assert read.log_level == "info"
    assert read.trusted_proxies == (ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("::1"))
    assert read.outbound_allow == ("svc.internal", "127.0.0.1")
    assert read.public_url == "https://lg.example"
    assert read.shutdown_drain == 0
    assert from_env(DATABASE_URL="postgresql://x@h/db", DATA_DIR="d").database_url == "postgresql://x@h/db"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("WORKERS", "many", "LICENSEGATE_WORKERS must be a whole number, got 'many'"),
        ("WORKERS", "0", "LICENSEGATE_WORKERS must be at least 1, got 0"),
        ("SHUTDOWN_DRAIN", "-1", "LICENSEGATE_SHUTDOWN_DRAIN must be at least 0, got -1"),
        ("LOG_LEVEL", "loud", "LICENSEGATE_LOG_LEVEL must be one of debug, info, warning, error, got 'loud'"),
        ("SMTP_SECURITY", "ssl", "LICENSEGATE_SMTP_SECURITY must be one of starttls, tls, none, got 'ssl'"),
        (
            "TRUSTED_PROXIES",
            "10.0.0.1, proxy",
            "LICENSEGATE_TRUSTED_PROXIES: 'proxy' is not an IP address or CIDR",
        ),
    ],
)
def test_an_unusable_value_names_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        from_env(**{name: value})
    assert str(raised.value) == message


def test_operations_guide_documents_every_setting_as_declared() -> None:
    page = OPERATIONS.read_text()
    assert config.with_markdown_table(page) == page, (
        "the settings table of docs/operations.md is stale: run `.venv/bin/licensegate reference`"
    )


def test_the_docs_name_no_setting_that_does_not_exist() -> None:
    names = {config.env_name(declared) for declared in config.declared()}
    for page in (OPERATIONS, ROOT / "README.md"):
        for mentioned in re.findall(r"LICENSEGATE_[A-Z0-9_]*\*?", page.read_text()):
            if mentioned.endswith("*"):  # a family, such as LICENSEGATE_SMTP_*
                assert any(name.startswith(mentioned[:-1]) for name in names), f"{page.name}: {mentioned}"
            else:
                assert mentioned in names, f"{page.name} names {mentioned}, which is not a setting"


def test_the_table_markers_must_be_there() -> None:
    with pytest.raises(ConfigError, match="markers are missing"):
        config.with_markdown_table("# Operations\n")
