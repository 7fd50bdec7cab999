"""Offline search that reconstructed the Diamond and DBJMod base graphs and their allgather schedules.

Run ``python -m solvers.directconnect.reconstruct_bases [diamond] [dbjmod]`` (under a minute on one core). It prints what it finds; the results
were copied by hand into ``topologies/reconstructed.py`` (edge lists) and ``solvers/directconnect/searched_schedules.py``
(schedules). Nothing in the package imports this module.

Why a search: the direct-connect paper (Zhao et al., App. H, Fig. 19 and Fig. 20, Table 9) names these graphs and
states their step counts and bandwidth optimality (Table 7), but the figures with the edge sets are lost and the
schedules were never published. See ``topologies/reconstructed.py`` for the targets.

Schedule model (exact, not a relaxation). A bandwidth-optimal allgather on a d-regular unit-link graph has
sum_t max_link_load_t = (N-1)/d shards. Every node must receive N-1 shards over d in-links, so equality forces
every link to carry exactly the step's maximum W_t in every step, and every node to receive every piece exactly
once. With each shard cut into ``c`` equal chunks, the feasibility MILP is

    y[s,p,(a,b),t] in {0,1}       chunk p of source s crosses a->b in step t
    sum_{s,p} y[s,p,e,t] = W_t     for every link e and step t     (W_t integer, in chunks)
    sum_{e into u, t} y[s,p,e,t] = 1   for every chunk (s,p) and node u != s
    y[s,p,(a,b),t] <= sum_{e into a, t' < t} y[s,p,e,t']   for a != s   (receive before forward)
    sum_t W_t = c (N-1) / d

solved with HiGHS. Variables that cannot be used (a sender farther than t-1 hops from the source, a link into the
source) are left out. Optionally the schedule is required to be invariant under given automorphisms of the
graph (columns in one orbit share a variable), which shrinks the model without changing what a solution means.
"""
from __future__ import annotations

import itertools
import random
import sys
import time
from collections import deque
from fractions import Fraction

import highspy
import networkx as nx
import numpy as np

# ----------------------------------------------------------------------------------------------- graph tools


def distances(n: int, edges) -> list[list[int]]:
    """dist[s][u]: hop distance s -> u (a large number when unreachable)."""
    out = [[] for _ in range(n)]
    for a, b in edges:
        out[a].append(b)
    big = 10 ** 6
    dist = []
    for s in range(n):
        d = [big] * n
        d[s] = 0
        q = deque([s])
        while q:
            a = q.popleft()
            for b in out[a]:
                if d[b] == big:
                    d[b] = d[a] + 1
                    q.append(b)
        dist.append(d)
    return dist


def diameter(n: int, edges) -> int:
    return max(max(row) for row in distances(n, edges))


def is_simple_regular(n: int, edges, d: int) -> bool:
    if len(set(edges)) != len(edges) or any(a == b for a, b in edges):
        return False
    outd, ind = [0] * n, [0] * n
    for a, b in edges:
        outd[a] += 1
        ind[b] += 1
    return all(x == d for x in outd) and all(x == d for x in ind)


def digraph(n: int, edges) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    return g


def reverse_symmetric(n: int, edges) -> bool:
    """G isomorphic to its transpose G^T."""
    g = digraph(n, edges)
    return nx.algorithms.isomorphism.DiGraphMatcher(g, g.reverse(copy=True)).is_isomorphic()


def automorphisms(n: int, edges, limit: int = 5000) -> list[dict[int, int]]:
    g = digraph(n, edges)
    out = []
    for m in nx.algorithms.isomorphism.DiGraphMatcher(g, g).isomorphisms_iter():
        out.append(m)
        if len(out) >= limit:
            break
    return out


def free_cyclic_group(n: int, edges) -> list[dict[int, int]]:
    """The largest cyclic group of automorphisms whose non-identity elements fix no node (so each source's
    stabiliser is trivial and imposing invariance only ties together the schedules of sources in one orbit)."""
    best = [{i: i for i in range(n)}]
    for g in automorphisms(n, edges):
        powers = [{i: i for i in range(n)}]
        cur = dict(g)
        ok = True
        while any(cur[i] != i for i in range(n)):
            if any(cur[i] == i for i in range(n)):
                ok = False
                break
            powers.append(cur)
            cur = {i: g[cur[i]] for i in range(n)}
        if ok and len(powers) > len(best):
            best = powers
    return best


