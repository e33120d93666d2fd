"""License key text from a mask: each `*` becomes a random character, every other character is
copied as written. Randomness comes from `secrets` (the operating system's CSPRNG), because a
license key is a bearer secret."""

from __future__ import annotations

import secrets
import string

from licensegate.domain import errorcodes

PLACEHOLDER = "*"
DEFAULT_MASK = "******-******-******-******-******-******"
MAX_KEY_LENGTH = 128

# KeyAuth's `character` values; digits are always part of the alphabet.
MIXED, UPPER, LOWER = 1, 2, 3
ALPHABETS: dict[int, str] = {
    MIXED: string.digits + string.ascii_lowercase + string.ascii_uppercase,
    UPPER: string.digits + string.ascii_uppercase,
    LOWER: string.digits + string.ascii_lowercase,
}

# Keys travel one per line (text format) and comma or space separated (delmultiple), so they
# may not contain those separators.
_FORBIDDEN = frozenset(",")


def alphabet(character: int) -> str:
    try:
        return ALPHABETS[character]
    except KeyError:
        raise errorcodes.INVALID_PARAMETER(
            "Parameter 'character' must be 1 (mixed case), 2 (upper case) or 3 (lower case).",
            param="character",
        ) from None


def check_mask(mask: str) -> str:
    """Refuse masks that would make keys which cannot be listed or named safely."""
    if not mask:
        raise errorcodes.INVALID_MASK("The mask must not be empty.")
    if len(mask) > MAX_KEY_LENGTH:
        raise errorcodes.INVALID_MASK(f"The mask must be at most {MAX_KEY_LENGTH} characters.")
    for ch in mask:
        if ch.isspace() or ch in _FORBIDDEN or ord(ch) < 32 or ord(ch) == 127:
            raise errorcodes.INVALID_MASK()
    return mask


def is_custom(mask: str) -> bool:
    """A mask without placeholders is a fixed, custom key."""
    return PLACEHOLDER not in mask


def fill(mask: str, character: int = MIXED) -> str:
    """One key from the mask."""
    chars = alphabet(character)
    return "".join(secrets.choice(chars) if ch == PLACEHOLDER else ch for ch in mask)
