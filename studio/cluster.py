"""Where sweeps run: an embedded Dask ``LocalCluster`` (the default: no service to start) or an existing Dask
cluster by its scheduler's address. Either way the sweep sees a ``concurrent.futures.Executor`` (Dask's
``Client.get_executor``), so ``solvers.sweep`` knows nothing of Dask."""
from __future__ import annotations

import logging
import os
import sys
from contextlib import contextmanager
from typing import Iterator


class ClusterError(RuntimeError):
    """A scheduler that cannot be reached, or a local cluster that does not start; one line."""


@contextmanager
def _main_not_rerun() -> Iterator[None]:
    """While worker processes start: a ``__main__`` run from a file (a Streamlit page, which the script runner
    installs as ``__main__``; pytest's AppTest leaves its own there) without its ``__file__``, so that
    multiprocessing's spawn does not run that script again in every worker (where it would draw the page, or fail)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or getattr(getattr(main, "__spec__", None), "name", None):
        yield                               # a module run with -m, or an interactive main: spawn imports by name
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


@contextmanager
def executor(scheduler: str | None = None, workers: int | None = None) -> Iterator[tuple[object, str, int]]:
    """(an Executor, a one-line description, its worker count). ``scheduler``: 'tcp://host:8786' of a running Dask cluster; else a
    LocalCluster of ``workers`` single-threaded worker processes (default: one per CPU), closed on exit; ``workers``
    0: no cluster, the tasks run one after another in this process (small runs, where starting workers costs more
    than the work)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:                       # requirements.txt has it; a trimmed install may not
        raise ClusterError("sweeps need Dask's distributed package (pip install -r requirements.txt)") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="5s")
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"no Dask scheduler answers at {scheduler} ({type(exc).__name__})") from None
        try:
            n = len(client.scheduler_info().get("workers", {}))
            yield client.get_executor(), f"the Dask cluster at {scheduler} ({n} workers)", max(n, 1)
        finally:
            client.close()
        return
    if workers == 0 and not scheduler:        # no cluster: the tasks run one at a time in this process
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=1) as pool:
            yield pool, "this process", 1
        return
    count = workers or os.cpu_count() or 1
    try:
        with _main_not_rerun():
            cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
    except Exception as exc:                  # noqa: BLE001 - any start-up failure becomes one line
        raise ClusterError(f"the local Dask cluster did not start ({type(exc).__name__}: {exc})") from None
    client = Client(cluster)
    try:
        yield client.get_executor(), f"an embedded Dask LocalCluster ({count} worker processes)", count
    finally:
        client.close()
        cluster.close()
