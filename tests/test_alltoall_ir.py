"""All-to-all and custom collectives in the schedule IR: the verifier's semantics, the direct baseline and the
MSCCL export (layout: rank r's output block s = input block r of rank s)."""
import importlib
import re
from fractions import Fraction

import pytest

from solvers.directconnect.direct_alltoall import direct_alltoall
from solvers.core.errors import NotApplicable
from solvers.export import check_xml, export, lower, parse_xml, simulate, to_xml, validate
from solvers.core.schedule import Collective, Schedule, Transfer
from solvers.core.verify import verify
from topologies import parse_topology
from topologies.model import Topology

from .helpers import star

F = Fraction
TOPOLOGIES = ["ring(5)", "torus(3,4)", "cluster(2,4,10,1)", "dgx_a100(boxes=2)"]


def link(topo, a, b):
    return next(i for i, l in enumerate(topo.links) if (l.src, l.dst) == (a, b))


def aggregated_ring_alltoall(n: int, halves: bool = False) -> tuple[Topology, Schedule]:
    """On the one-way ring 0 -> 1 -> ... -> n-1 -> 0, shard s travels as the block of pieces still ahead of it: in
    step k node s+k-1 forwards the pieces for s+k, ..., s+n-1, one transfer per run of consecutive pieces. So
    transfers span several pieces and relays forward data meant for others. ``halves``: every transfer in two
    halves (two chunks per piece when lowered)."""
    topo = Topology.from_edges(n, [(i, (i + 1) % n) for i in range(n)], name=f"ring({n})")
    out = []
    for s in range(n):
        for k in range(1, n):
            u, ahead = (s + k - 1) % n, sorted((s + i) % n for i in range(k, n))
            runs, start = [], ahead[0]
            for a, b in zip(ahead, ahead[1:] + [None]):
                if b != a + 1:
                    runs.append((start, a + 1))
                    start = b
            for a, b in runs:
                lo, hi = F(a, n), F(b, n)
                parts = [(lo, (lo + hi) / 2), ((lo + hi) / 2, hi)] if halves else [(lo, hi)]
                out += [Transfer(s, x, y, link(topo, u, (u + 1) % n), k) for x, y in parts]
    return topo, Schedule(Collective.ALLTOALL, out, "aggregated ring")


# --------------------------------------------------------------------------------------------- the IR
def test_parse_aliases_and_iteration():
    for text in ["alltoall", "a2a", "all_to_all", "all-to-all", "ALLTOALL"]:
        assert Collective.parse(text) is Collective.ALLTOALL
    assert Collective.parse("custom") is Collective.CUSTOM
    # iterating gives the collectives every synthesizer builds from an allgather; every() gives all of them
    assert list(Collective) == [Collective.ALLGATHER, Collective.REDUCE_SCATTER, Collective.ALLREDUCE]
    assert set(Collective.every()) == set(Collective) | {Collective.ALLTOALL, Collective.CUSTOM} | set(
        Collective.rooted_ones())
    assert Collective.ALLTOALL.copy_only and Collective.CUSTOM.copy_only and not Collective.ALLREDUCE.copy_only
    assert Collective.parse("gather") is Collective.GATHER and Collective.parse("bcast") is Collective.BROADCAST
    with pytest.raises(ValueError, match="alltoall, custom, broadcast, reduce, gather, scatter"):
        Collective.parse("gatherv")


def test_demand_is_for_custom_schedules_only():
    s = Schedule(Collective.CUSTOM, [], demand=[(1, 0, F(0), F(1, 2))])
    assert s.demand == ((1, 0, F(0), F(1, 2)),) and s.demand[0].dst == 1
    assert Schedule(Collective.ALLGATHER, []).demand is None
    with pytest.raises(ValueError, match="only a custom schedule carries a demand"):
        Schedule(Collective.ALLTOALL, [], demand=[(1, 0, F(0), F(1))])


