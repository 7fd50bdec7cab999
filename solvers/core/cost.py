"""The alpha-beta cost of a schedule and the lower bounds it is compared with.

Direct-connect paper section 3.2 (digest section 2): a schedule of t_max comm steps has total-hop latency
T_L = t_max * alpha and bandwidth runtime T_B = sum_t max_links (data on the link in step t) / (link bandwidth).
T_B is reported as ``tb_factor`` = T_B / (M/B), where M is the full vector (N shards of M/N) and B the node
bandwidth: the smallest total egress bandwidth of a compute node (d * b on a d-regular unit-link graph).

Lower bounds (Theorem 4 and App. C.3): every node must receive (N-1)/N of the vector in an allgather and send
(N-1)/N of it in a reduce-scatter, so

    tb >= (N-1)/N * B / B_in       (allgather;      B_in  = smallest ingress bandwidth of a compute node)
    tb >= (N-1)/N * B / B_out      (reduce-scatter; B_out = smallest egress bandwidth of a compute node)
    tb >= (N-1)/N * (B / B_out + B / B_in)   (allreduce as a reduce-scatter phase followed by an allgather phase)

which is T_B* = (N-1)/N * M/B on a regular graph and 2(N-1)/N * M/B for its allreduce. The allreduce bound adds
the two phase bounds because the phases occupy disjoint steps; on a graph whose slowest sender is not its
slowest receiver it is *not* 2(N-1)/N * B / min(B_in, B_out). Steps are at least the diameter D(G) (Theorem 3),
twice it for allreduce built as reduce-scatter + allgather.

Rooted collectives (root r; TACOS section II-A), by the same counting of what must cross a node's links:

    broadcast  tb >= max(B / B_out(r), B / B_in(v) for v != r)      every other node receives all of M
    reduce     tb >= max(B / B_in(r),  B / B_out(v) for v != r)     its time reverse on G^T
    scatter    tb >= (N-1)/N * B / B_out(r)                          the root sends the N-1 other shards
    gather     tb >= (N-1)/N * B / B_in(r)                           the root receives them

and steps are at least the root's eccentricity (broadcast, scatter) or its eccentricity on G^T (reduce, gather),
exact for one chunk: a shortest-path tree reaches every node in that many steps.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from topologies.model import Topology
from topologies.properties import diameter, eccentricity

from .schedule import Collective, Schedule, columns


def _bandwidth_sums(topo: Topology, links_of) -> list[Fraction]:
    return [sum((topo.links[i].bandwidth for i in links_of[u]), Fraction(0)) for u in topo.compute_nodes]


def node_bandwidth(topo: Topology) -> Fraction:
    """B: the smallest total egress bandwidth of a compute node."""
    return min(_bandwidth_sums(topo, topo.out_links))


def _exact_bincount(keys: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Integer sums of non-negative int64 ``weights`` per key, exact: numpy's bincount adds in float64, so the
    weights are split into 26-bit halves whose sums stay below 2^53."""
    low = weights & ((1 << 26) - 1)
    high = weights >> 26
    if int(high.max(initial=0)) * len(keys) >= 2 ** 53 or ((1 << 26) * len(keys)) >= 2 ** 53:
        out = np.zeros(size, dtype=np.int64)
        np.add.at(out, keys, weights)
        return out
    return (np.bincount(keys, weights=low, minlength=size).astype(np.int64)
            + (np.bincount(keys, weights=high, minlength=size).astype(np.int64) << 26))


LOAD_TABLE_MAX = 50_000_000    # (steps + 1) x links entries summed at once
LOAD_BATCH = 1 << 22


