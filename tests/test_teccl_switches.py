"""TE-CCL's switch models (paper Appendices B and C; solvers/teccl/switches.py) and the no-copy allgather of
Fig. 9: hand-checked tiny oracles, the order the nested models must give on switched fabrics, the switch buffer
and hyper-edge rules read back from the verified schedules, the CLI flags and one-line refusals."""
import json
from fractions import Fraction

import pytest

from solvers.core.errors import NotApplicable
from solvers.core.verify import verify
from solvers.teccl import teccl
from solvers.teccl.instance import allgather_demand, timing
from solvers.teccl.milp import build_milp
from solvers.teccl.solve import solve
from solvers.teccl.switches import HyperEdges, buffer_limit, switch_occupancy
from studio.cli import main
from topologies import parse_topology
from topologies.model import Link, Topology

MODELS = {"none": {}, "limited": {"switch_buffer": 1}, "unlimited": {"switch_buffer": "unlimited"}}


def star(n: int, up, down) -> Topology:
    """n GPUs on one switch: GPU -> switch at ``up`` GB/s, switch -> GPU at ``down`` GB/s."""
    names = tuple(f"g{i}" for i in range(n)) + ("sw",)
    links = tuple(Link(i, n, Fraction(up)) for i in range(n)) + tuple(Link(n, i, Fraction(down)) for i in range(n))
    return Topology(names, ("compute",) * n + ("switch",), links, name=f"star {n}", expr="")


def slow_uplinks():
    """Three GPUs whose uplinks run at half the downlinks' speed; fastest-link epochs (1 kB chunks): an uplink
    carries one chunk per two epochs (κ = 2, lag 2), a downlink one per epoch (lag 1)."""
    return star(3, 5, 10)


def held_over(topo: Topology, schedule, lag) -> int:
    """The most chunk pieces any switch of a schedule without copy keeps from one epoch into the next: at epoch
    k, what landed before k minus what left in an epoch before k (a piece landing at k and leaving in epoch k
    uses no buffer)."""
    most = 0
    for w in topo.switch_nodes:
        came = [t.step for t in schedule.transfers if topo.links[t.link].dst == w]
        left = [t.step - lag[t.link] for t in schedule.transfers if topo.links[t.link].src == w]
        for k in range(max(came + [0]) + 2):
            most = max(most, sum(a < k for a in came) - sum(e < k for e in left))
    return most


# ----------------------------------------------------------------------------------- App. B: switch buffers
def test_buffer_lets_a_copying_switch_serve_later_exact_oracle():
    """By hand: every GPU needs the other two chunks on its downlink, so nothing lands before epoch 2 and the
    finish is at least 4. A source's uplink sends once by epoch 1 (one chunk per two epochs), so each chunk lands
    once by epoch 3. Without a buffer the switch must copy a chunk to both other GPUs as it lands; two chunks
    landing in one epoch both want the third GPU's downlink, and three chunks over epochs 2 and 3 put two in one
    epoch: 4 epochs are infeasible, 5 it is. With a buffer of one chunk: a and b land at 2 (a to B and C, b to A,
    b kept), c sent one epoch later lands at 3 (c to A and B, the kept b to C): 4 epochs."""
    topo = slow_uplinks()
    got = {name: teccl(topo, "allgather", chunk_bytes=1000, epoch="fastest", switch_copy=True, time_limit=60,
                       **model) for name, model in MODELS.items()}
    assert {n: r.finish for n, r in got.items()} == {"none": 5, "limited": 4, "unlimited": 4}
    assert all(r.minimal and verify(topo, r.schedule).ok for r in got.values())
    assert any("buffers of 1 chunk" in n for n in got["limited"].notes)


def test_buffer_limit_holds_in_the_model_and_the_schedule():
    """The model's kept chunks (H) never exceed the limit; without copy the verified schedule's own occupancy at
    the switch (pieces landed and not yet sent on) stays within it too, and is 0 for the buffer-less switch."""
    topo = slow_uplinks()
    t = timing(topo, 1000, "fastest")
    demand = allgather_demand(topo, 2)
    for limit in (1, 2):
        fm = build_milp(topo, demand, t, 9, switch_copy=True, switch_buffer=limit)
        assert solve(fm.model, 60).has_solution
        assert max(switch_occupancy(fm, topo).values(), default=0) <= limit
    for name, model in MODELS.items():
        r = teccl(topo, "allgather", chunks=2, chunk_bytes=1000, epoch="fastest", time_limit=60, **model)
        assert verify(topo, r.schedule).ok
        assert held_over(topo, r.schedule, r.timing.lag) <= {"none": 0, "limited": 1, "unlimited": 99}[name]