# --------------------------------------------------------------------------------------- the verifier
@pytest.mark.parametrize("expr", TOPOLOGIES)
def test_direct_alltoall_verifies(expr):
    topo = parse_topology(expr)
    s = direct_alltoall(topo)
    v = verify(topo, s)
    assert v.ok, v.errors[:3]
    assert s.collective is Collective.ALLTOALL and not any(t.reduce for t in s.transfers)


def test_direct_alltoall_takes_shortest_paths():
    topo = parse_topology("torus(3,4)")
    s = direct_alltoall(topo)
    n = topo.n
    hops = {}
    for t in s.transfers:
        d = topo.compute_nodes[int(t.lo * n)]
        hops[(t.shard, d)] = max(hops.get((t.shard, d), 0), t.step)
    assert len(hops) == n * (n - 1) and max(hops.values()) == 3      # the diameter of the 3 x 4 torus


def test_direct_alltoall_needs_every_gpu_reachable():
    topo = Topology.from_edges(3, [(0, 1), (1, 2)], name="line")
    with pytest.raises(NotApplicable, match="not reachable from"):
        direct_alltoall(topo)


def test_aggregated_transfers_spanning_pieces_verify():
    for n in (4, 5):
        for halves in (False, True):
            topo, s = aggregated_ring_alltoall(n, halves)
            assert verify(topo, s).ok


def test_a_missing_piece_names_destination_and_shard():
    topo = parse_topology("ring(5)")
    s = direct_alltoall(topo)
    # the last hop of shard 0's piece for node 3 ([3/5, 4/5))
    last = max((t for t in s.transfers if t.shard == 0 and t.lo == F(3, 5)), key=lambda t: t.step)
    s.transfers.remove(last)
    v = verify(topo, s)
    assert not v.ok
    assert v.errors[0].startswith("all-to-all piece never delivered: destination 3 ends without shard 0 [3/5, 4/5)")


def test_forwarding_a_piece_not_held_fails():
    topo = parse_topology("ring(5)")
    s = direct_alltoall(topo)
    # in step 1 node 1 forwards shard 0's piece for node 3, which only reaches node 1 in step 1
    s.transfers.append(Transfer(0, F(3, 5), F(4, 5), link(topo, 1, 2), 1))
    v = verify(topo, s)
    assert not v.ok and "does not hold [3/5, 4/5) yet" in v.errors[0] and "step 1: 1 -> 2" in v.errors[0]


def test_a_switch_must_receive_what_it_forwards():
    topo = star(3)
    g0_sw, sw_g1 = link(topo, 0, 3), link(topo, 3, 1)
    ok = [Transfer(0, F(1, 3), F(2, 3), g0_sw, 1), Transfer(0, F(1, 3), F(2, 3), sw_g1, 2)]
    demand = [(1, 0, F(1, 3), F(2, 3))]
    assert verify(topo, Schedule(Collective.CUSTOM, ok, demand=demand)).ok
    early = [ok[0], ok[1]._replace(step=1)]
    v = verify(topo, Schedule(Collective.CUSTOM, early, demand=demand))
    assert not v.ok and "switches do not copy" in v.errors[0]


def test_alltoall_does_not_reduce():
    topo = parse_topology("ring(5)")
    s = direct_alltoall(topo)
    s.transfers[0] = s.transfers[0]._replace(reduce=True)
    v = verify(topo, s)
    assert not v.ok and "an all-to-all does not reduce" in v.errors[0]


def test_extra_data_is_allowed():
    topo = parse_topology("ring(5)")
    s = direct_alltoall(topo)
    s.transfers.append(Transfer(0, F(0), F(1), link(topo, 0, 1), 1))    # node 1 also gets all of shard 0
    assert verify(topo, s).ok


def test_the_fast_path_declines_alltoall(monkeypatch):
    v = importlib.import_module("solvers.core.verify")
    monkeypatch.setattr(v, "FAST_MIN_TRANSFERS", 0)
    topo = parse_topology("torus(3,4)")
    assert v._fast_verify(topo, direct_alltoall(topo)) is None


