"""`serve`'s start-up work, tried again in the background while the database cannot be used.

`serve` checks the schema before its workers start (an empty database is migrated, one behind is
refused) and gives applications their keys. When the database cannot be used at that moment
(down, not accepting a connection within `LICENSEGATE_PG_TIMEOUT`, locked by another program),
`serve` starts its workers all the same (they answer what needs the database with 503 until it
is back) and runs that work in a process of its own (`keep_trying`), which tries again after
1 s, then twice as long each time up to 30 s, until it is done. A process, not a thread: Granian
forks its workers from `serve`, and a fork taken while a thread held a database connection would
leave the connection open in every worker. A database that answers but is refused (its schema is
behind) stops `serve`, as it would have at start.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable

from licensegate.store.database import DatabaseError, DatabaseUnavailable

FIRST_WAIT = 1.0  # seconds before the first try again
LONGEST_WAIT = 30.0  # seconds between tries, at most
REFUSED = 3  # the exit status of the background process when the database was refused


def say(text: str) -> None:
    print(f"licensegate: {text}", file=sys.stderr, flush=True)


def stop(pid: int) -> None:
    os.kill(pid, signal.SIGTERM)  # `serve` stops its workers and exits


def keep_trying(attempt: Callable[[], None], parent: int, stop: Callable[[int], None] = stop) -> int:
    """Call `attempt` until it returns (0), while it raises `DatabaseUnavailable` (each new reason
    said once); a refusal (`DatabaseError`) is said and stops `parent` (`REFUSED`). Gives up when
    `parent` is gone (1)."""
    wait, said = FIRST_WAIT, ""
    while True:
        time.sleep(wait)
        if os.getppid() != parent:
            return 1  # `serve` ended without stopping this process
        try:
            attempt()
        except DatabaseUnavailable as exc:
            if str(exc) != said:
                said = str(exc)
                say(f"the database still cannot be used ({exc}); trying again")
            wait = min(wait * 2, LONGEST_WAIT)
            continue
        except DatabaseError as exc:
            say(f"{exc}; stopping")
            stop(parent)
            return REFUSED
        say("the database answers: schema checked, start-up work done")
        return 0
