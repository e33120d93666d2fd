"""`licensegate` with answers left unsigned: the bench's stand-in for measuring what signing costs
under load (bench/run.py --signing). Never a way to run the service: it exists only here.

    python bench/unsigned.py serve --port 8001 --workers 2
"""

from __future__ import annotations

import sys

from licensegate import cli, signing

UNSIGNED = "0" * signing.SIGNATURE_HEX


def _no_signature(_signer: signing.Signer, _message: bytes) -> str:
    return UNSIGNED


def main() -> int:
    # Granian forks its workers from this process, so they inherit the stand-in.
    signing.Signer.sign = _no_signature  # type: ignore[method-assign,assignment]
    return cli.main(sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