def test_objective_orders_with_the_buffer_at_a_fixed_k():
    """The feasible sets nest (none ⊂ limited ⊂ unlimited), so at one K the early-delivery optimum can only grow;
    on the slow-uplink star it grows strictly once the switch may keep a chunk."""
    topo = slow_uplinks()
    t = timing(topo, 1000, "fastest")
    demand = allgather_demand(topo, 1)
    best = []
    for limit in (0, 1, None):
        fm = build_milp(topo, demand, t, 5, switch_copy=True, switch_buffer=limit)
        out = solve(fm.model, 60)
        assert out.status == "optimal"
        best.append(out.objective)
    assert best[0] < best[1] <= best[2] + 1e-9


@pytest.mark.parametrize("expr, options", [
    ("cluster(2,4,10,1)", {"chunk_bytes": 1000}),
    ("cluster(1,4,10,1)", {"chunk_bytes": 1000, "epoch": Fraction(1), "chunks": 2})])
def test_switch_models_order_on_switched_fabrics(expr, options):
    """Every model gives a verified schedule and the epochs order as the nesting says: no buffer >= limited >=
    unlimited (with and without copy), copy <= no copy, hyper-edges >= the node switch without copy (DGX2 takes
    about 10 s per model here: ``python -m bench.teccl --switches`` runs it)."""
    topo = parse_topology(expr)

    def k(**model):
        r = teccl(topo, "allgather", method="milp", time_limit=120, **{**options, **model})
        assert verify(topo, r.schedule).ok
        return r.finish

    for copy in (False, True):
        none, limited, unlimited = (k(switch_copy=copy, **m) for m in MODELS.values())
        assert none >= limited >= unlimited
    assert k(switch_copy=True) <= k()
    assert k(switch_model="hyperedge") >= k()


# ---------------------------------------------------------------------------------------- App. C: hyper-edges
def gather_to_first():
    """Four GPUs on one 10 GB/s switch, 1 kB chunks, τ = 1 us (ten chunks per link per epoch): GPUs 1, 2 and 3
    each send one chunk to GPU 0."""
    return parse_topology("cluster(1,4,10,1)"), [[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]]


def test_hyper_edges_take_one_peer_per_epoch_exact_oracle():
    """By hand: as a node the switch takes all three chunks in epoch 0 and hands them to GPU 0 in epoch 1 (its
    downlink carries ten per epoch): 2 epochs. As hyper-edges GPU 0 receives on one hyper-edge per epoch, and one
    sent in epoch 0 or 1 can only carry its sender's own chunk (nothing lands before epoch 2), so by epoch 3 GPU 0
    has two chunks: 4 epochs (e.g. 1 -> 0 in epoch 0, 3 -> 2 in epoch 0 and 2 -> 0 with two chunks in epoch 2)."""
    topo, matrix = gather_to_first()
    common = {"matrix": matrix, "chunk_bytes": 1000, "epoch": Fraction(1), "method": "milp", "time_limit": 60}
    node = teccl(topo, "custom", **common)
    hyper = teccl(topo, "custom", switch_model="hyperedge", **common)
    assert (node.finish, hyper.finish) == (2, 4) and node.minimal and hyper.minimal
    assert verify(topo, hyper.schedule).ok and any("hyper-edges" in n for n in hyper.notes)
    peers = peers_per_epoch(topo, hyper)
    assert peers and max(len(v) for v in peers.values()) == 1


def peers_per_epoch(topo: Topology, r) -> dict:
    """(sending GPU, epoch) -> the GPUs its chunks reach through the switch (hyper-edge lowering: an uplink send
    and the downlink send of the same piece L_up + L_down later)."""
    lag = r.timing.lag
    down = {}
    for t in r.schedule.transfers:
        if not topo.is_compute(topo.links[t.link].src):
            down.setdefault((t.shard, t.lo, t.step - lag[t.link]), []).append(topo.links[t.link].dst)
    out: dict = {}
    for t in r.schedule.transfers:
        if topo.is_compute(topo.links[t.link].src) and not topo.is_compute(topo.links[t.link].dst):
            epoch = t.step - lag[t.link]
            for d in down.get((t.shard, t.lo, t.step), ()):
                out.setdefault((topo.links[t.link].src, epoch), set()).add(d)
    return out