def _load_table(schedule: Schedule, limit: int | None = None) -> tuple[np.ndarray, int] | None:
    """(sums, one): ``sums[step, link]`` = the scaled widths hi - lo a link carries in a step, exact integers over
    the common denominator ``one``, read from the schedule's columns in batches (their stored types widened one
    batch at a time); None for small schedules, without integer columns, or when the table has more than
    ``limit`` entries."""
    cols = columns(schedule, compact=True) if schedule.count > 1000 else None
    if cols is None or cols.lo.dtype == object:
        return None
    n_links, last = int(cols.link.max()) + 1, int(cols.step.max())
    size = (last + 1) * n_links
    if limit is not None and size > limit:
        return None
    batch = max(LOAD_BATCH, size)

    def keys(a, b):
        return cols.step[a:b].astype(np.int64) * n_links + cols.link[a:b]

    if cols.bounds is None:
        sums = np.zeros(size, dtype=np.int64)
        for a in range(0, len(cols.step), batch):
            sums += _exact_bincount(keys(a, a + batch), cols.hi[a:a + batch].astype(np.int64) - cols.lo[a:a + batch],
                                    size)
        return sums.reshape(last + 1, n_links), cols.one
    return _table_sums(cols, keys, size, batch).reshape(last + 1, n_links), cols.one


LIMB = 20      # bits of a bound per float64 bincount: a batch of 2^22 rows sums below 2^53, exactly


