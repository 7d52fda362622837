"""The console entry point. Importing the CLI (numpy, networkx, typer, rich) takes about 0.4 s;
a Ctrl-C, SIGTERM or SIGHUP in that time is answered as the CLI answers it later (a word on
stderr, exit 130, 143 or 129), not with a traceback from inside an import. Nothing has been
read or written yet, so there is nothing to clean up."""

from __future__ import annotations

import os
import signal
import sys


def _stop_while_starting(signum: int, frame: object) -> None:
    try:
        sys.stderr.write("interrupted\n" if signum == signal.SIGINT else "terminated\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    os._exit(130 if signum == signal.SIGINT else 128 + signum)


def main() -> None:
    stops = [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    replaced = {}
    for stop in stops:
        current = signal.getsignal(stop)
        if current in (signal.SIG_DFL, signal.default_int_handler):  # an inherited SIG_IGN (nohup) stays
            replaced[stop] = current
            signal.signal(stop, _stop_while_starting)
    from gangplan.cli import main as run

    for stop, handler in replaced.items():
        signal.signal(stop, handler)
    run()
