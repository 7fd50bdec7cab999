"""The TE-CCL MILP restricted to schedules that the fabric's symmetries leave unchanged (identical chassis, and
identical slots within a chassis): one model per orbit of sources instead of one per source.

The paper's fabrics repeat one chassis, and the chassis repeat their GPUs' wiring (NDv2's GPU 0 and 1 excepted).
A group G of automorphisms of the fabric (node permutations g that map every link (u, v) onto a link
(g(u), g(v)) of the same bandwidth and α) that acts freely on the compute nodes (no g ≠ 1 fixes one) and maps the
demand onto itself splits the sources into orbits of |G| each. A schedule is G-invariant when source g(σ)'s chunk
c takes link g(e) in epoch k exactly when σ's takes e: then the MILP needs the flow variables of one source per
orbit, ``reps``; every per-commodity row (buffer, copy, switch, demand, the entry cuts) is the full MILP's for that
commodity, and link e's capacity in a window counts, for every g, the representatives' flows on g⁻¹(e), which
are the flows of the sources g(ρ) on e (``capacity_sources``). A solution is thus exactly a G-invariant schedule
of the full MILP (``expand``), which the verifier checks like any other.

The model is |G| times smaller: on DGX2 x 4 (4 chassis, 8 pairs of GPUs (2k, 2k + 1) per chassis: the chassis
rotation and the shift of every GPU index by 2, |G| = 32), two sources instead of 64. Its optimum is an upper
bound on the full MILP's (a restriction of the schedule class); a K with no invariant schedule proves nothing
about the full MILP, so ``minimal`` is claimed only from the cut lower bound.

The group is found from the node names (``name_shifts``): the fabrics name their nodes with integer fields
(``c3.g14``, ``c3.nvs``), and a shift of one field by s modulo its range, applied to every name that has it, is
kept when it is an automorphism; the generators whose product group still acts freely are combined.
"""
from __future__ import annotations

import itertools
import re
from collections import Counter

from topologies.model import Topology

from .instance import Demand
from .milp import build_milp, chosen_flows, milp_size
from .outcome import INFEASIBLE
from .solve import solve

MAX_GROUP = 4096              # elements enumerated at most
_FIELD = re.compile(r"\d+")


def _link_key(topo: Topology) -> dict:
    out: dict = {}
    for i, l in enumerate(topo.links):
        out.setdefault((l.src, l.dst, l.bandwidth, l.alpha), []).append(i)
    return out


def link_map(topo: Topology, perm: tuple[int, ...]) -> tuple[int, ...] | None:
    """Where the node permutation ``perm`` sends every link (the k-th parallel copy onto the k-th), or None when
    it is not an automorphism (some link has no image of the same bandwidth and α, or kinds differ)."""
    if any(topo.kinds[v] != topo.kinds[perm[v]] for v in range(len(perm))):
        return None
    groups = _link_key(topo)
    out = [0] * len(topo.links)
    for (s, d, bw, a), idx in groups.items():
        target = groups.get((perm[s], perm[d], bw, a), [])
        if len(target) != len(idx):
            return None
        for x, y in zip(idx, target):
            out[x] = y
    return tuple(out)


