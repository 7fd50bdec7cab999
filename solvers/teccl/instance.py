"""A TE-CCL instance: the topology cut into epochs, and the demand as chunks (TE-CCL digest sections 1, 2.2, 2.3).

Time. Every link e = (i, j) takes t_e = chunk_bytes / bandwidth_e to carry one chunk. The epoch τ is the chunk
time of the slowest link (``epoch="slowest"``, the paper's option (a): every link carries at least one chunk per
epoch), of the fastest link (``"fastest"``, option (b) of Appendix F), or a given duration in microseconds, times
``multiplier`` (the paper's EM). Per link:

* κ_e = max(1, ⌈t_e / τ⌉) epochs to serialise one chunk;
* d_e = ⌈α_e / τ⌉ epochs of latency, or 0 when α_e / τ <= ``alpha_threshold`` (0.1, the released code's rule; the
  paper's literal ⌈α/τ⌉ needs 14 epochs on NDv2 where its Table 8 shows 10, digest 12.1);
* lag L_e = d_e + κ_e: a chunk sent on e in epoch k is in j's buffer at the start of epoch k + L_e;
* capacity: at most κ_e τ / t_e chunks on e in any κ_e consecutive epochs (Appendix F's sliding window), floored
  for the MILP, whose chunks stay whole.

Demand. Each source σ (a compute node) owns ``chunks`` chunks, chunk c being [c/C, (c+1)/C) of its shard; a
demand is a set of (σ, c, d): d wants chunk c of σ. Allgather wants every chunk everywhere (copy helps); all-to-all
gives every destination its own chunks of every source (copy cannot help), a demand matrix of chunk counts is the
same with uneven counts.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np

from topologies.model import Topology

from ..core.components import components
from ..core.errors import NotApplicable
from ..core.schedule import Collective

ALPHA_THRESHOLD = Fraction(1, 10)
EPOCH_POLICIES = ("slowest", "fastest")
MAX_DEMAND_CHUNKS = 64          # chunks per source (allgather) or per pair (all-to-all) the solvers accept
MAX_DEMAND_TEXT = 100_000       # characters of a demand matrix file or text
FLOYD_NODES = 200               # lag_distances: numpy Floyd-Warshall up to this many nodes, SciPy above


@dataclass(frozen=True)
class Demand:
    """``wants``: sorted (σ, c, d) triples; ``chunks``: chunks per source; ``copy``: whether a chunk is wanted by
    more than one node (then only the MILP is exact); ``collective`` for the schedule it lowers to."""

    collective: Collective
    chunks: int
    wants: tuple[tuple[int, int, int], ...]

    @cached_property
    def copy(self) -> bool:
        seen = set()
        for s, c, _ in self.wants:
            if (s, c) in seen:
                return True
            seen.add((s, c))
        return False

    @cached_property
    def commodities(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """(σ, c) -> the destinations that want it."""
        out: dict[tuple[int, int], list[int]] = {}
        for s, c, d in self.wants:
            out.setdefault((s, c), []).append(d)
        return {k: tuple(v) for k, v in out.items()}

    def per_pair(self) -> dict[tuple[int, int], int]:
        """(σ, d) -> number of chunks d wants from σ."""
        out: dict[tuple[int, int], int] = {}
        for s, _, d in self.wants:
            out[(s, d)] = out.get((s, d), 0) + 1
        return out


def _count(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_DEMAND_CHUNKS:
        raise NotApplicable(f"{what} must be an integer from 1 to {MAX_DEMAND_CHUNKS}, got {value!r}")
    return value


def allgather_demand(topo: Topology, chunks: int = 1) -> Demand:
    """Every compute node wants every one of the ``chunks`` chunks of every other compute node."""
    chunks = _count(chunks, "chunks per GPU")
    gpus = topo.compute_nodes
    return Demand(Collective.ALLGATHER, chunks,
                  tuple((s, c, d) for s in gpus for c in range(chunks) for d in gpus if d != s))


def alltoall_demand(topo: Topology, chunks: int = 1) -> Demand:
    """Destination R[j] (the j-th compute node) wants chunks j·m .. j·m + m - 1 of every other source, m =
    ``chunks`` per pair: the piece [j/N, (j+1)/N) of each shard, as the all-to-all schedule IR defines it."""
    m = _count(chunks, "chunks per pair")
    gpus = topo.compute_nodes
    return Demand(Collective.ALLTOALL, m * len(gpus),
                  tuple((s, j * m + i, d) for s in gpus for j, d in enumerate(gpus) for i in range(m) if d != s))


def matrix_demand(topo: Topology, matrix) -> Demand:
    """A demand matrix of chunk counts, ``matrix[a][b]`` = chunks compute node a sends to compute node b (rows and
    columns in compute-node order, the diagonal ignored). Source a's shard is cut into as many equal chunks as
    the largest row total; destination b's chunks from a are consecutive, in column order."""
    gpus = topo.compute_nodes
    n = len(gpus)
    rows = [list(r) for r in matrix]
    if len(rows) != n or any(len(r) != n for r in rows):
        raise NotApplicable(f"the demand matrix must be {n} x {n} (one row and column per compute node)")
    for r in rows:
        for x in r:
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= MAX_DEMAND_CHUNKS:
                raise NotApplicable(f"demand entries must be integers from 0 to {MAX_DEMAND_CHUNKS}, got {x!r}")
    totals = [sum(x for b, x in enumerate(r) if b != a) for a, r in enumerate(rows)]
    chunks = max(totals)
    if chunks == 0:
        raise NotApplicable("the demand matrix asks for nothing (all zeros off the diagonal)")
    if chunks > MAX_DEMAND_CHUNKS:
        raise NotApplicable(f"a source sends {chunks} chunks in all, more than {MAX_DEMAND_CHUNKS}")
    wants = []
    for a, r in enumerate(rows):
        c = 0
        for b, x in enumerate(r):
            if b == a:
                continue
            wants.extend((gpus[a], c + i, gpus[b]) for i in range(x))
            c += x
    return Demand(Collective.CUSTOM, chunks, tuple(sorted(wants)))


