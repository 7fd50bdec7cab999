"""Which protocol and how many copies of the program (channels) an export uses for each range of buffer sizes,
chosen with the runtime model (``solvers.runtime``) after charging each protocol's costs on every link.

Protocol costs, from NCCL's own tuning model (NVIDIA/nccl src/graph/tuning.cc at commit 01afd20, the ring
column for NVLink, and src/graph/search.cc ``speedArrayIntra``):

* launch latency, once per call (``baseLat``, ring): LL 3.6 us, LL128 10.0 us, Simple 8.4 us;
* latency per hop (``hwLat`` NVLink, ring): LL 0.47 us, LL128 1.9 us, Simple 3.4 us, added to every send's alpha;
* share of a link's bandwidth that carries data: Simple 1; LL128 0.92 (120 of every 128 bytes); LL 1/3 for
  allgather and reduce-scatter and 1/4 for allreduce (NCCL's factors: LL writes a flag beside every 4 bytes);
* the most one threadblock pair (one channel of one copy) moves: Simple 40 GB/s (the highest per-channel speed
  NCCL's search tries inside a node), LL128 ``ll128MaxBwPerCh``: 18.3 (allgather), 15.2 (reduce-scatter) and
  16.7 GB/s (allreduce), LL 40 GB/s times its share.

With c copies every link carries c threadblock pairs, so it moves min(B e, c cap) GB/s, B its bandwidth and e the
protocol's share (links that touch a switch carry many GPU pairs' connections and get only the share). A
candidate's time at M bytes is the launch latency plus the runtime model's time (best pipelining depth P) with
those prices. For each size of a grid from 1 KiB to 4 GiB the fastest candidate wins, except that the fewest
copies within 1% of it are preferred (fewer threadblocks, same speed); neighbouring sizes with the same winner
form one range (copies beyond the point where the cap stops binding give the same prices, which are timed once).
Ranges meet halfway (geometrically) between grid sizes, start at 0 and end without an upper
limit (maxBytes 0 in the executors' dialect). For a runtime without fused receive-reduce steps (RCCL) the bundle
plans on ``Model.with_local_reductions()``: every reduced byte also costs the receiving threadblocks a local pass,
c copies reducing at c x ``solvers.runtime.LOCAL_REDUCE_GBS``, whatever the protocol (the ``re`` step is local,
not a send).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import isqrt
from typing import Callable, Sequence

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective, Schedule
from ..runtime import Execution, Model

SIZE_GRID = tuple(1 << k for k in range(10, 33))          # 1 KiB .. 4 GiB
COPIES = (1, 2, 4, 8)
TOLERANCE = 0.01


@dataclass(frozen=True)
class Protocol:
    """A runtime protocol's costs (module docstring): ``launch_us`` once per call, ``hop_us`` per send, the
    ``share`` of a link's bandwidth that carries data per collective, and ``channel_gbs`` per collective, the most
    one threadblock pair moves."""

    name: str
    launch_us: float
    hop_us: float
    share: dict
    channel_gbs: dict

    def share_of(self, collective: Collective) -> float:
        return self.share.get(collective.value, self.share["other"])

    def channel_cap(self, collective: Collective) -> float:
        return self.channel_gbs.get(collective.value, self.channel_gbs["other"])


PROTOCOL_COSTS = {p.name: p for p in (
    Protocol("LL", 3.6, 0.47, {"allreduce": 0.25, "other": 1 / 3}, {"allreduce": 10.0, "other": 40 / 3}),
    Protocol("LL128", 10.0, 1.9, {"other": 0.92},
             {"allgather": 18.3, "reduce_scatter": 15.2, "allreduce": 16.7, "other": 18.3}),
    Protocol("Simple", 8.4, 3.4, {"other": 1.0}, {"other": 40.0}),
)}
PROTOCOL_SOURCE = ("NVIDIA/nccl src/graph/tuning.cc (commit 01afd20): baseLat and hwLat (ring, NVLink), the LL "
                   "and LL128 bandwidth factors and ll128MaxBwPerCh; src/graph/search.cc speedArrayIntra")


@dataclass(frozen=True)
class Choice:
    """One size range of a plan: ``proto`` with ``copies`` copies serves ``min_bytes`` .. ``max_bytes`` (both
    included; ``max_bytes`` None: no upper limit); ``sizes``/``times_us`` are the grid sizes it won and their
    modelled times."""

    proto: str
    copies: int
    min_bytes: int
    max_bytes: int | None
    sizes: tuple
    times_us: tuple

    @property
    def label(self) -> str:
        hi = "inf" if self.max_bytes is None else _human(self.max_bytes)
        return f"{_human(self.min_bytes)}..{hi}"


@dataclass
class Plan:
    """The ranges (``choices``, in size order) and the model's time of every candidate (``times``: (protocol,
    copies) -> microseconds at each of ``sizes``)."""

    collective: Collective
    sizes: tuple
    times: dict = field(default_factory=dict)
    choices: list = field(default_factory=list)

    def best_us(self) -> np.ndarray:
        return np.min(np.array(list(self.times.values())), axis=0)


def _human(b: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b} B"


def candidate_model(model: Model, protocol: Protocol, copies: int) -> Model:
    """``model`` with the link prices of ``protocol`` run as ``copies`` copies (module docstring)."""
    return model.with_link_prices(*candidate_prices(model, protocol, copies))


def candidate_prices(model: Model, protocol: Protocol, copies: int) -> tuple[np.ndarray, np.ndarray]:
    """The per-link (alpha in us, us per byte) of ``protocol`` run as ``copies`` copies (module docstring)."""
    topo = model.topo
    alpha, per_byte = model.execution.link_prices(topo)
    coll = model.schedule.collective
    bw = 1.0 / (per_byte * 1e3) * protocol.share_of(coll)
    cap = copies * protocol.channel_cap(coll)
    direct = np.array([topo.is_compute(l.src) and topo.is_compute(l.dst) for l in topo.links])
    bw = np.where(direct, np.minimum(bw, cap), bw)
    return alpha + protocol.hop_us, 1.0 / (bw * 1e3)


def _prices_key(alpha: np.ndarray, per_byte: np.ndarray) -> tuple[bytes, bytes]:
    """Candidates with equal keys have the same link prices, so the same times."""
    return alpha.tobytes(), per_byte.tobytes()


def saturating_copies(model: Model, protocols: Sequence[str], copies: Sequence[int]) -> int:
    """The fewest copies that give some protocol the link prices of the most ``copies`` (past the point where the
    per-channel cap stops binding, more copies only add threadblocks): ``plan`` picks them for the sizes where
    that protocol wins, often the largest."""
    most, out = max(copies), 1
    for name in protocols:
        proto = PROTOCOL_COSTS[name]
        top = _prices_key(*candidate_prices(model, proto, most))
        out = max(out, min(c for c in copies if _prices_key(*candidate_prices(model, proto, c)) == top))
    return out


def plan(topo: Topology, schedule: Schedule, *, execution: Execution | None = None,
         protocols: Sequence[str] = tuple(PROTOCOL_COSTS), copies: Sequence[int] = COPIES,
         sizes: Sequence[int] = SIZE_GRID, model: Model | None = None, timed: dict | None = None,
         between: Callable[[], None] | None = None,
         time_many: Callable[[dict, tuple, Callable | None, dict], None] | None = None) -> Plan:
    """The ranges of the module docstring for a verified ``schedule`` on ``topo`` (``execution``: the links'
    prices, default their own). ``timed`` keeps the candidates' times by link prices between calls on one
    ``model`` and ``sizes`` (a bundle that plans again without some copy counts reuses them); ``between`` is
    called after each run of the wave model (``Model.times``: a bundle takes in the programs its workers finished
    meanwhile, and may raise to stop planning). ``time_many(models, sizes, between, timed)``, when given, times
    several candidates at once (``models``: repriced models by link prices, each one's times stored in ``timed`` as
    it is known; a bundle spreads them over processes); the times are the same either way."""
    unknown = [p for p in protocols if p not in PROTOCOL_COSTS]
    if unknown or not protocols:
        raise ValueError(f"unknown protocol(s) {unknown} (choose from {', '.join(PROTOCOL_COSTS)})")
    if not copies or any(not (isinstance(c, int) and c >= 1) for c in copies):
        raise ValueError(f"copies must be positive integers, got {list(copies)}")
    sizes = tuple(sorted(int(s) for s in sizes))
    base = model if model is not None else Model(topo, schedule, execution)
    out = Plan(schedule.collective, sizes)
    timed = {} if timed is None else timed      # candidates with the same link prices have the same times
    prices_of, todo = {}, {}         # candidate -> its link prices; link prices not timed yet -> their model
    local = base.local_reduce_gbs          # reductions through scratch: c copies reduce on c threadblocks
    for name in protocols:
        for c in sorted(set(copies)):
            alpha, per_byte = candidate_prices(base, PROTOCOL_COSTS[name], c)
            prices_of[(name, c)] = prices = (sizes, *_prices_key(alpha, per_byte), local and c * local)
            if prices not in timed and prices not in todo:
                todo[prices] = base.with_link_prices(alpha, per_byte)
                if local is not None:
                    todo[prices] = todo[prices].with_local_reductions(c * local)
    if time_many is not None and len(todo) > 1:
        time_many(todo, sizes, between, timed)
    else:
        for prices, candidate in todo.items():
            timed[prices] = candidate.times(sizes, between)[0]
    for (name, c), prices in prices_of.items():
        out.times[(name, c)] = timed[prices] + PROTOCOL_COSTS[name].launch_us
    keys = list(out.times)
    table = np.array([out.times[k] for k in keys])
    winners = []
    for j in range(len(sizes)):
        best = table[:, j].min()
        near = [i for i in range(len(keys)) if table[i, j] <= best * (1 + TOLERANCE)]
        fewest = min(keys[i][1] for i in near)
        winners.append(min((i for i in near if keys[i][1] == fewest), key=lambda i: table[i, j]))
    runs, start = [], 0           # (first, end, candidate) of each run of sizes with one winner
    for j in range(1, len(sizes) + 1):
        if j == len(sizes) or winners[j] != winners[start]:
            runs.append((start, j, winners[start]))
            start = j
    bounds = [isqrt(sizes[end - 1] * sizes[end]) for _, end, _ in runs[:-1]]
    out.choices = [Choice(keys[i][0], keys[i][1], 0 if k == 0 else bounds[k - 1] + 1,
                          bounds[k] if k < len(bounds) else None, sizes[first:end],
                          tuple(float(t) for t in table[i, first:end]))
                   for k, (first, end, i) in enumerate(runs)]
    return out
