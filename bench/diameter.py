"""Diameter on 4096-node topologies: the project's rustworkx path against networkx, in one run.

    python -m bench.diameter            # prints a table; ratio = networkx time / ours
"""
import random
import time

import networkx as nx

from topologies import load
from topologies.model import Topology
from topologies.properties import diameter


def random_regular_digraph(n: int, d: int, seed: int) -> Topology:
    """A union of d random Hamiltonian cycles: strongly connected and d-regular."""
    rng = random.Random(seed)
    edges = []
    for _ in range(d):
        order = list(range(n))
        rng.shuffle(order)
        edges += [(order[i], order[(i + 1) % n]) for i in range(n)]
    return Topology.from_edges(n, edges, name=f"random {d}-regular digraph")


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def main():
    cases = [("biring(4096)", load("biring(4096)")), ("random 4-regular, N=4096", random_regular_digraph(4096, 4, 1)),
             ("random 2-regular, N=4096", random_regular_digraph(4096, 2, 2))]
    print(f"{'topology':28} {'diameter':>8} {'ours s':>8} {'networkx s':>11} {'ratio':>7}")
    for label, topo in cases:
        ours, t_ours = timed(lambda: diameter(topo))
        g = nx.DiGraph(list(topo.simple_edges()))
        ref, t_ref = timed(lambda: nx.diameter(g))
        assert ours == ref, (label, ours, ref)
        print(f"{label:28} {ours:>8} {t_ours:>8.3f} {t_ref:>11.2f} {t_ref / t_ours:>6.0f}x")


if __name__ == "__main__":
    main()
