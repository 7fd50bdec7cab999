"""The latency term of the runtime model's lower bound (``solvers.runtime.bounds``): how far, in link alphas, data
must travel, whatever the bytes.

d(u, v) is the least total alpha on a path from compute node u to compute node v, in the prices of an
``Execution`` (the links' own alphas, or alpha per send a GPU makes and none for a switch's forward). In the
runtime model a message holds its link for at least alpha_l, and the data of u (or u's contribution) can reach v
only through a chain of messages along some path, so:

* allgather, reduce-scatter, allreduce and all-to-all: every GPU's data (contribution) reaches every other GPU, so
  any schedule lasts at least max d(u, v). Not twice that for allreduce: the reduction need not meet at one
  node (two GPUs that swap their vectors and reduce on arrival finish in one alpha), so the papers' 2 D(G) alpha
  is a step-model figure, not a bound here;
* broadcast and scatter: the farthest GPU from the root, max_v d(root, v); reduce and gather: the farthest to it.

On a switch-free fabric with one alpha the distances are hop counts times alpha, read off the one-byte hop
matrix ``topologies.properties.distances_into`` (BFB has already made it: 0.27 GB at 16384 nodes where a float
matrix takes 2.1 GB); elsewhere Bellman-Ford over the links' alphas.
"""
from __future__ import annotations

import math

import numpy as np

from topologies.model import Topology

from ..core.schedule import Collective
from .model import Execution

__all__ = ["alpha_distances", "latency_us"]


def latency_us(topo: Topology, collective: Collective | str, execution: Execution | None = None,
               root: int | None = None) -> float:
    """The module docstring's latency bound of ``collective`` on ``topo`` in ``execution``'s prices, in us (math.inf
    where a GPU does not reach another); ``root``: a rooted collective's root (ValueError without it)."""
    if not isinstance(collective, Collective):
        collective = Collective.parse(collective)
    if collective is Collective.CUSTOM:
        return 0.0
    alpha, _ = (execution or Execution()).link_prices(topo)
    if collective.rooted:
        if root is None:
            raise ValueError(f"the {collective.value} bound needs the root")
        far = alpha_distances(topo, alpha)
        at = list(topo.compute_nodes).index(root)
        inward = collective in (Collective.REDUCE, Collective.GATHER)
        return float((far[:, at] if inward else far[at, :]).max(initial=0.0))
    if alpha.any() and not topo.switch_nodes and np.all(alpha == alpha[0]):
        from topologies.properties import distances_into

        into = distances_into(topo)                     # row u: d(v, u) for every v
        if into.size and into.max() == np.iinfo(into.dtype).max:
            return math.inf                             # some node does not reach another
        return float(alpha[0]) * float(into.max(initial=0))
    return float(alpha_distances(topo, alpha).max(initial=0.0))


def alpha_distances(topo: Topology, alpha: np.ndarray) -> np.ndarray:
    """d(u, v) between compute nodes (rows: from, columns: to), the least total of ``alpha`` (one per link) on a
    path; inf where there is none."""
    from topologies.properties import compute_distances

    if not alpha.any():
        return np.zeros((topo.n, topo.n))
    if not topo.switch_nodes and np.all(alpha == alpha[0]):
        return compute_distances(topo) * float(alpha[0])
    src, dst = topo.link_ends
    comp = list(topo.compute_nodes)
    dist = np.full((len(comp), topo.num_nodes), np.inf)
    dist[np.arange(len(comp)), comp] = 0.0
    for _ in range(topo.num_nodes):             # Bellman-Ford, every link relaxed at once
        new = dist.copy()
        np.minimum.at(new.T, dst, (dist[:, src] + alpha[None, :]).T)
        if np.array_equal(new, dist):
            break
        dist = new
    return dist[:, comp]
