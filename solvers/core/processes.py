"""Starting a worker process from a fork server without re-running the parent's main script in it.

A fork-server (or spawn) child first imports the parent's ``__main__`` by its file. In the app that file is the
page script Streamlit runs (the whole app would run again in every worker, in bare mode), under Streamlit's
AppTest it is a temporary script that cannot run outside it (the worker dies). Workers here need nothing from
``__main__``: their targets live in importable modules. ``start`` therefore shows the child a bare ``__main__``
while the process starts.
"""
from __future__ import annotations

import sys
import threading
import types

_LOCK = threading.Lock()


def start(process) -> None:
    """``process.start()`` with a bare ``__main__`` in place of the parent's for the child's preparation."""
    with _LOCK:
        main = sys.modules.get("__main__")
        bare = types.ModuleType("__main__")
        sys.modules["__main__"] = bare
        try:
            process.start()
        finally:
            # another thread (a Streamlit session starting its script) may have set its own meanwhile: keep that
            if sys.modules.get("__main__") is bare:
                if main is None:
                    del sys.modules["__main__"]
                else:
                    sys.modules["__main__"] = main