def name_shifts(topo: Topology) -> list[tuple[tuple[int, ...], int]]:
    """(permutation, order) of the name-field shifts that are automorphisms (module docstring): for each integer
    field position p whose values over the names are 0 .. M - 1, the smallest s dividing M with s < M such that
    v -> (v + s) mod M on field p of every name having one is an automorphism, of order M / s."""
    names = topo.names
    fields = [_FIELD.findall(n) for n in names]
    index = {n: i for i, n in enumerate(names)}
    found = []
    for p in range(max((len(f) for f in fields), default=0)):
        values = {int(f[p]) for f in fields if len(f) > p}
        m = len(values)
        if m < 2 or values != set(range(m)):
            continue
        for s in range(1, m):
            if m % s:
                continue
            perm = []
            for n, f in zip(names, fields):
                if len(f) <= p:
                    perm.append(index[n])
                    continue
                parts = _FIELD.split(n)
                nums = list(f)
                nums[p] = str((int(nums[p]) + s) % m)
                other = "".join(a + b for a, b in itertools.zip_longest(parts, nums, fillvalue=""))
                perm.append(index.get(other, -1))
            perm = tuple(perm)
            if -1 in perm or len(set(perm)) != len(perm):
                continue
            if link_map(topo, perm) is not None:
                found.append((perm, m // s))
                break
    return found


def _compose(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """a after b."""
    return tuple(a[b[v]] for v in range(len(b)))


class Orbits:
    """A group of automorphisms acting freely on the compute nodes, with every element's node and link maps, the
    representatives of the source orbits, and the capacity rows' source links."""

    def __init__(self, topo: Topology, elements: list[tuple[int, ...]]):
        self.topo = topo
        self.elements = elements                                   # the identity first
        self.links = [link_map(topo, g) for g in elements]
        inverse = {g: i for i, g in enumerate(elements)}
        self.inverse = [inverse[tuple(sorted(range(len(g)), key=g.__getitem__))] for g in elements]

    @property
    def size(self) -> int:
        return len(self.elements)

    def reps(self, sources) -> list[int]:
        """One source per orbit (the smallest index)."""
        seen, out = set(), []
        for s in sorted(sources):
            if s not in seen:
                out.append(s)
                seen.update(g[s] for g in self.elements)
        return out

    def capacity_sources(self) -> list[Counter]:
        """For every link e: the links g⁻¹(e) (with multiplicity) whose representatives' flows load e."""
        out = []
        for e in range(len(self.topo.links)):
            out.append(Counter(self.links[self.inverse[j]][e] for j in range(self.size)))
        return out

    def expand(self, flows) -> list[tuple[int, int, int, int]]:
        """The G-invariant schedule of the representatives' flows (σ, c, link, k)."""
        flows = list(flows)
        return [(g[s], c, lm[i], k) for g, lm in zip(self.elements, self.links) for s, c, i, k in flows]

    def reduced(self, demand: Demand) -> Demand:
        """The demand of the representatives' chunks only."""
        keep = set(self.reps({s for s, _, _ in demand.wants}))
        return Demand(demand.collective, demand.chunks, tuple(w for w in demand.wants if w[0] in keep))


def symmetry_group(topo: Topology, demand: Demand) -> Orbits | None:
    """The largest product of name-shift generators (``name_shifts``, taken in order, each kept when the group
    still acts freely on the compute nodes and maps the demand onto itself) with at most ``MAX_GROUP`` elements;
    None when no shift qualifies."""
    wants = set(demand.wants)
    compute = topo.compute_nodes
    identity = tuple(range(len(topo.names)))
    elements = [identity]
    for perm, order in name_shifts(topo):
        if len(elements) * order > MAX_GROUP:
            continue
        powers = [identity]
        for _ in range(order - 1):
            powers.append(_compose(perm, powers[-1]))
        grown = list(dict.fromkeys(_compose(p, g) for p in powers for g in elements))
        if len(grown) != len(elements) * order:
            continue
        free = all(all(g[v] != v for v in compute) for g in grown[1:])
        if free and all({(g[s], c, g[d]) for s, c, d in wants} == wants for g in (perm,)):
            elements = grown
    return Orbits(topo, elements) if len(elements) > 1 else None


def orbit_search(topo: Topology, demand: Demand, t, lower_bound: int, upper: int | None, left, gap: float,
                 limit: int, switch_copy: bool = False, group: Orbits | None = None):
    """The smallest K in [lower_bound, upper) with a G-invariant schedule (module docstring), by the MILP of the
    representatives with the orbit capacities, K tried upwards (a probe stops at the first feasible point, then
    early delivery is optimised at that K in what is left of ``left()``, the seconds remaining). Returns
    (K, flows of the full fabric, outcome, probes as (K, status, seconds), |G|) or None: no group, a model over
    ``limit`` flow binaries, no invariant schedule below ``upper``, or no time."""
    group = group or symmetry_group(topo, demand)
    if group is None:
        return None
    reduced = group.reduced(demand)
    caps = group.capacity_sources()
    probes = []
    k = lower_bound
    while (upper is None or k < upper) and left() > 0:
        if milp_size(topo, reduced, t, k) > limit:
            return None
        fm = build_milp(topo, reduced, t, k, switch_copy, capacity=caps)
        rest = left()
        if rest <= 0:
            return None
        out = solve(fm.model, rest, gap, first_solution=True)
        probes.append((k, out.status, out.seconds))
        if out.has_solution:
            known = fm.model.values
            rest = left()
            if rest > 0:
                fm.model.start = known
                better = solve(fm.model, rest, gap)
                probes.append((k, better.status, better.seconds))
                if better.has_solution:
                    out = better
                else:
                    fm.model.values = known
            return k, group.expand(chosen_flows(fm)), out, probes, group.size
        if out.status != INFEASIBLE:
            return None
        k += 1
    return None