def _table_sums(cols, keys, size: int, batch: int) -> np.ndarray:
    """Per key, the exact sum of bounds[hi] - bounds[lo] for columns with a bounds table (values beyond int64):
    the sum of the hi values minus the sum of the lo values, each summed LIMB bits at a time and put together
    as Python ints (an object array)."""
    values = [int(v) for v in cols.bounds.tolist()]
    limbs = max(1, -(-max(values).bit_length() // LIMB))
    parts = [np.array([(v >> (LIMB * k)) & ((1 << LIMB) - 1) for v in values], dtype=np.float64)
             for k in range(limbs)]
    acc = [np.zeros(size, dtype=np.int64) for _ in range(limbs)]
    for a in range(0, len(cols.step), batch):
        key, lo, hi = keys(a, a + batch), cols.lo[a:a + batch], cols.hi[a:a + batch]
        for k in range(limbs):
            acc[k] += (np.bincount(key, weights=parts[k][hi], minlength=size).astype(np.int64)
                       - np.bincount(key, weights=parts[k][lo], minlength=size).astype(np.int64))
    total = np.zeros(size, dtype=object)
    for k in range(limbs):
        total += acc[k].astype(object) * (1 << (LIMB * k))
    return total


def link_loads(schedule: Schedule) -> dict[int, dict[int, Fraction]]:
    """``loads[step][link]``: the data a link carries in a step, in shards (M/N), exact.

    Large schedules are summed on integers (bounds scaled by their common denominator, ``schedule.columns``)."""
    table = _load_table(schedule)
    if table is not None:
        sums, one = table
        loads: dict[int, dict[int, Fraction]] = defaultdict(dict)
        for step, link in zip(*(x.tolist() for x in np.nonzero(sums != 0))):
            loads[step][link] = Fraction(int(sums[step, link]), one)
        return loads
    exact: dict[int, dict[int, Fraction]] = defaultdict(lambda: defaultdict(Fraction))
    for t in schedule.transfers:
        exact[t.step][t.link] += t.hi - t.lo
    return exact


def step_factors(topo: Topology, schedule: Schedule) -> dict[int, Fraction]:
    """T_B(A_t) / (M/B) for every step t: max over links of load / N * B / bandwidth."""
    n, big_b = topo.n, node_bandwidth(topo)
    table = _load_table(schedule, LOAD_TABLE_MAX)
    if table is not None:
        sums, one = table
        by_bandwidth: dict[Fraction, list[int]] = defaultdict(list)
        for i, link in enumerate(topo.links[:sums.shape[1]]):
            by_bandwidth[link.bandwidth].append(i)
        busy = sums != 0
        out = {}
        for step in np.flatnonzero(busy.any(axis=1)).tolist():
            out[step] = max(Fraction(int(sums[step, idx].max()), one) * big_b / (n * bw)
                            for bw, idx in by_bandwidth.items() if busy[step, idx].any())
        return out
    return {step: max(load * big_b / (n * topo.links[l].bandwidth) for l, load in per_link.items())
            for step, per_link in sorted(link_loads(schedule).items())}


def tb_factor(topo: Topology, schedule: Schedule) -> Fraction:
    """T_B / (M/B), exact."""
    return sum(step_factors(topo, schedule).values(), Fraction(0))


def pipelined_factor(topo: Topology, schedule: Schedule) -> Fraction:
    """The flow-model time of a pipelined schedule (ForestColl section 3.2), in units of (M/N) / (GB/s): data
    streams through every step at once, so a phase lasts as long as its busiest link needs for everything it
    carries, max over links of load / bandwidth (load in shards). An allreduce adds its reduce-scatter and
    allgather phases. algbw = M / T = N / this factor (GB/s)."""
    split = schedule.notes.get("rs_steps") if schedule.collective is Collective.ALLREDUCE else None
    phases: list[dict[int, Fraction]] = [defaultdict(Fraction), defaultdict(Fraction)]
    for step, per_link in link_loads(schedule).items():
        phase = phases[1 if split is not None and step > split else 0]
        for link, load in per_link.items():
            phase[link] += load
    return sum((max((load / topo.links[l].bandwidth for l, load in ph.items()), default=Fraction(0))
                for ph in phases), Fraction(0))


def alpha_beta_us(steps: int, tb, total_bytes: float, alpha_us: float, bandwidth_gbs: float) -> float:
    """The papers' step model in microseconds: T_L + T_B = steps * alpha + tb * M / B, with M in bytes and B in
    GB/s (1e3 bytes per microsecond). The one place this price is written."""
    return steps * alpha_us + float(tb) * total_bytes / (bandwidth_gbs * 1e3)


def _rooted_tb_bound(topo: Topology, collective: Collective, root: int) -> Fraction:
    """The rooted bounds of the module docstring, in units of M/B."""
    n, big_b = topo.n, node_bandwidth(topo)

    def sums(links_of, nodes):
        return [sum((topo.links[i].bandwidth for i in links_of[u]), Fraction(0)) for u in nodes]
    others = [v for v in topo.compute_nodes if v != root]
    if not others:
        return Fraction(0)
    r_in, r_out = sums(topo.in_links, [root])[0], sums(topo.out_links, [root])[0]
    if collective is Collective.BROADCAST:
        return max([big_b / r_out] + [big_b / b for b in sums(topo.in_links, others)])
    if collective is Collective.REDUCE:
        return max([big_b / r_in] + [big_b / b for b in sums(topo.out_links, others)])
    share = Fraction(n - 1, n)
    return share * big_b / (r_out if collective is Collective.SCATTER else r_in)


def tb_lower_bound(topo: Topology, collective: Collective, root: int | None = None) -> Fraction:
    """The bandwidth lower bound of the module docstring, in units of M/B (``root`` for a rooted collective)."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    if collective.rooted:
        if root is None:
            raise ValueError(f"the {collective.value} bound needs the root")
        return _rooted_tb_bound(topo, collective, root)
    n, big_b = topo.n, node_bandwidth(topo)
    b_in, b_out = min(_bandwidth_sums(topo, topo.in_links)), min(_bandwidth_sums(topo, topo.out_links))
    share = Fraction(n - 1, n)
    if collective is Collective.ALLGATHER:
        return share * big_b / b_in
    if collective is Collective.REDUCE_SCATTER:
        return share * big_b / b_out
    if collective is Collective.ALLTOALL:          # each node takes (N-1) pieces of 1/N of a shard
        return share * big_b / (n * min(b_in, b_out))
    if collective is Collective.CUSTOM:            # no bound without reading the demand
        return Fraction(0)
    return share * big_b / b_out + share * big_b / b_in


def self_loop_tb_bound(topo: Topology, collective: Collective) -> tuple[Fraction, int] | None:
    """Where ``tb_lower_bound`` cannot be reached because it counts self-loops: (the same bound with every link
    from a node to itself left out of the nodes' ingress and egress, the number of self-loops), else None.

    A self-loop carries nothing another node needs, so a node takes in and sends out at most the bandwidth of its
    other links; the bound over those sums is still a lower bound (B stays the node bandwidth of the definition,
    self-loops included), and higher than ``tb_lower_bound`` wherever a bottleneck node has a self-loop (BFB and
    ForestColl land on it on the generalized Kautz graphs, 2x the plain bound on Pi_{2,16})."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    loops = sum(1 for l in topo.links if l.src == l.dst)
    if not loops or collective is Collective.CUSTOM or collective.rooted:
        return None
    n, big_b = topo.n, node_bandwidth(topo)

    def sums(links_of):
        return min(sum((topo.links[i].bandwidth for i in links_of[u] if topo.links[i].src != topo.links[i].dst),
                       Fraction(0)) for u in topo.compute_nodes)
    b_in, b_out = sums(topo.in_links), sums(topo.out_links)
    if not (b_in > 0 and b_out > 0):
        return None
    share = Fraction(n - 1, n)
    tight = {Collective.ALLGATHER: share * big_b / b_in, Collective.REDUCE_SCATTER: share * big_b / b_out,
             Collective.ALLTOALL: share * big_b / (n * min(b_in, b_out))}.get(
        collective, share * big_b / b_out + share * big_b / b_in)
    return (tight, loops) if tight > tb_lower_bound(topo, collective) else None


def steps_lower_bound(topo: Topology, collective: Collective, root: int | None = None) -> int:
    """D(G) for allgather, reduce-scatter and all-to-all (Theorem 3); 2 D(G) for allreduce as RS + AG; the root's
    eccentricity for broadcast and scatter, on G^T for reduce and gather (module docstring)."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    if collective is Collective.CUSTOM:
        return 0
    if collective.rooted:
        if root is None:
            raise ValueError(f"the {collective.value} bound needs the root")
        inward = collective in (Collective.REDUCE, Collective.GATHER)
        return eccentricity(topo, root, inward) or 0
    d = diameter(topo) or 0
    return 2 * d if collective is Collective.ALLREDUCE else d


def step_model_us(topo: Topology, schedule: Schedule, total_bytes: float) -> float:
    """The papers' step model on the fabric's own links, in microseconds for a vector of ``total_bytes`` (M):
    each step lasts as long as its slowest link, alpha_l + bytes_l / bandwidth_l, with bandwidth in GB/s (1e3
    bytes per microsecond); on uniform links it is ``alpha_beta_us``. A named second figure where a paper uses
    it (BFB's LP (14)); the times the studio shows come from the runtime model (``solvers.runtime``)."""
    shard_bytes = total_bytes / topo.n
    total = 0.0
    for per_link in link_loads(schedule).values():
        total += max(float(topo.links[l].alpha) + float(load) * shard_bytes / (float(topo.links[l].bandwidth) * 1e3)
                     for l, load in per_link.items())
    return total


@dataclass(frozen=True)
class Cost:
    """The costs of one schedule beside its lower bounds."""

    steps: int
    tb_factor: Fraction
    steps_lower_bound: int
    tb_lower_bound: Fraction

    def as_dict(self) -> dict:
        return {"steps": self.steps, "tb_factor": float(self.tb_factor), "tb_factor_exact": str(self.tb_factor),
                "steps_lower_bound": self.steps_lower_bound, "tb_lower_bound": float(self.tb_lower_bound),
                "tb_lower_bound_exact": str(self.tb_lower_bound)}


def cost(topo: Topology, schedule: Schedule) -> Cost:
    root = schedule.root
    return Cost(schedule.steps, tb_factor(topo, schedule), steps_lower_bound(topo, schedule.collective, root),
                tb_lower_bound(topo, schedule.collective, root))