def test_hyper_edges_are_omega_of_table_5():
    """Ω(s): every ordered pair of distinct GPUs on the switch without a direct link; lag = both hops'."""
    topo = parse_topology("cluster(1,4,10,1)")
    t = timing(topo, 1000, "slowest")
    h = HyperEdges.of(topo, t)
    pairs = [(l.src, l.dst) for l, v in zip(h.topo.links, h.via) if v is not None]
    assert sorted(pairs) == [(i, j) for i in range(4) for j in range(4) if i != j]
    assert set(h.timing.lag) == {2} and not any(l.src == 4 or l.dst == 4 for l in h.topo.links)


def test_hyper_edges_refuse_switch_to_switch_links():
    with pytest.raises(NotApplicable, match="switches joined to compute nodes only"):
        teccl(parse_topology("fat_tree(4)"), "allgather", switch_model="hyperedge", chunk_bytes=1000)


# ------------------------------------------------------------------------------------------ options, refusals
@pytest.mark.parametrize("kwargs, words", [
    ({"switch_model": "hyperedge", "switch_copy": True}, "neither copy nor buffer"),
    ({"switch_model": "hyperedge", "switch_buffer": 2}, "neither copy nor buffer"),
    ({"switch_model": "ring"}, "unknown switch model"),
    ({"switch_buffer": -1}, ">= 0"),
    ({"switch_buffer": "lots"}, "none, unlimited"),
    ({"switch_buffer": 1, "method": "lp"}, "MILP"),
    ({"switch_model": "hyperedge", "method": "astar"}, "MILP")])
def test_bad_switch_options(kwargs, words):
    with pytest.raises(NotApplicable, match=words):
        teccl(parse_topology("cluster(1,3,10,1)"), "allgather", chunk_bytes=1000, **kwargs)


def test_buffer_limit_values():
    assert (buffer_limit("none"), buffer_limit("unlimited"), buffer_limit(3), buffer_limit("4")) == (0, None, 3, 4)


def test_zero_buffer_is_the_papers_switch():
    topo = parse_topology("cluster(2,2,10,1)")
    a = teccl(topo, "allgather", chunk_bytes=1000, switch_copy=True)
    b = teccl(topo, "allgather", chunk_bytes=1000, switch_copy=True, switch_buffer=0)
    assert a.finish == b.finish and not any("buffer" in n for n in b.notes)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_switch_flags_and_copy_side_by_side(capsys):
    code, out, _ = run(capsys, "schedule", "cluster(1,4,10,1)", "--algo", "teccl", "--switch-copy",
                       "--switch-buffer", "1", "--json")
    assert code == 0 and json.loads(out)["verified"]
    code, out, _ = run(capsys, "schedule", "cluster(1,4,10,1)", "--algo", "teccl", "--switch-model", "hyperedge",
                       "--json")
    assert code == 0 and any("hyper-edges" in n for n in json.loads(out)["teccl"]["notes"])
    finish = {}
    for method in ("milp", "lp"):       # Fig. 9: copy (MILP) and no copy (LP) on DGX1, 4 chunks
        code, out, _ = run(capsys, "schedule", "dgx1()", "--algo", "teccl", "--chunks", "4", "--bytes", "210e6",
                           "--method", method, "--json")
        assert code == 0
        finish[method] = json.loads(out)["teccl"]["finish_epochs"]
    assert finish == {"milp": 5, "lp": 11}
    code, _, err = run(capsys, "schedule", "ring(3)", "--algo", "teccl", "--switch-buffer", "lots")
    assert code == 2 and "--switch-buffer" in err and err.count("\n") == 1


def test_auto_takes_the_milp_for_a_switch_model():
    """All-to-all goes to the LP by default; with a switch buffer or hyper-edges auto takes the MILP (the LP has
    neither), and gives the LP's epochs here."""
    topo = parse_topology("cluster(1,3,10,1)")
    lp = teccl(topo, "alltoall", chunk_bytes=1000)
    for model in ({"switch_buffer": 1}, {"switch_model": "hyperedge"}):
        r = teccl(topo, "alltoall", chunk_bytes=1000, **model)
        assert r.method == "milp" and r.finish == lp.finish and verify(topo, r.schedule).ok
