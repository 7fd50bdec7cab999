"""The timeline of one training iteration, shared by the data/expert/tensor/pipeline simulator (``simulate.py``)
and the hybrid one on switched clusters (``hybrid.py``); direct-connect paper App. A.4, Fig. 16, issue 57.

* ``Streams``: the compute stream and the communication stream (one collective at a time, in issue order); a
  blocking collective (all-to-all, TP, PP) holds the compute stream until it ends;
* ``Event``, ``CollectiveCost``, ``Iteration``: the timeline's bars, the collectives priced, the result;
  ``finish_iteration`` checks that compute + exposed allreduce + all-to-all adds up to the iteration exactly;
* times are whole multiples of 2^-20 ms (``quantized``), so those sums are exact in floating point up to
  ``MAX_ITERATION_MS``;
* ``best_bucket``: PyTorch DDP's bucket capacity (``BUCKETS``: 1 MB, 10 MB, 100 MB, 1 GB, MB = 2^20 bytes as the
  paper's tables), "best" = least iteration time; ``even_stages``: GPipe's contiguous stages of about equal compute.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .jobs import Layer, TrainingError

MB = 2 ** 20
BUCKETS = {"1MB": MB, "10MB": 10 * MB, "100MB": 100 * MB, "1GB": 1024 * MB}
MAX_ITERATION_MS = float(2 ** 32)
_Q = float(2 ** 20)


def quantized(ms: float) -> float:
    """``ms`` rounded to a whole multiple of 2^-20 ms (module docstring)."""
    return round(ms * _Q) / _Q


@dataclass(frozen=True)
class Event:
    """One bar of the timeline (App. A.4 Fig. 16)."""

    stream: str       # "compute" | "comm"
    kind: str         # "forward" | "backward" | "allreduce" | "alltoall" | "tp" | "pp"
    label: str        # layer or bucket name
    start_ms: float
    end_ms: float
    bytes: float | None = None


@dataclass(frozen=True)
class CollectiveCost:
    """One row per (collective, size) priced: how many of them one iteration runs and what one costs."""

    collective: str
    bytes: float
    count: int
    ms_each: float
    priced_by: str
    algo: str | None = None


@dataclass(frozen=True)
class Iteration:
    """One simulated iteration (``simulate``'s docstring). ``deps``: for each timeline event, the events it waited for
    (indices into ``timeline``); ``notes``: how each figure was obtained."""

    design: str
    nodes: int
    model: str
    parallel: str
    gpu: str
    iteration_ms: float
    compute_ms: float
    allreduce_exposed_ms: float
    alltoall_ms: float
    bucket_bytes: float | None
    collectives: tuple[CollectiveCost, ...]
    timeline: tuple[Event, ...]
    deps: tuple[tuple[int, ...], ...] = ()
    buckets_tried: tuple[tuple[float, float], ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def alltoall_share(self) -> float:
        return self.alltoall_ms / self.iteration_ms if self.iteration_ms else 0.0

    def as_dict(self) -> dict:
        """JSON-safe (the CLI's ``--json``)."""
        return {"design": self.design, "nodes": self.nodes, "model": self.model, "parallel": self.parallel,
                "gpu": self.gpu, "iteration_ms": self.iteration_ms, "compute_ms": self.compute_ms,
                "allreduce_exposed_ms": self.allreduce_exposed_ms, "alltoall_ms": self.alltoall_ms,
                "alltoall_share": self.alltoall_share, "bucket_bytes": self.bucket_bytes,
                "buckets_tried": [{"bucket_bytes": b, "iteration_ms": t} for b, t in self.buckets_tried],
                "collectives": [c.__dict__.copy() for c in self.collectives],
                "timeline": [e.__dict__.copy() for e in self.timeline], "notes": list(self.notes)}

    def trace_ops(self) -> list[dict]:
        """The timeline as operations for an execution trace (Chakra): compute ops with their duration in ns,
        collectives with their bytes, each with the indices of the ops it depends on (stream order and waits)."""
        ops = []
        for i, e in enumerate(self.timeline):
            deps = list(self.deps[i]) if i < len(self.deps) else []
            if e.stream == "compute":
                ops.append({"kind": "compute", "ns": round((e.end_ms - e.start_ms) * 1e6), "label": e.label,
                            "deps": deps})
            else:
                kind = "alltoall" if e.kind == "alltoall" else "allreduce"
                ops.append({"kind": kind, "bytes": float(e.bytes or 0.0), "label": e.label, "deps": deps,
                            "what": e.kind})
        return ops


class Streams:
    def __init__(self):
        self.events: list[Event] = []
        self.deps: list[tuple[int, ...]] = []
        self.compute_free = 0.0
        self.comm_free = 0.0
        self.last_compute: int | None = None
        self.last_comm: int | None = None
        self.compute_ms = 0.0
        self.alltoall_ms = 0.0

    def _add(self, event: Event, deps) -> int:
        self.events.append(event)
        self.deps.append(tuple(sorted({d for d in deps if d is not None})))
        return len(self.events) - 1

    def compute(self, kind: str, label: str, ms: float, wait: int | None = None) -> int:
        start = self.compute_free
        ms = quantized(ms)
        i = self._add(Event("compute", kind, label, start, start + ms), (self.last_compute, wait))
        self.compute_free = start + ms
        self.compute_ms += ms
        self.last_compute = i
        return i

    def comm(self, kind: str, label: str, ms: float, nbytes: float, blocking: bool) -> int:
        """A collective issued now (after the last compute): it starts when the stream is free; ``blocking``
        (all-to-all, TP, PP): the compute stream waits for its end."""
        ms = quantized(ms)
        start = max(self.compute_free, self.comm_free)
        i = self._add(Event("comm", kind, label, start, start + ms, nbytes), (self.last_compute, self.last_comm))
        self.comm_free = start + ms
        self.last_comm = i
        if blocking:
            self.compute_free = start + ms
            if kind == "alltoall":
                self.alltoall_ms += ms
        return i

    @property
    def end(self) -> float:
        return max(self.compute_free, self.comm_free)


def even_stages(layers: Sequence[Layer], stages: int) -> list[list[Layer]]:
    """Contiguous stages of about equal forward + backward compute (a greedy cut at each 1/stages of the total)."""
    total = sum(l.forward_ms + l.backward_ms for l in layers)
    out: list[list[Layer]] = [[] for _ in range(stages)]
    done, k = 0.0, 0
    for i, layer in enumerate(layers):
        left_layers, left_stages = len(layers) - i, stages - k
        if out[k] and (done >= total * (k + 1) / stages or left_layers <= left_stages - 1) and k < stages - 1:
            k += 1
        out[k].append(layer)
        done += layer.forward_ms + layer.backward_ms
    return out


def finish_iteration(s: Streams, design: str, nodes: int, model: str, parallel: str, gpu_name: str, bucket,
                     prices, tried, notes) -> Iteration:
    """The ``Iteration`` of the streams ``s``; ``prices`` is anything whose ``rows()`` gives the collectives
    priced. TrainingError, one line, where the times pass what this simulator adds exactly."""
    end = s.end
    compute, a2a = s.compute_ms, s.alltoall_ms
    exposed = end - compute - a2a
    if not (end <= MAX_ITERATION_MS and exposed >= 0 and compute + exposed + a2a == end):
        # times are whole multiples of 2^-20 ms, so the sums are exact up to 2^33 ms; a profile of huge times
        # (the reader takes numbers up to 1e18) goes past that
        raise TrainingError(f"an iteration of {end:.4g} ms is more than this simulator adds exactly "
                            f"({MAX_ITERATION_MS:.4g} ms, about 49 days): check the profile's times")
    return Iteration(design, nodes, model, parallel, gpu_name, end, compute, exposed, a2a, bucket, prices.rows(),
                     tuple(s.events), tuple(s.deps), tuple(tried), tuple(notes))


def best_bucket(bucket, run, notes: list):
    """DDP's bucket (App. A.4): ``run(cap) -> (streams, extra)`` for each capacity ``bucket`` names ("best": the
    four of ``BUCKETS``); the one of least iteration time, the first on a tie, as (cap, streams, extra, tried),
    ``tried`` the (cap, time) of every capacity when there was a choice (a note says so), else empty."""
    caps = _caps(bucket)
    best, tried = None, []
    for cap in caps:
        s, extra = run(cap)
        tried.append((cap, s.end))
        if best is None or s.end < best[1].end:
            best = (cap, s, extra)
    if len(caps) > 1:
        notes.append(f"bucket: best of {', '.join(_name(c) for c in caps)} by iteration time")
    return (*best, tried if len(caps) > 1 else ())


def _name(cap: float) -> str:
    for k, v in BUCKETS.items():
        if v == cap:
            return k
    return f"{cap:g} B"


def _caps(bucket) -> list[float]:
    if bucket is None or bucket == "best":
        return list(BUCKETS.values())
    if isinstance(bucket, str):
        key = bucket.strip().upper().replace(" ", "").replace("IB", "B")
        for k, v in BUCKETS.items():
            if key == k.upper():
                return [float(v)]
        try:
            value = float(bucket)
        except ValueError:
            raise TrainingError(f"unknown bucket {bucket[:20]!r} (best, {', '.join(BUCKETS)}, or bytes)") from None
        return _caps(value)
    if isinstance(bucket, bool) or not isinstance(bucket, (int, float)) or not math.isfinite(bucket) or bucket <= 0:
        raise TrainingError(f"a bucket capacity must be a positive number of bytes, got {bucket!r}"[:100])
    return [float(bucket)]