# ----------------------------------------------------------------------------------------------- schedule MILP


def schedule_milp(n: int, edges, d: int, steps: int, chunks: int, *, group=None, time_limit: float = 300.0,
                  threads: int = 1, verbose: bool = False):
    """A bandwidth-optimal ``steps``-step allgather of ``chunks`` chunks per shard, or None (see module doc).

    Returns (status, transfers) where transfers is a list of (source, chunk, a, b, step). ``group``: a list of
    automorphisms (dicts node -> node) under which the schedule must be invariant (it should be a group; it is
    closed here by orbit computation over its elements).
    """
    need = chunks * (n - 1)
    if need % d:
        return "bad-chunks", None
    total = need // d
    dist = distances(n, edges)
    into = [[] for _ in range(n)]
    for a, b in edges:
        into[b].append((a, b))
    keys = []
    for s in range(n):
        for p in range(chunks):
            for (a, b) in edges:
                if b == s:
                    continue
                for t in range(1, steps + 1):
                    if dist[s][a] <= t - 1 and dist[s][b] <= t:
                        keys.append((s, p, a, b, t))
    col_of: dict[tuple, int] = {}
    ncols = 0
    if group:
        gl = [g for g in group]
        for k in keys:
            if k in col_of:
                continue
            s, p, a, b, t = k
            for g in gl:
                col_of[(g[s], p, g[a], g[b], t)] = ncols
            ncols += 1
    else:
        for k in keys:
            col_of[k] = ncols
            ncols += 1
    keyset = set(keys)
    wcol = list(range(ncols, ncols + steps))
    ncols += steps

    rows: list[tuple[dict[int, float], float, float]] = []

    def row(coefs: dict[int, float], lo: float, hi: float):
        rows.append((coefs, lo, hi))

    # link loads
    for (a, b) in edges:
        for t in range(1, steps + 1):
            c: dict[int, float] = {}
            for s in range(n):
                for p in range(chunks):
                    k = (s, p, a, b, t)
                    if k in keyset:
                        c[col_of[k]] = c.get(col_of[k], 0) + 1
            c[wcol[t - 1]] = c.get(wcol[t - 1], 0) - 1
            row(c, 0, 0)
    # each node receives each chunk exactly once
    for s in range(n):
        for p in range(chunks):
            for u in range(n):
                if u == s:
                    continue
                c = {}
                for (a, b) in into[u]:
                    for t in range(1, steps + 1):
                        k = (s, p, a, b, t)
                        if k in keyset:
                            c[col_of[k]] = c.get(col_of[k], 0) + 1
                if not c:
                    return "infeasible", None
                row(c, 1, 1)
    # causality
    for k in keys:
        s, p, a, b, t = k
        if a == s:
            continue
        c = {col_of[k]: 1.0}
        for (x, y) in into[a]:
            for t2 in range(1, t):
                k2 = (s, p, x, y, t2)
                if k2 in keyset:
                    c[col_of[k2]] = c.get(col_of[k2], 0) - 1
        row(c, -highspy.kHighsInf, 0)
    row({w: 1 for w in wcol}, total, total)

    h = highspy.Highs()
    h.setOptionValue("output_flag", verbose)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("threads", threads)
    lower = np.zeros(ncols)
    upper = np.ones(ncols)
    for w in wcol:
        upper[w] = total
    upper[wcol[0]] = chunks          # step 1 can only carry the sender's own shard
    h.addVars(ncols, lower, upper)
    h.changeColsIntegrality(ncols, np.arange(ncols, dtype=np.int32),
                            np.array([highspy.HighsVarType.kInteger] * ncols))
    # rows in CSR
    starts, idx, val, lo, hi = [], [], [], [], []
    for coefs, l, u in rows:
        starts.append(len(idx))
        for j, v in coefs.items():
            if v != 0:
                idx.append(j)
                val.append(v)
        lo.append(l)
        hi.append(u)
    h.addRows(len(rows), np.array(lo, float), np.array(hi, float), len(idx), np.array(starts, np.int32),
              np.array(idx, np.int32), np.array(val, float))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return status, None
    x = h.getSolution().col_value
    out = [k for k in keys if x[col_of[k]] > 0.5]
    return status, out