def _custom(topo):
    """Node 2 wants [0, 1/2) of shard 0 and node 4 wants [1/3, 1) of shard 1, on the one-way ring(5)."""
    ts = [Transfer(0, F(0), F(1, 2), link(topo, 0, 1), 1), Transfer(0, F(0), F(1, 2), link(topo, 1, 2), 2),
          Transfer(1, F(1, 3), F(1), link(topo, 1, 2), 1), Transfer(1, F(1, 3), F(1), link(topo, 2, 3), 2),
          Transfer(1, F(1, 3), F(2, 3), link(topo, 3, 4), 3), Transfer(1, F(2, 3), F(1), link(topo, 3, 4), 3)]
    return ts, [(2, 0, F(0), F(1, 2)), (4, 1, F(1, 3), F(1))]


def test_custom_demand_verifies_and_a_missing_interval_fails():
    topo = parse_topology("ring(5)")
    ts, demand = _custom(topo)
    assert verify(topo, Schedule(Collective.CUSTOM, ts, demand=demand)).ok
    v = verify(topo, Schedule(Collective.CUSTOM, ts[:-1], demand=demand))
    assert not v.ok and v.errors[0] == "demand not met: destination 4 ends without shard 1 [2/3, 1)"
    # a demand finer than any transfer bound
    v = verify(topo, Schedule(Collective.CUSTOM, ts, demand=demand + [(3, 0, F(1, 7), F(2, 7))]))
    assert not v.ok and "destination 3 ends without shard 0 [1/7, 2/7)" in v.errors[0]


def test_custom_without_or_with_a_bad_demand_is_an_error():
    topo = parse_topology("ring(5)")
    ts, _ = _custom(topo)
    v = verify(topo, Schedule(Collective.CUSTOM, ts))
    assert not v.ok and "a custom schedule needs a demand" in v.errors[0]
    v = verify(topo, Schedule(Collective.CUSTOM, ts, demand=[(9, 0, F(0), F(1))]))
    assert not v.ok and "must be compute nodes" in v.errors[0]
    v = verify(topo, Schedule(Collective.CUSTOM, ts, demand=[(1, 0, F(1, 2), F(1, 2))]))
    assert not v.ok and "not a non-empty part of [0, 1)" in v.errors[0]
    v = verify(topo, Schedule(Collective.CUSTOM, ts, demand=[(1, 0, 0.0, 0.5)]))
    assert not v.ok and "exact fractions" in v.errors[0]


# ------------------------------------------------------------------------------------------------ MSCCL
@pytest.mark.parametrize("expr", TOPOLOGIES)
@pytest.mark.parametrize("dialect", ["executor", "msccl"])
def test_alltoall_export_validates_and_simulates(expr, dialect):
    topo = parse_topology(expr)
    text, report = export(topo, direct_alltoall(topo), dialect)
    assert report.ok and report.ranks == topo.n and check_xml(text).ok
    assert 'coll="alltoall"' in text and 'inplace="0"' in text
    algo, got = parse_xml(text)
    assert got == dialect and validate(algo, dialect) == [] and simulate(algo) == []
    assert algo.nchunksperloop == topo.n and all(g.i_chunks == g.o_chunks == topo.n for g in algo.gpus)


def test_layout_with_relays_pieces_in_one_transfer_and_two_chunks_per_piece():
    for halves in (False, True):
        topo, s = aggregated_ring_alltoall(5, halves)
        algo = lower(topo, s)
        m = 2 if halves else 1
        assert algo.nchunksperloop == 5 * m
        assert any(g.s_chunks > 0 for g in algo.gpus)               # relayed pieces wait in scratch
        assert check_xml(to_xml(algo)).ok
        # rank 0's own piece is copied from input block 0 to output block 0
        local = [st for tb in algo.gpus[0].tbs for st in tb.steps if st.type == "cpy"]
        assert [(st.srcbuf, st.srcoff, st.dstbuf, st.dstoff, st.cnt) for st in local] == [("i", 0, "o", 0, m)]