def read_demand_matrix(text: str) -> list[list[int]]:
    """A demand matrix from CSV text (commas, or whitespace, between integers; '#' starts a comment), of at most
    ``MAX_DEMAND_TEXT`` characters (a longer one is refused, never cut short)."""
    if len(text) > MAX_DEMAND_TEXT:
        raise NotApplicable(f"the demand matrix is larger than {MAX_DEMAND_TEXT:,} characters")
    rows = []
    for lineno, line in enumerate(io.StringIO(text), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cells = next(csv.reader([line])) if "," in line else line.split()
        try:
            rows.append([int(x.strip()) for x in cells if x.strip() != ""])
        except ValueError:
            raise NotApplicable(f"demand matrix line {lineno}: expected integers, got {line[:60]!r}") from None
    if not rows:
        raise NotApplicable("the demand matrix file is empty")
    return rows


@dataclass(frozen=True)
class Timing:
    """Per-link epoch arithmetic of the module docstring; ``tau_us`` is τ in microseconds."""

    tau_us: Fraction
    chunk_bytes: Fraction
    kappa: tuple[int, ...]
    delay: tuple[int, ...]
    window_cap: tuple[Fraction, ...]      # chunks per κ-window (exact; the MILP floors it)

    @cached_property
    def lag(self) -> tuple[int, ...]:
        return tuple(k + d for k, d in zip(self.kappa, self.delay))


def timing(topo: Topology, chunk_bytes, epoch="slowest", multiplier: int = 1,
           alpha_threshold: Fraction = ALPHA_THRESHOLD) -> Timing:
    """The epoch length and per-link κ, d and capacity (module docstring). ``epoch`` is "slowest", "fastest" or
    a duration in microseconds."""
    chunk_bytes = Fraction(chunk_bytes)
    if chunk_bytes <= 0:
        raise NotApplicable(f"the chunk size must be positive, got {chunk_bytes}")
    if isinstance(multiplier, bool) or not isinstance(multiplier, int) or multiplier < 1:
        raise NotApplicable(f"the epoch multiplier must be a positive integer, got {multiplier!r}")
    links = [l for l in topo.links if l.src != l.dst]
    if not links:
        raise NotApplicable("TE-CCL needs at least one link")
    # 1 GB/s moves 1000 bytes per microsecond
    chunk_us = [chunk_bytes / (Fraction(l.bandwidth) * 1000) for l in topo.links]
    if isinstance(epoch, str):
        if epoch not in EPOCH_POLICIES:
            raise NotApplicable(f"unknown epoch policy {epoch!r} (slowest, fastest or a duration in us)")
        real = [t for t, l in zip(chunk_us, topo.links) if l.src != l.dst]
        tau = max(real) if epoch == "slowest" else min(real)
    else:
        tau = Fraction(epoch)
        if tau <= 0:
            raise NotApplicable(f"the epoch duration must be positive, got {epoch}")
    tau *= multiplier
    kappa, delay, cap = [], [], []
    for t, l in zip(chunk_us, topo.links):
        k = max(1, math.ceil(t / tau))
        ratio = Fraction(l.alpha) / tau
        kappa.append(k)
        delay.append(0 if ratio <= alpha_threshold else math.ceil(ratio))
        cap.append(k * tau / t)
    return Timing(tau, chunk_bytes, tuple(kappa), tuple(delay), tuple(cap))


def lag_distances(topo: Topology, lag) -> np.ndarray:
    """All-pairs shortest arrival lag (epochs) over the links, self-loops ignored: Floyd-Warshall in numpy up to
    ``FLOYD_NODES`` nodes (SciPy's csgraph takes a third of a second to import, a third of the NDv2 x 2 solve),
    SciPy's shortest_path above."""
    n = len(topo.names)
    best: dict[tuple[int, int], int] = {}
    for i, l in enumerate(topo.links):
        if l.src != l.dst:
            key = (l.src, l.dst)
            best[key] = min(best.get(key, lag[i]), lag[i])
    if not best:
        return np.full((n, n), np.inf)
    keys = list(best)
    if n <= FLOYD_NODES:
        dist = np.full((n, n), np.inf)
        np.fill_diagonal(dist, 0.0)
        for (a, b), w in best.items():
            dist[a, b] = w
        for k in range(n):                     # Floyd-Warshall, one vectorised relaxation per middle node
            np.minimum(dist, dist[:, k, None] + dist[None, k, :], out=dist)
        return dist
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    m = csr_matrix(([best[k] for k in keys], ([k[0] for k in keys], [k[1] for k in keys])), shape=(n, n))
    return shortest_path(m, directed=True)


def boxes(topo: Topology) -> list[frozenset[int]]:
    """The groups of nodes joined by links faster than the slowest one (chassis joined by slower cross links), when
    there are at least two such groups; [] otherwise. The cut around a box bounds how fast chunks can enter it."""
    real = [l for l in topo.links if l.src != l.dst]
    slow = min(l.bandwidth for l in real)
    found = [frozenset(g) for g in components(range(len(topo.names)),
                                              [(l.src, l.dst) for l in real if l.bandwidth > slow])]
    return found if len(found) > 1 and any(len(g) > 1 for g in found) else []