def chunks_to_tuples(transfers, chunks: int):
    """(source, chunk, a, b, step) -> (source, "lo", "hi", a, b, step), merging chunks that are adjacent."""
    groups: dict[tuple, list[int]] = {}
    for s, p, a, b, t in transfers:
        groups.setdefault((s, a, b, t), []).append(p)
    out = []
    for (s, a, b, t), ps in groups.items():
        ps.sort()
        run = [ps[0]]
        for p in ps[1:] + [None]:
            if p is not None and p == run[-1] + 1:
                run.append(p)
                continue
            lo, hi = Fraction(run[0], chunks), Fraction(run[-1] + 1, chunks)
            out.append((s, str(lo), str(hi), a, b, t))
            if p is not None:
                run = [p]
    out.sort(key=lambda r: (r[5], r[0], Fraction(r[1]), r[3], r[4]))
    return out


def check_with_verifier(n: int, edges, rows, name: str = "candidate"):
    """Verify the tuples with the project's verifier; returns (ok, steps, tb_factor)."""
    from solvers.core.cost import cost
    from solvers.core.schedule import Collective, Schedule, Transfer
    from solvers.core.verify import verify
    from topologies.model import Topology

    topo = Topology.from_edges(n, edges, name=name)
    link = {(l.src, l.dst): i for i, l in enumerate(topo.links)}
    s = Schedule(Collective.ALLGATHER, [Transfer(v, Fraction(lo), Fraction(hi), link[(a, b)], t)
                                        for v, lo, hi, a, b, t in rows], algo="searched")
    v = verify(topo, s)
    c = cost(topo, s)
    return v.ok, c.steps, c.tb_factor


# ----------------------------------------------------------------------------------------------- BFB LP


def bfb_tb(n: int, edges, d: int) -> Fraction | float:
    """The optimal BFB tb_factor: (d/N) sum_t max_u U_{u,t} with LP (1) per (u, t) (float, rounded)."""
    dist = distances(n, edges)
    diam = max(max(r) for r in dist)
    into = [[] for _ in range(n)]
    for a, b in edges:
        into[b].append(a)
    total = 0.0
    for t in range(1, diam + 1):
        worst = 0.0
        for u in range(n):
            srcs = [v for v in range(n) if dist[v][u] == t]
            if not srcs:
                continue
            ws = into[u]
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            pairs = [(v, w) for v in srcs for w in ws if dist[v][w] == t - 1]
            ncol = len(pairs) + 1
            cost = np.zeros(ncol)
            cost[-1] = 1
            h.addVars(ncol, np.zeros(ncol), np.array([1.0] * len(pairs) + [highspy.kHighsInf]))
            h.changeColsCost(ncol, np.arange(ncol, dtype=np.int32), cost)
            for w in ws:
                cols = [i for i, (v, x) in enumerate(pairs) if x == w]
                h.addRow(-highspy.kHighsInf, 0, len(cols) + 1, np.array(cols + [ncol - 1], np.int32),
                         np.array([1.0] * len(cols) + [-1.0]))
            for v in srcs:
                cols = [i for i, (x, w) in enumerate(pairs) if x == v]
                h.addRow(1, 1, len(cols), np.array(cols, np.int32), np.ones(len(cols)))
            h.run()
            worst = max(worst, h.getInfo().objective_function_value)
        total += worst
    return Fraction(total * d / n).limit_denominator(10000)


# ----------------------------------------------------------------------------------------------- DBJMod


def dbj_edges(d: int, n: int) -> list[tuple[int, int]]:
    m = d ** n
    return [(x, (d * x + a) % m) for x in range(m) for a in range(d)]


def dbjmod_base(d: int, n: int):
    """(kept arcs, rewired nodes): DBJ(d,n) without its self-loops and without both arcs of every 2-cycle."""
    edges = dbj_edges(d, n)
    es = set(edges)
    drop = set()
    for a, b in edges:
        if a == b or (a != b and (b, a) in es):
            drop.add((a, b))
    kept = [e for e in edges if e not in drop]
    nodes = sorted({a for a, _ in drop})
    return kept, nodes