def test_alltoall_is_lowered_out_of_place_only():
    topo = parse_topology("ring(5)")
    with pytest.raises(NotApplicable, match="out of place only"):
        lower(topo, direct_alltoall(topo), in_place=True)


def test_custom_export_is_refused():
    topo = parse_topology("ring(5)")
    ts, demand = _custom(topo)
    with pytest.raises(NotApplicable, match="MSCCL has no custom collective"):
        export(topo, Schedule(Collective.CUSTOM, ts, demand=demand))
    with pytest.raises(NotApplicable, match="MSCCL has no custom collective"):
        lower(topo, Schedule(Collective.CUSTOM, ts, demand=demand))


def _good_xml():
    topo = parse_topology("torus(3,4)")
    return export(topo, direct_alltoall(topo))[0]


def test_a_missing_receive_is_rejected():
    text = _good_xml()
    # the last step of a receiving threadblock becomes a nop: its sender's message is never taken
    m = list(re.finditer(r'<step s="(\d+)" type="r" (srcbuf="\w" srcoff="\d+" dstbuf="\w" dstoff="\d+") cnt="1" '
                         r'depid="-1" deps="-1" hasdep="0"/>\n    </tb>', text))[0]
    bad = text[:m.start()] + f'<step s="{m.group(1)}" type="nop" {m.group(2)} cnt="0" depid="-1" deps="-1" ' \
                             'hasdep="0"/>\n    </tb>' + text[m.end():]
    report = check_xml(bad)
    assert not report.ok and "never received" in report.first, report.first


def test_a_wrong_output_chunk_is_rejected():
    text = _good_xml()
    m = re.search(r'type="r" srcbuf="\w" srcoff="\d+" dstbuf="o" dstoff="(\d+)"', text)
    off = int(m.group(1))
    wrong = m.group(0).replace(f'dstoff="{off}"', f'dstoff="{(off + 1) % 12}"')
    bad = text[:m.start()] + wrong + text[m.end():]
    report = check_xml(bad)
    assert not report.ok and ("ends empty" in report.first or "holds input chunk" in report.first), report.first


def test_simulator_checks_the_alltoall_postcondition():
    """A hand-written 2-rank all-to-all: out of place it is right; reading the wrong input block is caught."""
    good = ('<algo name="a2a" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" coll="alltoall" inplace="0" '
            'outofplace="1" minBytes="0" maxBytes="1024">'
            + "".join(f'<gpu id="{r}" i_chunks="2" o_chunks="2" s_chunks="0">'
                      f'<tb id="0" send="{1 - r}" recv="{1 - r}" chan="0">'
                      f'<step s="0" type="s" srcbuf="i" srcoff="{1 - r}" dstbuf="o" dstoff="{r}" cnt="1" depid="-1" '
                      'deps="-1" hasdep="0"/>'
                      f'<step s="1" type="r" srcbuf="i" srcoff="{r}" dstbuf="o" dstoff="{1 - r}" cnt="1" depid="-1" '
                      'deps="-1" hasdep="0"/></tb>'
                      '<tb id="1" send="-1" recv="-1" chan="0">'
                      f'<step s="0" type="cpy" srcbuf="i" srcoff="{r}" dstbuf="o" dstoff="{r}" cnt="1" depid="-1" '
                      'deps="-1" hasdep="0"/></tb></gpu>' for r in range(2))
            + "</algo>")
    assert check_xml(good).ok, check_xml(good).first
    bad = good.replace('type="s" srcbuf="i" srcoff="1"', 'type="s" srcbuf="i" srcoff="0"', 1)
    report = check_xml(bad)
    assert not report.ok and "gpu 1 buffer o chunk 0 holds input chunk 0 of ranks [0], expected chunk 1" in report.first
