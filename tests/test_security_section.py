"""docs/operations.md's Security section lists every limit: each setting that bounds something is
named there (a new limit setting fails this test until the section lists it)."""

from __future__ import annotations

from pathlib import Path

from licensegate import config

OPERATIONS = Path(__file__).parent.parent / "docs" / "operations.md"

# Settings that bound nothing: where things are, who to trust, how to reach other services.
NOT_LIMITS = frozenset(
    {
        "data_dir",
        "files_dir",
        "database_url",
        "redis_url",
        "redis_prefix",
        "host",
        "port",
        "log_level",
        "public_url",
        "smtp_host",
        "smtp_port",
        "smtp_security",
        "smtp_user",
        "smtp_password",
        "smtp_from",
        "deployment_key",
        "deployment_old_keys",
        "dashboard_signup",
        "access_log",  # a switch
        "scheduling",  # a switch: how the kernel picks between the service's threads
        "metrics_token",  # a credential
        "count_flush_seconds",  # how often the overview's login counts are written
        "web_loader_port",  # where the customer panel looks for the desktop loader
    }
)


def security_section() -> str:
    page = OPERATIONS.read_text()
    start = page.index("\n## Security\n")
    end = page.index("\n## ", start + 1)
    return page[start:end]


def test_every_limit_setting_is_in_the_security_section() -> None:
    section = security_section()
    missing = [
        config.env_name(each)
        for each in config.declared()
        if each.name not in NOT_LIMITS and config.env_name(each) not in section
    ]
    assert missing == []


def test_the_settings_said_not_to_be_limits_exist() -> None:
    assert {each.name for each in config.declared()} >= NOT_LIMITS