def dbjmod_cycles(d: int, n: int, *, limit: int | None = None, seed: int = 0):
    """Edge sets DBJ(d,n) minus loops and 2-cycles, plus one directed cycle through the rewired nodes,
    keeping the graph simple. Exhaustive over cyclic orders when there are few, else random orders."""
    kept, nodes = dbjmod_base(d, n)
    ks = set(kept)
    first, rest = nodes[0], nodes[1:]
    if limit is None:
        orders = (list(p) for p in itertools.permutations(rest))
    else:
        rng = random.Random(seed)

        def gen():
            for _ in range(limit):
                r = rest[:]
                rng.shuffle(r)
                yield r
        orders = gen()
    for perm in orders:
        cyc = [first] + list(perm)
        new = [(cyc[i], cyc[(i + 1) % len(cyc)]) for i in range(len(cyc))]
        if any(e in ks for e in new):
            continue
        edges = sorted(kept + new)
        assert is_simple_regular(d ** n, edges, d)
        yield cyc, edges


TARGETS = {  # (d, n): (N, steps, required diameter or None)
    (2, 3): (8, 4, None),
    (2, 4): (16, 5, 4),
    (3, 2): (9, 3, None),
    (4, 2): (16, 3, 3),
}


def search_dbjmod(d: int, n: int, chunks: int, *, limit=None, time_limit=120.0, max_tries=50, use_group=True,
                  keep_going=False):
    """Try the rewirings of DBJ(d,n) (one per isomorphism class) until one admits the target schedule.

    ``keep_going``: also try the remaining classes and print their outcome (the first success is returned)."""
    N, steps, want_diam = TARGETS[(d, n)]
    t0 = time.time()
    seen: list[tuple] = []
    tries = 0
    first = None
    for cyc, edges in dbjmod_cycles(d, n, limit=limit):
        diam = diameter(N, edges)
        g = digraph(N, edges)
        if any(nx.is_isomorphic(g, h) for h in seen):
            continue
        seen.append(g)
        rs = reverse_symmetric(N, edges)
        if diam > steps or (want_diam is not None and diam != want_diam):
            print(f"DBJMod({d},{n}) cycle {cyc}: diameter {diam}, revsym {rs}: wrong diameter, skipped")
            continue
        tries += 1
        if tries > max_tries:
            break
        group = free_cyclic_group(N, edges) if use_group else None
        status, sol = schedule_milp(N, edges, d, steps, chunks, group=group, time_limit=time_limit)
        print(f"DBJMod({d},{n}) cycle {cyc}: diameter {diam}, revsym {rs}, "
              f"MILP c={chunks} steps={steps}: {status} ({time.time() - t0:.1f}s)", flush=True)
        if sol and first is None:
            rows = chunks_to_tuples(sol, chunks)
            ok, st, tb = check_with_verifier(N, edges, rows, f"DBJMod({d},{n})")
            print(f"  verified {ok}, steps {st}, tb {tb}, BFB tb {bfb_tb(N, edges, d)}")
            print(f"  edges = {edges}")
            first = (edges, rows)
            if not keep_going:
                break
    if first is None:
        print(f"DBJMod({d},{n}): nothing found ({time.time() - t0:.1f}s)")
    else:
        print(f"DBJMod({d},{n}): done ({time.time() - t0:.1f}s)")
    return first


# ----------------------------------------------------------------------------------------------- Diamond


def invariant(n: int, edges) -> tuple:
    """An isomorphism invariant finer than Weisfeiler-Lehman on regular digraphs (which WL cannot tell apart):
    for every node the multiset of (distance to, distance from) pairs, then the sorted node labels."""
    dist = distances(n, edges)
    labels = []
    for u in range(n):
        labels.append(tuple(sorted((dist[u][v], dist[v][u]) for v in range(n))))
    return tuple(sorted(labels))


def random_two_regular(n: int, rng: random.Random):
    """A random loop-free simple 2-in 2-out digraph on n nodes: the union of two permutations."""
    while True:
        p1 = list(range(n))
        rng.shuffle(p1)
        if any(p1[i] == i for i in range(n)):
            continue
        p2 = list(range(n))
        rng.shuffle(p2)
        if any(p2[i] == i or p2[i] == p1[i] for i in range(n)):
            continue
        return sorted([(i, p1[i]) for i in range(n)] + [(i, p2[i]) for i in range(n)])


