"""BFB's LP (1) written out one (u, t) problem at a time, one source per row: the reference form of the
direct-connect paper's section 6.1 for small topologies (``bfb.py`` solves the same problems grouped by source
type, for every receiver at once), the schedule read off per-source shares (``read_off``), and the chunked
BFB of App. E.2 (IP (13): shares rounded to whole chunks, ``bfb_chunked``; ``chunk_counts`` reads any schedule as
whole chunks).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

from topologies.model import Topology
from topologies.properties import compute_distances, is_strongly_connected

from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer, columns
from .bfb_assignment import assign_sources


@dataclass
class Problem:
    """LP (1) for receiver u at step t: ``sources[i]`` may be sent by the in-neighbours ``eligible[i]`` (indices
    into ``nbrs``); ``links[j]`` are the links from ``nbrs[j]`` to u."""

    u: int
    t: int
    nbrs: list[int]
    links: list[list[int]]
    sources: list[int]
    eligible: list[tuple[int, ...]]


def receiver_problems(topo: Topology) -> list[Problem]:
    """Every (u, t) problem of LP (1), one source per row (the reference form, for small topologies)."""
    if topo.switch_nodes or not is_strongly_connected(topo):
        raise NotApplicable("BFB needs a strongly connected direct-connect topology")
    dist = compute_distances(topo)
    out = []
    for u in range(topo.num_nodes):
        links_from: dict[int, list[int]] = defaultdict(list)
        for i in topo.in_links[u]:
            if topo.links[i].src != u:
                links_from[topo.links[i].src].append(i)
        nbrs = sorted(links_from)
        by_t: dict[int, list[int]] = defaultdict(list)
        for v in range(topo.num_nodes):
            if v != u:
                by_t[int(dist[v, u])].append(v)
        for t, sources in sorted(by_t.items()):
            elig = [tuple(j for j, w in enumerate(nbrs) if dist[v, w] == t - 1) for v in sources]
            out.append(Problem(u, t, nbrs, [links_from[w] for w in nbrs], sources, elig))
    return out


def solve_problem(topo: Topology, p: Problem):
    """The exact optimum of one problem: (U, share[i][j]) per source i and in-neighbour index j."""
    caps = [sum((topo.links[i].bandwidth for i in ls), Fraction(0)) for ls in p.links]
    u_val, share, _ = assign_sources([1] * len(p.sources), p.eligible, caps)
    return u_val, share


def read_off(topo: Topology, problems, shares, algo: str, notes: dict) -> Schedule:
    """Transfers from per-source shares: pieces laid end to end over [0, 1), parallel links by bandwidth."""
    transfers = []
    for p, share in zip(problems, shares):
        for v, parts in zip(p.sources, share):
            lo = Fraction(0)
            for j in sorted(parts):
                x = parts[j]
                if not x:
                    continue
                cap = sum((topo.links[i].bandwidth for i in p.links[j]), Fraction(0))
                for li in p.links[j]:
                    hi = lo + x * topo.links[li].bandwidth / cap
                    transfers.append(Transfer(v, lo, hi, li, p.t))
                    lo = hi
    return Schedule(Collective.ALLGATHER, transfers, algo, notes)


def bfb_chunked(topo: Topology, chunks: int) -> Schedule:
    """BFB with every shard cut into ``chunks`` equal chunks (App. E.2, IP (13)).

    Each source's LP (1) shares, scaled by P = ``chunks``, are rounded to integers summing to P: floors first,
    then one more chunk to the largest remainders. Theorem 20 bounds the loss:
    T_B <= T_B^LP + (M/B) d (d^D - 1) / ((d - 1) P N), because a link carries at most d^(t-1) sources at step t
    and each gains less than one chunk."""
    if isinstance(chunks, bool) or not isinstance(chunks, int) or chunks < 1:
        raise ValueError(f"the number of chunks must be a positive integer, got {chunks!r}")
    problems = receiver_problems(topo)
    shares = []
    for p in problems:
        _, share = solve_problem(topo, p)
        rounded = []
        for parts in share:
            scaled = {j: x * chunks for j, x in parts.items()}
            base = {j: int(y) for j, y in scaled.items()}                  # floor (y >= 0)
            spare = chunks - sum(base.values())
            for j in sorted(scaled, key=lambda j: (-(scaled[j] - base[j]), j))[:spare]:
                base[j] += 1
            rounded.append({j: Fraction(c, chunks) for j, c in base.items() if c})
        shares.append(rounded)
    return read_off(topo, problems, shares, "bfb", {"chunks": chunks})


def chunk_counts(schedule: Schedule) -> tuple[int, list[tuple[int, int, int, int, int]]]:
    """App. E.2, approach 1: L = the lcm of the chunk bounds' denominators, and every transfer as whole chunks
    ``(shard, first chunk, number of chunks, link, step)`` of a shard cut into L equal chunks."""
    cols = columns(schedule)
    if cols is None:
        one = lcm(*{x.denominator for t in schedule.transfers for x in (t.lo, t.hi)})
        return one, [(t.shard, int(t.lo * one), int((t.hi - t.lo) * one), t.link, t.step) for t in schedule.transfers]
    return cols.one, list(zip(cols.shard.tolist(), cols.lo.tolist(), (cols.hi - cols.lo).tolist(),
                              cols.link.tolist(), cols.step.tolist()))
