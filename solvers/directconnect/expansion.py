"""Expansion schedules: the schedule side of the direct-connect paper's expansions (section 5, App. D, A.6).

``expansion_allgather(topo)`` rebuilds ``topo`` from its expression and transforms the base schedules along the
way: a plain family gets its base schedule (the searched one embedded for Diamond and DBJMod, else the optimal
BFB schedule), and every expansion maps its operand's schedule:

- ``line`` (Def 1): step 1 sends every line node's whole shard to its out-neighbours; each base transfer
  ((v,C),(u,w),t) becomes ((v'v,C),(uw,ww'),t+1) for every in-link v'v of v and out-link ww' of w, v'v != ww'.
- ``degree`` (Def 2): ((v_j,C),(u_j,w_i),t) for all copies i, j, then one extra step in which the nd in-links
  of u_j each bring 1/(nd) of u_i's shard.
- ``power`` (Def 14): n rotated copies of the dimension-by-dimension schedule, each on 1/n of every shard.
- ``product`` of distinct factors (Thm 13): no constructive schedule; BFB on the product.
- ``bidir`` (A.6): half of every shard follows A on G, the other half g(A) on G^T for a reverse symmetry g.

``predict`` gives the (steps, tb_factor) that Table 3's formulas (Thm 7/10, 11, 12, 13, A.6) expect from the
operands' own values; every constructed schedule is compared with it in the tests.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product as cartesian
from math import prod

from topologies import expansions as ex
from topologies.expression import FAMILIES, Call, ExpressionError, build, parse
from topologies.model import Topology, TopologyError
from topologies.properties import degree, diameter, is_regular
from topologies.symmetry import links_through, transpose_isomorphism

from .bfb import bfb_allgather
from ..core.cost import tb_factor
from ..core.errors import NotApplicable
from ..core.schedule import Collective, Schedule, Transfer
from .searched_schedules import searched_allgather

EXPANSIONS = ("line", "degree", "power", "product", "bidir")
HALF = Fraction(1, 2)


@dataclass(frozen=True)
class Prediction:
    """(steps, tb_factor) that the expansion theorems give; ``exact`` is False where they give only a bound."""

    steps: int
    tb_factor: Fraction
    exact: bool = True


# -------------------------------------------------------------------------------------------- the transforms
def base_allgather(topo: Topology) -> Schedule:
    """The base schedule of a catalogue topology: the embedded searched one if there is one, else BFB."""
    return searched_allgather(topo) or bfb_allgather(topo)


def line_allgather(base: Topology, sched: Schedule) -> Schedule:
    """Def 1 on L(G), whose node a is link a of ``base`` (``topologies.expansions`` numbering)."""
    index = {pair: i for i, pair in enumerate(ex.line_graph_links(base))}
    one = Fraction(1)
    out = [Transfer(a, Fraction(0), one, i, 1) for i, (a, b) in enumerate(ex.line_graph_links(base)) if a != b]
    for t in sched.transfers:
        w = base.links[t.link].dst
        for a in base.in_links[t.shard]:
            for b in base.out_links[w]:
                if a != b:
                    out.append(Transfer(a, t.lo, t.hi, index[t.link, b], t.step + 1))
    return Schedule(Collective.ALLGATHER, out, "expansion")


def degree_allgather(base: Topology, sched: Schedule, n: int) -> Schedule:
    """Def 2 on G∗n: node ``j*N + v`` is v_j, link ``(l*n + i)*n + j`` joins u_i -> v_j for base link l."""
    size = base.num_nodes
    out = []
    for t in sched.transfers:
        for j in range(n):
            for i in range(n):
                out.append(Transfer(j * size + t.shard, t.lo, t.hi, (t.link * n + j) * n + i, t.step))
    last = sched.steps + 1
    for u in range(size):
        for j in range(n):
            ins = [(l * n + k) * n + j for l in base.in_links[u] for k in range(n)]
            width = Fraction(1, len(ins))
            for i in range(n):
                if i != j:
                    out += [Transfer(i * size + u, a * width, (a + 1) * width, link, last)
                            for a, link in enumerate(ins)]
    return Schedule(Collective.ALLGATHER, out, "expansion")


def power_allgather(base: Topology, sched: Schedule, n: int) -> Schedule:
    """Def 14 on G^{□n}. Sub-schedule r (rotation r) handles the r-th n-th of every shard and runs A_G along
    dimensions r, r+1, ..., r+n-1 (mod n), one phase of t_max steps each. In phase j along dimension ``dim``,
    the base transfer ((w,C),(u,v),t) is run in every line through dimension ``dim``: for every source s with
    s[dim] = w and every sender y with y[dim] = u that agrees with s on the dimensions still to come."""
    size, t_max = base.num_nodes, sched.steps
    link_of = {key: i for i, key in enumerate(ex.product_link_table([base] * n))}
    weights = [size ** (n - 1 - k) for k in range(n)]
    out = []
    for r in range(n):
        for j in range(n):
            dim = (j + r) % n
            done = [(k + r) % n for k in range(j)]
            later = [(k + r) % n for k in range(j + 1, n)]
            for t in sched.transfers:
                link = base.links[t.link]
                lo, hi = (r + t.lo) / n, (r + t.hi) / n
                step = j * t_max + t.step
                for z in cartesian(range(size), repeat=len(later)):
                    common = sum(weights[d] * c for d, c in zip(later, z))
                    for x in cartesian(range(size), repeat=len(done)):
                        src = common + weights[dim] * t.shard + sum(weights[d] * c for d, c in zip(done, x))
                        for y in cartesian(range(size), repeat=len(done)):
                            sender = common + weights[dim] * link.src + sum(weights[d] * c for d, c in zip(done, y))
                            out.append(Transfer(src, lo, hi, link_of[sender, dim, t.link], step))
    return Schedule(Collective.ALLGATHER, out, "expansion")


def transpose_allgather(topo: Topology, sched: Schedule, iso) -> list[Transfer]:
    """g(A) (Def 7): the allgather A on G carried to G^T by a reverse symmetry g, as transfers on G^T's links
    (which keep G's indices)."""
    through = links_through(topo, iso)
    return [Transfer(iso[t.shard], t.lo, t.hi, through[t.link], t.step) for t in sched.transfers]


def bidir_allgather(base: Topology, sched: Schedule) -> Schedule:
    """A.6 on G u G^T: the first half of every shard follows A on G's links 0..L-1, the second half follows g(A)
    on the reversed links L..2L-1."""
    iso = transpose_isomorphism(base)
    if iso is None:
        raise NotApplicable(f"{base.name} has no known reverse symmetry (an isomorphism to its transpose), "
                            "which the bidirectional conversion needs")
    count = len(base.links)
    out = [Transfer(t.shard, t.lo * HALF, t.hi * HALF, t.link, t.step) for t in sched.transfers]
    out += [Transfer(t.shard, HALF + t.lo * HALF, HALF + t.hi * HALF, count + t.link, t.step)
            for t in transpose_allgather(base, sched, iso)]
    return Schedule(Collective.ALLGATHER, out, "expansion")


# ---------------------------------------------------------------------------------------------- predictions
def _base_values(topo: Topology, sched: Schedule) -> tuple[int, int, None]:
    """(N, d) of the operand the formulas speak of (its schedule's own values come in the Prediction)."""
    if not is_regular(topo):
        raise NotApplicable(f"the expansion formulas need a regular base; {topo.name} is not")
    return topo.n, degree(topo), None


def predict_line(topo, sched, n: int, prev: Prediction) -> Prediction:
    """Cor 7.1 / 10.1: T_L + n, tau + sum_{k<n} 1/(d^k N) = tau + (d/(d-1))(1/N - 1/(d^n N)); equality for an
    optimal BFB base with more than one distinct out-neighbour per node (Thm 10), an upper bound otherwise."""
    size, d, _ = _base_values(topo, sched)
    if d == 1:
        # A 1-regular graph is a union of cycles and is its own line graph; Def 1 then rebuilds the base
        # schedule (the step it adds is the one it drops at the end, sending a shard back to its source).
        # The paper's formulas assume d >= 2; this case is checked by the tests.
        return prev
    extra = sum((Fraction(1, d ** k * size) for k in range(n)), Fraction(0))
    return Prediction(prev.steps + n, prev.tb_factor + extra, prev.exact)


def predict_degree(topo, sched, n: int, prev: Prediction) -> Prediction:
    """Thm 11: T_L + 1 and tau + (n-1)/(nN), with equality."""
    size, _, _ = _base_values(topo, sched)
    return Prediction(prev.steps + 1, prev.tb_factor + Fraction(n - 1, n * size), prev.exact)


def predict_power(topo, sched, n: int, prev: Prediction) -> Prediction:
    """Thm 12: n T_L and tau * N/(N-1) * (N^n - 1)/N^n, with equality."""
    size, _, _ = _base_values(topo, sched)
    return Prediction(n * prev.steps, prev.tb_factor * Fraction(size, size - 1) * Fraction(size ** n - 1, size ** n),
                      prev.exact)


# --------------------------------------------------------------------------------------------- the evaluator
@dataclass
class Built:
    topology: Topology
    schedule: Schedule
    prediction: Prediction


def _is_simple(topo: Topology) -> bool:
    pairs = [(l.src, l.dst) for l in topo.links]
    return len(set(pairs)) == len(pairs) and all(s != d for s, d in pairs)


def _evaluate(call: Call, limit: int) -> Built:
    if call.name not in EXPANSIONS:
        topo = build(call, limit)
        sched = base_allgather(topo)
        return Built(topo, sched, Prediction(sched.steps, tb_factor(topo, sched)))
    if call.kwargs and call.name != "line":
        raise NotApplicable(f"{call.name}: keyword arguments are not supported by the expansion schedule")
    operands = [a for a in call.args if isinstance(a, Call)]
    numbers = [a for a in call.args if not isinstance(a, Call)] + [v for _, v in call.kwargs]
    parts = [_evaluate(a, limit) for a in operands]
    first = parts[0]
    if call.name == "product":
        topo = ex.cartesian_product([p.topology for p in parts])
        sched = bfb_allgather(topo)
        sched.algo = "expansion"
        optimal = all(_is_simple(p.topology) and p.schedule.algo == "bfb" and p.prediction.exact
                      and p.prediction.tb_factor == Fraction(p.topology.n - 1, p.topology.n) for p in parts)
        size = prod(p.topology.n for p in parts)
        pred = (Prediction(sum(diameter(p.topology) for p in parts), Fraction(size - 1, size)) if optimal
                else Prediction(sched.steps, tb_factor(topo, sched)))
        return Built(topo, sched, pred)
    if call.name == "bidir":
        topo = ex.bidirectional(first.topology)
        return Built(topo, bidir_allgather(first.topology, first.schedule), first.prediction)
    n = numbers[0] if numbers else 1
    if call.name == "line":
        levels = ex.line_graph_levels(first.topology, n)
        level = first.schedule
        for below in [first.topology] + levels[:-1]:  # one Def 1 step per level, each on the graph below
            level = line_allgather(below, level)
        pred = predict_line(first.topology, first.schedule, n, first.prediction)
        exact = first.schedule.algo == "bfb" and all(
            len({first.topology.links[i].dst for i in first.topology.out_links[u]} - {u}) > 1
            for u in range(first.topology.num_nodes))
        return Built(levels[-1], level, Prediction(pred.steps, pred.tb_factor, pred.exact and exact))
    if call.name == "degree":
        topo = ex.degree_expansion(first.topology, n)
        return Built(topo, degree_allgather(first.topology, first.schedule, n),
                     predict_degree(first.topology, first.schedule, n, first.prediction))
    topo = ex.cartesian_power(first.topology, n)
    return Built(topo, power_allgather(first.topology, first.schedule, n),
                 predict_power(first.topology, first.schedule, n, first.prediction))


def expand(text: str, max_nodes: int | None = None) -> Built:
    """Build the topology of an expression together with its expansion schedule and predicted costs."""
    call = parse(text)
    limit = 1 << 62 if max_nodes is None else max_nodes
    try:
        return _evaluate(call, limit)
    except ExpressionError:
        raise
    except TopologyError as exc:
        raise NotApplicable(str(exc)) from None


def expansion_allgather(topo: Topology) -> Schedule:
    """The expansion allgather for a topology built from an expression (``topo.expr``).

    A transposed topology (``transpose(...)``, how reduce-scatter asks for an allgather on G^T) gets g(A) through
    a reverse symmetry g of G, which every bidirectional and reverse-symmetric expansion has.
    """
    text = topo.expr or ""
    transposed = text.startswith("transpose(") and text.endswith(")")
    if transposed:
        text = text[len("transpose("):-1]
    if not text or text.split("(")[0].strip() not in FAMILIES:
        raise NotApplicable("the expansion schedule needs a topology built from an expression "
                            "(a file has no construction to follow)")
    built = expand(text, max_nodes=topo.num_nodes)
    g = built.topology
    if [(l.src, l.dst) for l in g.links] != [(l.src, l.dst) for l in (topo.transpose() if transposed else topo).links]:
        raise NotApplicable("the topology's links differ from the ones its expression builds")
    notes = {"predicted_steps": built.prediction.steps, "predicted_tb_factor": built.prediction.tb_factor,
             "prediction_exact": built.prediction.exact}
    if not transposed:
        built.schedule.notes.update(notes)
        built.schedule.algo = "expansion"
        return built.schedule
    iso = transpose_isomorphism(g)
    if iso is None:
        raise NotApplicable(f"{g.name} is not reverse-symmetric, so its reduce-scatter has no expansion "
                            "schedule; use --algo bfb")
    return Schedule(Collective.ALLGATHER, transpose_allgather(g, built.schedule, iso), "expansion", notes)
