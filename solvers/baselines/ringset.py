"""Link-disjoint directed Hamiltonian rings: the channels of a multi-ring collective (NCCL runs one ring per
channel, each on links of its own, each carrying its share of the buffer).

Definition. A *ring set* of a topology is a list of K directed Hamiltonian cycles of its compute nodes over
direct links, no link used by two of them. Every ring leaves and enters each node once on a link of its own,
so K <= d = min over compute nodes of min(out-degree, in-degree), counting the links between distinct compute
nodes (parallel links one each). ``ring_set`` looks for d rings and reports how many it found.

Products of cycles (tori, hypercubes; recognised from node names "i,j,..." and checked link by link). A
dimension of size k >= 3 is the cycle both ways (2 rings), of size 2 one ring 0 -> 1 -> 0 per link pair.
If G has rings A_1..A_K on N_1 nodes and H rings B_1..B_K on N_2 nodes, the links of G x H split into K
directed tori A_i x B_i = C_{N_1} x C_{N_2}, and each such torus splits into two rings by levels
(p + q) mod g, g dividing gcd(N_1, N_2): at level classes 0..r-1 ring 1 steps along A_i and ring 2 along B_i,
at the others the other way round. Every node of a level is entered once per ring, and after g levels a ring
has moved by (r, g - r) (ring 2 by (g - r, r)), so it is Hamiltonian exactly when that step generates the
level-0 class; g = N_1 = N_2, r = 1 always works. The dimensions are split into two halves of equal ring
count recursively (hypercube(10) = Q5 x Q5, torus(8,8) = C8 x C8); a product with no equal split (Q5,
torus(4,4,4)) is handed to the search below.

Search, everywhere else (a cycle-merging local search on link colourings):

1. The links are coloured with d *1-factors* s_1 .. s_d (in each colour every node has one out-link and one
   in-link, so s_c is a permutation of the nodes): d perfect matchings, one after the other, of the bipartite
   graph sender u -> receiver v with an edge per link (Hopcroft-Karp; on a d-regular digraph this always
   succeeds, Koenig; on an irregular one it may stop early and only the colours found are searched).
2. Colour c is a Hamiltonian ring exactly when s_c has one cycle. A *flip* of colours i != j at node a follows
   the alternating cycle a_1 = a, a_{t+1} = s_j^-1(s_i(a_t)) back to a and swaps the two colours on its links;
   both colours stay 1-factors and each is composed with a cycle of the same length, so the total number of
   cycles keeps its parity. All colours are one cycle only if that total equals d, so a colouring whose total
   has the other parity is drawn again. Flips that lower the total are kept, neutral ones half the time, the
   rest undone; a run that stalls restarts from a fresh colouring, until every colour is one cycle or the
   ``budget`` of flips is spent.
3. The colours with one cycle are the rings. Where none is found, one ring (and its reverse where the
   reverse links exist) comes from the reflected Gray code on a product of cycles, else from the exhaustive
   search of ``solvers.baselines.hamiltonian``.

The search is a heuristic with a fixed seed: on the catalogue's circulants, tori, hypercubes and generalized
Kautz graphs it finds d rings (tests), and where it stops short the result says so (``RingSet.complete``,
``describe``); it never claims more rings than it has.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from math import gcd

from topologies.model import Topology

from ..core.errors import NotApplicable
from .hamiltonian import _is_cycle, hamiltonian_cycle

DEFAULT_BUDGET = 200_000      # flips in all; a restart after RESTART_FLIPS without reaching every ring
RESTART_FLIPS = 20_000
WORK_BUDGET = 40_000_000      # and at most this many node visits in all (a flip recounts two colours: 2n)
PART_BUDGET = 120_000         # flips for a part of a product (small; the whole is searched if a part fails)
MAX_DRAWS = 64                # colourings drawn per restart to find one of the right parity
SINGLE_DRAWS = 256            # fresh matchings tried where the links split into one 1-factor only

Arc = tuple[int, int, int]    # (src, dst, id)


@dataclass(frozen=True)
class RingSet:
    """K link-disjoint directed Hamiltonian rings: ``rings[k]`` the node order, ``links[k][i]`` the link from
    rings[k][i] to rings[k][i+1 mod N]; ``bound`` is d, the most any ring set of the topology can hold."""

    rings: tuple[tuple[int, ...], ...]
    links: tuple[tuple[int, ...], ...]
    bound: int
    method: str

    @property
    def complete(self) -> bool:
        return len(self.rings) == self.bound

    def describe(self) -> str:
        k = len(self.rings)
        found = f"{k} link-disjoint Hamiltonian ring{'s' if k != 1 else ''}"
        if self.complete:
            return f"{found}, the most there can be ({self.method})"
        return f"{found} of at most {self.bound} ({self.method})"


# --------------------------------------------------------------------------------------------- the search
def _one_factors(n: int, arcs: list[Arc], bound: int, rng: random.Random) -> list[list[Arc]]:
    """Up to ``bound`` arc-disjoint 1-factors (factor[u] = the arc out of u), from successive perfect matchings."""
    free: dict[tuple[int, int], list[Arc]] = {}
    for arc in arcs:
        free.setdefault(arc[:2], []).append(arc)
    import networkx as nx                    # here: networkx takes a quarter of a second to import

    factors = []
    senders = range(n)                       # receivers are n + v: integer labels keep the matching reproducible
    for _ in range(bound):
        graph = nx.Graph()
        graph.add_nodes_from(range(2 * n))
        pairs = [pair for pair, left in free.items() if left]
        rng.shuffle(pairs)
        graph.add_edges_from((u, n + v) for u, v in pairs)
        matching = nx.bipartite.hopcroft_karp_matching(graph, top_nodes=senders)
        if any(u not in matching for u in senders):
            break
        factors.append([free[(u, matching[u] - n)].pop() for u in range(n)])
    return factors


def _cycles(succ: list[int]) -> int:
    seen = [False] * len(succ)
    count = 0
    for start in range(len(succ)):
        if not seen[start]:
            count += 1
            u = start
            while not seen[u]:
                seen[u] = True
                u = succ[u]
    return count


def _flip_search(n: int, factors: list[list[Arc]], flips: int, rng: random.Random) -> tuple[list[list[Arc]], int]:
    """Step 2 of the module docstring on one colouring; returns the colouring and the flips made."""
    k = len(factors)
    succ = [[arc[1] for arc in f] for f in factors]
    arc_of = [list(f) for f in factors]
    pred = [[0] * n for _ in range(k)]
    for c in range(k):
        for u, v in enumerate(succ[c]):
            pred[c][v] = u
    count = [_cycles(s) for s in succ]
    for done in range(flips):
        open_ = [c for c in range(k) if count[c] > 1]
        if not open_:
            return arc_of, done
        i = open_[rng.randrange(len(open_))]
        j = rng.randrange(k - 1)
        j += j >= i
        a = rng.randrange(n)
        cycle = [a]
        while True:
            nxt = pred[j][succ[i][cycle[-1]]]
            if nxt == a:
                break
            cycle.append(nxt)
        if len(cycle) == 1:
            continue
        for x in cycle:
            succ[i][x], succ[j][x] = succ[j][x], succ[i][x]
            arc_of[i][x], arc_of[j][x] = arc_of[j][x], arc_of[i][x]
        ci, cj = _cycles(succ[i]), _cycles(succ[j])
        delta = ci + cj - count[i] - count[j]
        if delta < 0 or (delta == 0 and rng.random() < 0.5):
            count[i], count[j] = ci, cj
            for x in cycle:
                pred[i][succ[i][x]] = x
                pred[j][succ[j][x]] = x
        else:
            for x in cycle:
                succ[i][x], succ[j][x] = succ[j][x], succ[i][x]
                arc_of[i][x], arc_of[j][x] = arc_of[j][x], arc_of[i][x]
    return arc_of, flips


def _hamiltonian(n: int, factor: list[Arc]) -> bool:
    return _cycles([arc[1] for arc in factor]) == 1


def search_rings(n: int, arcs: list[Arc], bound: int, budget: int = DEFAULT_BUDGET,
                 seed: int = 0) -> tuple[list[list[Arc]], str]:
    """Rings (each a list of arcs in cycle order from node 0) over nodes 0..n-1 found by the search of the
    module docstring, the best colouring's Hamiltonian colours, and a phrase saying how the search ended."""
    rng = random.Random(seed)
    best: list[list[Arc]] = []
    spent, restarts, short, single = 0, 0, False, 0
    budget = min(budget, max(2 * RESTART_FLIPS, WORK_BUDGET // (2 * n)))
    while spent < budget:
        factors = []
        for _ in range(MAX_DRAWS):
            factors = _one_factors(n, arcs, bound, rng)
            if len(factors) < 2 or sum(_cycles([a[1] for a in f]) for f in factors) % 2 == len(factors) % 2:
                break
        short = short or len(factors) < bound
        if len(factors) >= 2:
            factors, used = _flip_search(n, factors, min(RESTART_FLIPS, budget - spent), rng)
        else:
            used = 1
        spent += used
        rings = [f for f in factors if _hamiltonian(n, f)]
        if len(rings) > len(best):
            best = rings
        if len(best) == bound or (short and len(best) == len(factors)):
            break
        if len(factors) < 2:        # one colour: no flip changes it, only a fresh matching; a few, then step 3
            single += 1
            if single >= SINGLE_DRAWS:
                break
        restarts += 1
    how = "cycle-merging search"
    if len(best) < bound:
        how += f", {spent} flips in {restarts + 1} runs"
        if short:
            how += "; the links split into fewer 1-factors than that"
    return [_in_order(f) for f in best], how


def _in_order(factor: list[Arc]) -> list[Arc]:
    out, u = [], 0
    for _ in range(len(factor)):
        out.append(factor[u])
        u = factor[u][1]
    return out


# -------------------------------------------------------------------------------------- products of cycles
Coord = tuple[int, ...]
Cycle = list[Coord]


def _product_shape(topo: Topology) -> tuple[list[int], list[int]] | None:
    """(sizes k_i, rings per dimension) when ``topo`` is exactly a product of cycles named by coordinates, as in
    the module docstring; None otherwise."""
    if topo.switch_nodes or topo.n < 4:
        return None
    try:
        coords = [tuple(int(x) for x in name.split(",")) for name in topo.names]
    except ValueError:
        return None
    dims = len(coords[0])
    if any(len(c) != dims for c in coords) or len(set(coords)) != topo.n:
        return None
    sizes = [max(c[i] for c in coords) + 1 for i in range(dims)]
    total = 1
    for k in sizes:
        total *= k
    if total != topo.n or min(sizes) < 2:
        return None
    count: dict[tuple[int, int, int], int] = {}
    for link in topo.links:
        a, b = coords[link.src], coords[link.dst]
        diff = [i for i in range(dims) if a[i] != b[i]]
        if len(diff) != 1:
            return None
        i = diff[0]
        step = (b[i] - a[i]) % sizes[i]
        if step not in (1, sizes[i] - 1):
            return None
        key = (link.src, i, step)
        count[key] = count.get(key, 0) + 1
    rings = []
    for i, k in enumerate(sizes):
        mult = {count.get((u, i, s), 0) for u in range(topo.n) for s in {1, k - 1}}
        if len(mult) != 1 or mult == {0}:
            return None
        (m,) = mult
        if k >= 3 and m != 1 or k == 2 and m not in (1, 2):
            return None
        rings.append(2 if k >= 3 else m)
    return sizes, rings


def _torus_split(first: Cycle, second: Cycle) -> list[Cycle] | None:
    """The two rings of the directed torus first x second (module docstring), or None where no level split
    (g, r) makes both Hamiltonian."""
    n1, n2 = len(first), len(second)
    common = gcd(n1, n2)
    for g in sorted((x for x in range(2, common + 1) if common % x == 0), reverse=True):
        for r in range(1, g):
            rings = []
            for ring in (0, 1):
                p = q = 0
                order = []
                for _ in range(n1 * n2):
                    order.append(first[p] + second[q])
                    along_first = ((p + q) % g < r) == (ring == 0)
                    p, q = ((p + 1) % n1, q) if along_first else (p, (q + 1) % n2)
                if (p, q) != (0, 0) or len(set(order)) != n1 * n2:
                    break
                rings.append(order)
            if len(rings) == 2:
                return rings
    return None


def _product_rings(sizes: list[int], rings: list[int], dims: list[int], budget: int,
                   seed: int) -> list[Cycle] | None:
    """Rings of the product of the cycles ``dims`` (coordinates in the order of ``dims``), by equal splits and
    torus splits, the search for a product with no equal split; None where a torus split fails."""
    if len(dims) == 1:
        (i,) = dims
        k = sizes[i]
        forward = [(x,) for x in range(k)]
        return [forward, [forward[0]] + forward[:0:-1]] if k >= 3 else [forward] * rings[i]
    total = sum(rings[i] for i in dims)
    half = _equal_split(dims, rings, total)
    if half is None:
        return _searched_product(sizes, rings, dims, budget, seed)
    left = [i for i in dims if i in half]
    right = [i for i in dims if i not in half]
    a = _product_rings(sizes, rings, left, min(budget, PART_BUDGET), seed)
    b = _product_rings(sizes, rings, right, min(budget, PART_BUDGET), seed)
    if a is None or b is None or len(a) != len(b):
        return None
    out = []
    for ra, rb in zip(a, b):
        pair = _torus_split(ra, rb)
        if pair is None:
            return None
        out += pair
    # coordinates are (left dims, right dims); put them back in the order of ``dims``
    order = left + right
    back = [order.index(i) for i in dims]
    return [[tuple(c[j] for j in back) for c in ring] for ring in out]


def _equal_split(dims: list[int], rings: list[int], total: int) -> set[int] | None:
    """A subset of ``dims`` holding half the rings, preferring halves of equal size (subset-sum by DP)."""
    if total % 2:
        return None
    reach: dict[int, frozenset] = {0: frozenset()}
    for i in dims:
        for s, chosen in list(reach.items()):
            t = s + rings[i]
            if t <= total // 2 and (t not in reach or abs(len(chosen) + 1 - len(dims) / 2)
                                    < abs(len(reach[t]) - len(dims) / 2)):
                reach[t] = chosen | {i}
    found = reach.get(total // 2)
    return set(found) if found and len(found) < len(dims) else None


def _searched_product(sizes, rings, dims, budget, seed) -> list[Cycle] | None:
    coords = [()]
    for i in dims:
        coords = [c + (x,) for c in coords for x in range(sizes[i])]
    index = {c: u for u, c in enumerate(coords)}
    arcs: list[Arc] = []
    for c in coords:
        for pos, i in enumerate(dims):
            k = sizes[i]
            for step in ({1, k - 1} if k >= 3 else {1}):
                for _ in range(1 if k >= 3 else rings[i]):
                    d = c[:pos] + ((c[pos] + step) % k,) + c[pos + 1:]
                    arcs.append((index[c], index[d], len(arcs)))
    bound = sum(rings[i] for i in dims)
    found, _ = search_rings(len(coords), arcs, bound, budget, seed)
    if len(found) < bound:
        return None
    return [[coords[arc[0]] for arc in ring] for ring in found]


def _links_for(topo: Topology, orders: list[list[int]]) -> list[tuple[int, ...]] | None:
    """Give each hop of each ring a link of its own (parallel links in turn); None if some hop has none left."""
    free: dict[tuple[int, int], list[int]] = {}
    for i, link in enumerate(topo.links):
        free.setdefault((link.src, link.dst), []).append(i)
    out = []
    for order in orders:
        hops = []
        for u, v in zip(order, order[1:] + order[:1]):
            left = free.get((u, v))
            if not left:
                return None
            hops.append(left.pop(0))
        out.append(tuple(hops))
    return out


# ------------------------------------------------------------------------------------------------- entry
def degree_bound(topo: Topology) -> int:
    """d: the least out- or in-degree of a compute node over links to other compute nodes."""
    comp = topo.compute_nodes
    out = dict.fromkeys(comp, 0)
    into = dict.fromkeys(comp, 0)
    for link in topo.links:
        if link.src != link.dst and link.src in out and link.dst in out:
            out[link.src] += 1
            into[link.dst] += 1
    return min(min(out.values()), min(into.values())) if comp else 0


def ring_set(topo: Topology, budget: int = DEFAULT_BUDGET, seed: int = 0) -> RingSet:
    """As many link-disjoint directed Hamiltonian rings of the compute nodes over direct links as the module
    docstring's constructions and search find (at least one wherever ``hamiltonian_cycle`` finds one);
    NotApplicable with the reason otherwise. Kept in ``topo._meta``: an allreduce and the reduce-scatter and
    allgather beside it (Compare, the tests) search once per graph and its transpose."""
    key = ("ring_set", budget, seed)
    known = topo._meta.get(key)
    if known is None:
        known = topo._meta[key] = _ring_set(topo, budget, seed)
    return known


def _ring_set(topo: Topology, budget: int, seed: int) -> RingSet:
    comp = list(topo.compute_nodes)
    if len(comp) < 2:
        raise NotApplicable("a ring needs at least two compute nodes")
    bound = degree_bound(topo)
    if bound == 0:
        raise NotApplicable("a ring needs a link out of and into every compute node from another compute node")
    shape = _product_shape(topo)
    if shape is not None:
        sizes, rings = shape
        built = _product_rings(sizes, rings, list(range(len(sizes))), budget, seed)
        if built is not None:
            index = {tuple(int(x) for x in name.split(",")): u for u, name in enumerate(topo.names)}
            orders = [[index[c] for c in ring] for ring in built]
            links = _links_for(topo, orders)
            if links is not None and len(orders) == bound:
                return RingSet(tuple(map(tuple, orders)), tuple(links), bound, "product-of-cycles construction")
    pos = {u: r for r, u in enumerate(comp)}
    arcs = [(pos[link.src], pos[link.dst], i) for i, link in enumerate(topo.links)
            if link.src != link.dst and link.src in pos and link.dst in pos]
    found, how = search_rings(len(comp), arcs, bound, budget, seed)
    if found:
        orders = tuple(tuple(comp[arc[0]] for arc in ring) for ring in found)
        return RingSet(orders, tuple(tuple(arc[2] for arc in ring) for ring in found), bound, how)
    gray = _gray_cycle(topo, shape[0]) if shape is not None else None
    order = gray if gray is not None else hamiltonian_cycle(topo)    # NotApplicable with its reason if none
    return _from_cycle(topo, order, bound)


def _gray_cycle(topo: Topology, sizes: list[int]) -> list[int] | None:
    """The reflected mixed-radix Gray code through a product of cycles, when it closes into a ring (it does
    whenever the first size is even, e.g. on every hypercube)."""
    codes: list[Coord] = [()]
    for k in sizes:
        codes = [c + (x,) for i, c in enumerate(codes) for x in (range(k) if i % 2 == 0 else range(k - 1, -1, -1))]
    index = {tuple(int(x) for x in name.split(",")): u for u, name in enumerate(topo.names)}
    order = [index[c] for c in codes]
    return order if _is_cycle(topo, order) else None


def _from_cycle(topo: Topology, order: list[int], bound: int) -> RingSet:
    """One ring, plus its reverse where the reverse links exist apart from the ring's own."""
    rings = [list(order)]
    back = order[::-1]
    if _is_cycle(topo, back):
        rings.append(back)
    links = _links_for(topo, rings)
    if links is None:
        rings = rings[:1]
        links = _links_for(topo, rings)
    return RingSet(tuple(map(tuple, rings)), tuple(links), bound,
                   "one cycle and its reverse; the merging search found no ring")
