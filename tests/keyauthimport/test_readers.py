"""The dump and live-server readers give the same records, as KeyAuth meant them."""

from __future__ import annotations

from pathlib import Path

import pytest

from licensegate.domain.keyauthimport import dumpfile
from licensegate.domain.keyauthimport import records as r
from licensegate.domain.keyauthimport.dumpfile import DumpError, DumpSource
from licensegate.domain.keyauthimport.mysqlread import MySqlSource
from tests import keyauthdb
from tests.keyauthdb import ALPHA, BETA, KeyAuthData

KINDS = list(r.TABLES)


def everything(source: DumpSource | MySqlSource) -> dict[str, list[r.Record]]:
    out: dict[str, list[r.Record]] = {}
    for app in source.apps():
        for kind in KINDS:
            out[f"{app.name}/{kind.__name__}"] = list(source.rows(kind, app.secret))
    return out


def test_dump_reads_what_keyauth_wrote(keyauth_dump: Path) -> None:
    with DumpSource(keyauth_dump) as source:
        apps = {a.name: a for a in source.apps()}
        assert set(apps) == {ALPHA.name, BETA.name}
        alpha = apps[ALPHA.name]
        assert (alpha.ownerid, alpha.secret, alpha.sellerkey, alpha.ver) == (
            ALPHA.ownerid,
            ALPHA.secret,
            ALPHA.sellerkey,
            "2.1",
        )
        assert alpha.columns["keynotfound"] == "That license does not exist."
        assert alpha.columns["hwidmismatch"] == "HWID Doesn't match."
        assert alpha.columns["cooldown"] == 3 * keyauthdb.DAY
        keys = {k.key: k for k in source.rows(r.Key, ALPHA.secret)}
        assert keys[keyauthdb.FREE_KEY].note == keyauthdb.NOTE
        assert keys[keyauthdb.FREE_KEY].expires == 7 * keyauthdb.DAY
        assert keys[keyauthdb.USED_KEY].status == "Used"
        assert keys[keyauthdb.BANNED_KEY].banned == "chargeback"
        assert keyauthdb.FREE_KEY.lower() in keys
        users = list(source.rows(r.User, ALPHA.secret))
        assert [u.username for u in users].count("carol") == 2
        alice = next(u for u in users if u.username == "alice")
        assert alice.hwid == "".join(keyauthdb.HWIDS["alice"])
        assert alice.password is not None
        assert alice.password.startswith("$2y$10$")
        assert alice.email == keyauthdb.email_sha1("alice@example.com")
        paused = [s for s in source.rows(r.Sub, ALPHA.secret) if s.paused]
        assert [(s.user, s.expiry) for s in paused] == [("dave", keyauthdb.PAUSED_LEFT)]
        team = {m.username: m for m in source.rows(r.TeamMember, ALPHA.secret)}
        assert set(team) == {"res1", "man1"}
        assert team["man1"].permissions == 0b10110011011
        assert team["res1"].balance == "10|5|2|0|0|1"
        assert next(v.msg for v in source.rows(r.Var, ALPHA.secret)) == "Welcome back, ünïcödé ✓"
        assert [v.data for v in source.rows(r.UserVar, ALPHA.secret) if v.name == "theme"] == [
            "dark ' \\ mode"
        ]
        assert next(m.message for m in source.rows(r.ChatMessage, ALPHA.secret)) == "hello; (world), 'quoted'"
        assert len(list(source.rows(r.Log, ALPHA.secret))) == 2
        assert [u.username for u in source.rows(r.User, BETA.secret)] == ["zed"]
        assert source.read_at > 0


def test_dump_options_and_live_server_agree(
    keyauth_db: KeyAuthData, keyauth_dump: Path, tmp_path: Path
) -> None:
    """Extended or one-row INSERTs, with column lists and hex blobs, and the live server: the same."""
    with DumpSource(keyauth_dump) as source:
        expected = everything(source)
    other = keyauthdb.dump(
        keyauth_db.database,
        tmp_path / "other.sql",
        "--skip-extended-insert",
        "--complete-insert",
        "--hex-blob",
    )
    with DumpSource(other) as source:
        assert everything(source) == expected
    live = MySqlSource(keyauthdb.url(keyauth_db.database))
    assert everything(live) == expected
    assert abs(live.read_at - source.read_at) < 24 * 3600


def test_small_buffers_cut_values_anywhere(keyauth_dump: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A value or a line cut by the end of a read is read whole (bounded reads of any size)."""
    with DumpSource(keyauth_dump) as source:
        expected = everything(source)
    for size in (7, 64, 333):
        monkeypatch.setattr(dumpfile, "CHUNK", size)
        monkeypatch.setattr(dumpfile, "PIECE", size)
        with DumpSource(keyauth_dump) as source:
            assert everything(source) == expected


def test_one_application(keyauth_dump: Path) -> None:
    with DumpSource(keyauth_dump, app_name=BETA.name) as source:
        assert [a.name for a in source.apps()] == [BETA.name]
        assert list(source.rows(r.User, ALPHA.secret)) == []


def test_bit_values_and_binary_strings(tmp_path: Path) -> None:
    dump = tmp_path / "bits.sql"
    dump.write_bytes(
        b"CREATE TABLE `apps` (\n  `name` varchar(40),\n  `secret` varchar(64),\n  `ownerid` varchar(39),\n"
        b"  `owner` varchar(65),\n  `sellerkey` varchar(32),\n  `enabled` int(1)\n) ENGINE=InnoDB;\n"
        b"INSERT INTO `apps` VALUES ('A','s1','o1','own',NULL,1);\n"
        b"CREATE TABLE `accounts` (\n  `username` varchar(65),\n  `role` varchar(65),\n  `app` varchar(65),\n"
        b"  `owner` varchar(49),\n  `permissions` bit(64)\n) ENGINE=InnoDB;\n"
        b"INSERT INTO `accounts` VALUES ('r1','Reseller','A','own',b'101'),"
        b"('r2','Manager','a ','OWN',_binary '\\0\\0\\0\\0\\0\\0\\0\\n'),('r3','seller',NULL,NULL,0x07);\n"
        b"-- Dump completed on 2026-01-02  3:04:05\n"
    )
    with DumpSource(dump) as source:
        assert source.read_at == 1767323045
        team = list(source.rows(r.TeamMember, "s1"))
        assert [(m.username, m.permissions) for m in team] == [("r1", 5), ("r2", 10)]


def test_not_a_keyauth_dump(tmp_path: Path) -> None:
    dump = tmp_path / "other.sql"
    dump.write_text("CREATE TABLE `x` (\n  `a` int\n);\nINSERT INTO `x` VALUES (1);\n")
    with pytest.raises(DumpError, match="apps"):
        DumpSource(dump)
