"""The reconstructed Diamond and DBJMod base graphs and their searched allgathers (direct-connect App. H, Table 9)."""
from fractions import Fraction

import networkx as nx
import pytest

from solvers.core.cost import cost
from solvers.directconnect.searched_schedules import ALLGATHERS, searched_allgather
from solvers.core.verify import verify
from topologies import reconstructed
from topologies.families import ring
from topologies.model import Topology, TopologyError
from topologies.properties import compute_distances, diameter, in_degrees, is_strongly_connected, out_degrees

# expr, builder, N, d, diameter, reverse-symmetric, steps, tb_factor
CASES = [
    ("diamond()", reconstructed.diamond, 8, 2, 3, False, 3, Fraction(7, 8)),
    ("dbjmod(2,3)", lambda: reconstructed.dbjmod(2, 3), 8, 2, 3, True, 4, Fraction(7, 8)),
    ("dbjmod(2,4)", lambda: reconstructed.dbjmod(2, 4), 16, 2, 4, False, 5, Fraction(15, 16)),
    ("dbjmod(3,2)", lambda: reconstructed.dbjmod(3, 2), 9, 3, 3, False, 3, Fraction(8, 9)),
    ("dbjmod(4,2)", lambda: reconstructed.dbjmod(4, 2), 16, 4, 3, False, 3, Fraction(15, 16)),
]
IDS = [c[0] for c in CASES]


def _digraph(topo: Topology) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((l.src, l.dst) for l in topo.links)
    return g


@pytest.mark.parametrize("expr, build, n, d, diam, revsym, steps, tb", CASES, ids=IDS)
def test_graph_properties(expr, build, n, d, diam, revsym, steps, tb):
    topo = build()
    assert topo.expr == expr and topo.num_nodes == topo.n == n
    assert out_degrees(topo) == [d] * n and in_degrees(topo) == [d] * n
    pairs = [(l.src, l.dst) for l in topo.links]
    assert all(a != b for a, b in pairs), "self-loop"
    assert len(set(pairs)) == len(pairs), "parallel links"
    assert all(l.bandwidth == 1 for l in topo.links)
    assert is_strongly_connected(topo)
    assert diameter(topo) == diam
    g = _digraph(topo)
    assert nx.algorithms.isomorphism.DiGraphMatcher(g, g.reverse(copy=True)).is_isomorphic() == revsym


@pytest.mark.parametrize("expr, build, n, d, diam, revsym, steps, tb", CASES, ids=IDS)
def test_searched_allgather(expr, build, n, d, diam, revsym, steps, tb):
    topo = build()
    schedule = searched_allgather(topo)
    assert schedule is not None and schedule.algo == "searched"
    v = verify(topo, schedule)
    assert v.ok, v.errors
    c = cost(topo, schedule)
    assert c.steps == steps
    assert c.tb_factor == tb == Fraction(n - 1, n) == c.tb_lower_bound
    # not a BFB schedule (Def 15): some transfer ((v, C), (w, u), t) breaks d(v,u) = d(v,w) + 1 = t
    dist = compute_distances(topo)
    assert any(not (dist[t.shard][topo.links[t.link].dst] == dist[t.shard][topo.links[t.link].src] + 1 == t.step)
               for t in schedule.transfers)


@pytest.mark.parametrize("dn", [(2, 3), (2, 4), (3, 2), (4, 2)])
def test_dbjmod_is_debruijn_rewired_into_one_cycle(dn):
    """DBJ(d,n) without self-loops and 2-cycles, plus one cycle through the nodes that lost arcs."""
    d, n = dn
    m = d ** n
    dbj = {(x, (d * x + a) % m) for x in range(m) for a in range(d)}
    dropped = {(a, b) for a, b in dbj if a == b or (b, a) in dbj}
    cycle = reconstructed._DBJMOD_CYCLE[dn]
    assert sorted(cycle) == sorted({a for a, _ in dropped})
    added = {(cycle[i], cycle[(i + 1) % len(cycle)]) for i in range(len(cycle))}
    assert not added & (dbj - dropped)
    topo = reconstructed.dbjmod(d, n)
    assert {(l.src, l.dst) for l in topo.links} == (dbj - dropped) | added
    assert topo.name == f"DBJMod({d},{n})"


@pytest.mark.parametrize("args", [(2, 5), (4, 4), (3, 3), (2.0, 3), (True, 3)])
def test_dbjmod_unknown(args):
    with pytest.raises(TopologyError, match=r"dbjmod\(2,3\), dbjmod\(2,4\), dbjmod\(3,2\), dbjmod\(4,2\)"):
        reconstructed.dbjmod(*args)


def test_searched_allgather_other_topologies():
    assert set(ALLGATHERS) == set(IDS)
    assert searched_allgather(ring(8)) is None
    # the right expr on other links: no schedule rather than a wrong one
    assert searched_allgather(ring(8).with_identity(expr="diamond()")) is None
    assert reconstructed.diamond().name == "Diamond"