def diamond_classes(samples: int, seed: int = 1):
    """Isomorphism classes of 8-node 2-regular simple loop-free digraphs of diameter 3, found by sampling."""
    rng = random.Random(seed)
    buckets: dict[str, list[nx.DiGraph]] = {}
    out = []
    for _ in range(samples):
        edges = random_two_regular(8, rng)
        if diameter(8, edges) != 3:
            continue
        g = digraph(8, edges)
        key = invariant(8, edges)
        bucket = buckets.setdefault(key, [])
        if any(nx.is_isomorphic(g, h) for h in bucket):
            continue
        bucket.append(g)
        out.append(edges)
    return out


def search_diamond(samples: int = 30000, chunks: int = 2, time_limit: float = 60.0):
    """Try every sampled class; among those admitting a 3-step BW-optimal schedule, choose a graph that is not
    isomorphic to its transpose, on which BFB is not BW-optimal, with the most automorphisms (first in order)."""
    t0 = time.time()
    classes = diamond_classes(samples)
    nrev = sum(reverse_symmetric(8, e) for e in classes)
    print(f"Diamond: {len(classes)} classes of diameter-3 2-regular digraphs on 8 nodes, {nrev} reverse-symmetric "
          f"({time.time() - t0:.1f}s)", flush=True)
    found = []
    stats = {"feasible": 0, "infeasible": 0, "other": 0}
    for edges in classes:
        status, sol = schedule_milp(8, edges, 2, 3, chunks, group=free_cyclic_group(8, edges), time_limit=time_limit)
        if sol is None:
            stats["infeasible" if status == "Infeasible" else "other"] += 1
            continue
        stats["feasible"] += 1
        rs = reverse_symmetric(8, edges)
        bfb = bfb_tb(8, edges, 2)
        aut = len(automorphisms(8, edges))
        print(f"Diamond candidate: revsym={rs} |Aut|={aut} BFB tb={bfb} edges={edges}", flush=True)
        found.append((not rs, bfb > Fraction(7, 8), aut, edges, sol))
    print(f"Diamond: MILP outcomes {stats} ({time.time() - t0:.1f}s)")
    if not found:
        return None
    best = max(found, key=lambda f: f[:3])
    edges, sol = best[3], best[4]
    rows = chunks_to_tuples(sol, chunks)
    ok, st, tb = check_with_verifier(8, edges, rows, "Diamond")
    print(f"Diamond chosen: revsym={not best[0]} BFB-not-optimal={best[1]} |Aut|={best[2]} verified={ok} "
          f"steps={st} tb={tb}\n  edges = {edges}")
    return edges, rows


def emit(results: dict) -> None:
    """Print the literal data for topologies/reconstructed.py (edge lists) and solvers/directconnect/searched_schedules.py."""
    print("\n# ---- edge lists")
    for key, (edges, _) in results.items():
        print(f"{key}: {tuple(edges)}")
    print("\n# ---- ALLGATHERS")
    print("ALLGATHERS: dict[str, tuple[tuple[int, str, str, int, int, int], ...]] = {")
    for key, (_, rows) in results.items():
        print(f'    "{key}": (')
        line = "       "
        for v, lo, hi, a, b, t in rows:
            item = f' ({v}, "{lo}", "{hi}", {a}, {b}, {t}),'
            if len(line) + len(item) > 118:
                print(line)
                line = "       "
            line += item
        print(line)
        print("    ),")
    print("}")


def main(argv: list[str]) -> None:
    what = set(argv) or {"diamond", "dbjmod"}
    results = {}
    t0 = time.time()
    if "diamond" in what:
        r = search_diamond()
        if r:
            results["diamond()"] = r
    if "dbjmod" in what:
        for d, n, c, kw in [(2, 3, 2, {"keep_going": True}), (2, 4, 2, {"keep_going": True}), (3, 2, 3, {}),
                            (4, 2, 4, {"limit": 20000})]:
            r = search_dbjmod(d, n, c, **kw)
            if r:
                results[f"dbjmod({d},{n})"] = r
    print(f"total search time {time.time() - t0:.1f}s")
    emit(results)


if __name__ == "__main__":
    main(sys.argv[1:])
