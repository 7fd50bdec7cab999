"""The peak resident memory of this process and every process it forks, sampled while a block runs.

``ru_maxrss`` alone misses forked workers that run at the same time as their parent (BFB splits receivers
between processes); this sums the RSS of the process tree every ``interval`` seconds and keeps the largest sum,
which counts pages the processes share once per process (an upper bound on what the machine had to hold).
"""
from __future__ import annotations

import threading

import psutil


class PeakMemory:
    """``with PeakMemory() as peak: ...`` then ``peak.gb``: the largest sampled RSS sum of the tree, in GiB."""

    def __init__(self, interval: float = 0.02):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._me = psutil.Process()

    def _sample(self) -> None:
        total = 0
        for proc in [self._me] + self._me.children(recursive=True):
            try:
                total += proc.memory_info().rss
            except psutil.Error:            # a worker that ended between listing and reading
                pass
        self.peak = max(self.peak, total)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "PeakMemory":
        self._sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def gb(self) -> float:
        return self.peak / 2 ** 30
