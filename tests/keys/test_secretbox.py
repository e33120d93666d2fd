"""The deployment key ring and sealing secrets at rest under it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from licensegate import keyring
from licensegate.config import ConfigError
from licensegate.secretbox import SecretBox, SecretBoxError, is_sealed


def box_in(folder: Path) -> SecretBox:
    return SecretBox(keyring.load_or_create(folder))


def test_the_key_file_is_made_once_with_mode_0600(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    first = keyring.load_or_create(folder)
    path = folder / keyring.KEY_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert keyring.load_or_create(folder).keys == first.keys
    assert [p.name for p in folder.iterdir()] == [keyring.KEY_FILE_NAME]  # no temporary left behind


def test_processes_starting_together_agree_on_one_key(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    code = (
        "import sys; from pathlib import Path; from licensegate import keyring; "
        "print(keyring.load_or_create(Path(sys.argv[1])).current_id)"
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", code, str(folder)], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    ids = {p.communicate(timeout=60)[0].strip() for p in processes}
    assert ids == {keyring.load_or_create(folder).current_id}


def test_sealed_values_open_only_for_their_purpose(tmp_path: Path) -> None:
    box = box_in(tmp_path)
    sealed = box.seal("s3cr3t ü", "apps.secret")
    assert is_sealed(sealed)
    assert "s3cr3t" not in sealed
    assert box.open(sealed, "apps.secret") == "s3cr3t ü"
    assert box.seal("s3cr3t ü", "apps.secret") != sealed  # a fresh nonce each time
    with pytest.raises(SecretBoxError):
        box.open(sealed, "users.otp_secret")
    tampered = sealed[:-2] + ("A" if sealed[-2] != "A" else "B") + sealed[-1]
    with pytest.raises(SecretBoxError) as caught:
        box.open(tampered, "apps.secret")
    assert "s3cr3t" not in str(caught.value)
    with pytest.raises(SecretBoxError):
        box.open("not sealed", "apps.secret")


def test_a_value_sealed_under_another_deployment_key_is_a_clear_error(tmp_path: Path) -> None:
    sealed = box_in(tmp_path / "one").seal("x", "p")
    with pytest.raises(SecretBoxError, match="every node needs the same deployment key"):
        box_in(tmp_path / "two").open(sealed, "p")


def test_configured_keys_and_old_keys(tmp_path: Path) -> None:
    old, new = keyring.new_key(), keyring.new_key()
    sealed_old = SecretBox(keyring.from_config(old.hex(), ())).seal("v", "p")
    box = SecretBox(keyring.load(tmp_path, new.hex(), (old.hex(),)))
    assert box.open(sealed_old, "p") == "v"
    assert box.needs_resealing(sealed_old)
    assert not box.needs_resealing(box.seal("v", "p"))
    assert not (tmp_path / keyring.KEY_FILE_NAME).exists()  # configuration wins: no file made
    with pytest.raises(ConfigError, match="64 hex"):
        keyring.from_config("abc", ())


def test_a_worker_picks_up_a_key_file_rotated_by_another_process(tmp_path: Path) -> None:
    worker = box_in(tmp_path)
    ring = keyring.read_key_file(tmp_path / keyring.KEY_FILE_NAME)
    rotated = keyring.Keyring((keyring.new_key(), *ring.keys), ring.path)
    assert ring.path is not None
    keyring.replace_key_file(ring.path, rotated.keys)
    sealed = SecretBox(rotated).seal("v", "p")
    assert worker.open(sealed, "p") == "v"
    assert worker.current_key_id == rotated.current_id


def test_a_key_file_readable_by_others_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keyring.load_or_create(tmp_path)
    os.chmod(tmp_path / keyring.KEY_FILE_NAME, 0o644)
    keyring.load_or_create(tmp_path)
    assert "readable by others" in caplog.text
