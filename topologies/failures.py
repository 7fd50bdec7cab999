"""Failure models on any topology (issue 42): what can fail, and the fabric without it.

Kinds (``elements(topo, kind)``), each element named so rows and drawings line up:

* ``links``: a cable, both directions of a link (a link and its reverse, ``Topology.reverse_link``; on a
  directed design, where a link has no reverse, the link alone), named ``a<->b`` (``a->b`` alone; ``#k`` for the
  k-th of parallel cables); self-loops carry nothing between nodes and are never failed;
* ``directed-links``: one direction of a link, ``a->b``;
* ``gpus``: a compute node; the collective then runs on the others;
* ``nics``: a switch node joined to exactly one compute node (a GPU's own NIC, as ``dgx_a100``'s ``b0.nic3``);
* ``switches``: any switch node (NVSwitches, NICs, network switches);
* ``boxes``: every node whose name starts with the same ``prefix.`` (``b0.`` of ``dgx_a100``, ``c1.`` of
  ``mi250``), where a design has at least two such groups of GPUs.

``failure_sets``: every K-subset of a kind's elements (every single one for K = 1) up to ``MAX_SETS``, or K random
elements sampled S times from a seeded ``random.Random`` (the same seed, the same sets). ``degrade`` removes the
elements and keeps every other node's name and kind and every other link's bandwidth and alpha.

In the expression language, ``fail(G, links=[i, ...], gpus=[...], ...)`` is G without the i-th elements of each
kind in ``elements`` order (``directed_links`` for ``directed-links``): a degraded fabric every page and command
takes like any design (``failure_expr`` writes it). A ``fail(...)`` that keeps fewer than two GPUs is refused
there, in one line, so that no command or page meets a one-GPU design (no collective, and every bound divides by
the GPUs less one).
"""
from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Sequence

from .model import Link, Topology, TopologyError

__all__ = ["KINDS", "Element", "FailureError", "connectivity", "cut_off", "degrade", "describe", "elements",
           "fail_expr", "failure_expr", "failure_sets"]

KINDS = {"links": "cables (both directions of a link)", "directed-links": "one direction of a link",
         "gpus": "compute nodes", "nics": "NICs (switch nodes of one GPU)", "switches": "switch nodes",
         "boxes": "whole boxes (nodes named prefix.*)"}
MAX_SETS = 10_000
MAX_SAMPLES = 10_000


class FailureError(TopologyError):
    """A failure model that cannot be applied: an unknown kind, K above the elements there are, too many sets."""


@dataclass(frozen=True)
class Element:
    """One thing that can fail: its kind, its name, the links and the nodes that go with it."""

    kind: str
    name: str
    links: tuple[int, ...] = ()
    nodes: tuple[int, ...] = ()


def _cables(topo: Topology, both: bool) -> list[Element]:
    pair = topo.reverse_link if both else None
    seen: set[int] = set()
    count: dict[tuple[int, int], int] = {}
    out = []
    for i, l in enumerate(topo.links):
        if i in seen or l.src == l.dst:
            continue
        back = pair[i] if pair is not None else None
        ends = (min(l.src, l.dst), max(l.src, l.dst)) if back is not None else (l.src, l.dst)
        k = count[ends] = count.get(ends, 0) + 1
        a, b = topo.names[ends[0]], topo.names[ends[1]]
        name = f"{a}<->{b}" if back is not None else f"{a}->{b}"
        if k > 1:
            name += f"#{k}"
        links = (i, back) if back is not None else (i,)
        seen.update(links)
        out.append(Element("links" if both else "directed-links", name, links))
    return out


def _neighbours(topo: Topology, v: int) -> set[int]:
    return {topo.links[i].dst for i in topo.out_links[v]} | {topo.links[i].src for i in topo.in_links[v]}


def elements(topo: Topology, kind: str) -> list[Element]:
    """Every element of ``kind`` (module docstring) in the design, in node or link order."""
    if kind not in KINDS:
        raise FailureError(f"no failure kind {kind!r}: choose from {', '.join(KINDS)}")
    if kind in ("links", "directed-links"):
        return _cables(topo, kind == "links")
    if kind == "gpus":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.compute_nodes]
    if kind == "switches":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.switch_nodes]
    if kind == "nics":
        return [Element(kind, topo.names[v], nodes=(v,)) for v in topo.switch_nodes
                if sum(1 for u in _neighbours(topo, v) if topo.is_compute(u)) == 1]
    groups: dict[str, list[int]] = {}
    for v, name in enumerate(topo.names):
        head, dot, _ = name.partition(".")
        if dot:
            groups.setdefault(head, []).append(v)
    boxes = [Element(kind, head, nodes=tuple(vs)) for head, vs in groups.items()
             if any(topo.is_compute(v) for v in vs)]
    return boxes if len(boxes) >= 2 else []


def failure_sets(topo: Topology, kind: str, k: int = 1, samples: int | None = None, seed: int = 0
                 ) -> list[tuple[Element, ...]]:
    """The failure sets to analyse: with ``samples`` None, every K-subset of the kind's elements (every single
    one for K = 1), refused above ``MAX_SETS``; else ``samples`` random K-subsets (``random.Random(seed)``)."""
    pool = elements(topo, kind)
    if not pool:
        raise FailureError(f"the design has no {KINDS[kind]} to fail")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= len(pool):
        raise FailureError(f"K must be between 1 and the {len(pool)} {KINDS[kind]} of the design, got {k!r}")
    if samples is None:
        count = math.comb(len(pool), k)
        if count > MAX_SETS:
            raise FailureError(f"{count:,} sets of {k} of the {len(pool)} {KINDS[kind]}: above {MAX_SETS:,}; "
                               "sample them (--samples S)")
        return [tuple(c) for c in itertools.combinations(pool, k)]
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise FailureError(f"samples must be between 1 and {MAX_SAMPLES}, got {samples!r}")
    rng = random.Random(seed)
    return [tuple(pool[i] for i in sorted(rng.sample(range(len(pool)), k))) for _ in range(samples)]


def degrade(topo: Topology, failed: Sequence[Element]) -> Topology:
    """``topo`` without the failed elements' nodes and links (and the links of the failed nodes); every other node
    keeps its name and kind, every other link its bandwidth and alpha."""
    gone_nodes = {v for e in failed for v in e.nodes}
    gone_links = {i for e in failed for i in e.links}
    keep = [v for v in range(topo.num_nodes) if v not in gone_nodes]
    index = {v: j for j, v in enumerate(keep)}
    links = tuple(Link(index[l.src], index[l.dst], l.bandwidth, l.alpha) for i, l in enumerate(topo.links)
                  if i not in gone_links and l.src in index and l.dst in index)
    label = " + ".join(e.name for e in failed)
    return Topology(tuple(topo.names[v] for v in keep), tuple(topo.kinds[v] for v in keep), links,
                    name=f"{topo.name or topo.expr} without {label}"[:300], expr=f"{topo.expr} - {label}"[:2000])


def describe(topo: Topology, element: Element) -> str:
    """What an element is in its design, in a few words (the failure rows' ``what``)."""
    if element.links:
        l = topo.links[element.links[0]]
        both = "each way" if len(element.links) > 1 else "one way"
        return f"link {element.name} ({float(l.bandwidth):g} GB/s {both})"
    if element.kind == "boxes":
        gpus = sum(1 for v in element.nodes if topo.is_compute(v))
        return f"box {element.name} ({gpus} GPUs, {len(element.nodes) - gpus} switches)"
    (v,) = element.nodes
    if topo.is_compute(v):
        return f"GPU {element.name} (the collective runs on the other {topo.n - 1})"
    near = _neighbours(topo, v)
    gpus = sorted(topo.names[u] for u in near if topo.is_compute(u))
    others = sum(1 for u in near if not topo.is_compute(u))
    switches = f"{others} switch{'' if others == 1 else 'es'}"
    if len(gpus) == 1:
        return f"NIC {element.name} of GPU {gpus[0]}" + (f", cabled to {switches}" if others else "")
    if not gpus:
        return f"switch {element.name} joining {switches}"
    shown = ", ".join(gpus[:4]) + (" ..." if len(gpus) > 4 else "")
    return f"switch {element.name} joining {len(gpus)} GPUs ({shown})" + (f" and {switches}" if others else "")


def cut_off(topo: Topology) -> list[str]:
    """The compute nodes outside the strongly connected part that holds most of them (what a failure cut off)."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((l.src, l.dst) for l in topo.links)
    parts = sorted(nx.strongly_connected_components(g), key=lambda c: -sum(1 for v in c if topo.is_compute(v)))
    main = parts[0] if parts else set()
    return [topo.names[v] for v in topo.compute_nodes if v not in main]


def connectivity(topo: Topology) -> dict:
    """The design's node and link connectivity (networkx, on the simple directed graph of its links: parallel
    links are one arc, self-loops none): how many nodes, and how many links, must fail to disconnect it."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(range(topo.num_nodes))
    g.add_edges_from((l.src, l.dst) for l in topo.links if l.src != l.dst)
    return {"node_connectivity": nx.node_connectivity(g), "link_connectivity": nx.edge_connectivity(g)}


def failure_expr(expr: str, topo: Topology, failed: Sequence[Element]) -> str:
    """The expression of ``topo`` (named by ``expr``) without ``failed``: ``fail(expr, links=[...], ...)``."""
    by_kind: dict[str, list[int]] = {}
    for kind in dict.fromkeys(e.kind for e in failed):
        index = {e.name: i for i, e in enumerate(elements(topo, kind))}
        by_kind[kind] = sorted(index[e.name] for e in failed if e.kind == kind)
    args = ",".join(f"{k.replace('-', '_')}=[{','.join(map(str, v))}]" for k, v in by_kind.items())
    return f"fail({expr},{args})"


def fail_expr(g: Topology, links=(), directed_links=(), gpus=(), nics=(), switches=(), boxes=()) -> Topology:
    """``fail(G, links=[...], ...)`` of the expression language (module docstring)."""
    chosen = []
    for kind, picks in (("links", links), ("directed-links", directed_links), ("gpus", gpus), ("nics", nics),
                        ("switches", switches), ("boxes", boxes)):
        picks = [picks] if isinstance(picks, int) else list(picks)
        if not picks:
            continue
        pool = elements(g, kind)
        bad = [i for i in picks if not isinstance(i, int) or not 0 <= i < len(pool)]
        if bad:
            raise FailureError(f"fail(): {kind.replace('-', '_')} {bad[0]} is not one of the design's "
                               f"{len(pool)} {KINDS[kind]} (0 to {len(pool) - 1})")
        chosen += [pool[i] for i in dict.fromkeys(picks)]
    if not chosen:
        raise FailureError("fail() needs something to fail: links=[...], directed_links=[...], gpus=[...], "
                           "nics=[...], switches=[...] or boxes=[...]")
    left = degrade(g, chosen)
    if len(left.compute_nodes) < 2:
        raise FailureError(f"the design keeps {len(left.compute_nodes)} of its {len(g.compute_nodes)} GPUs; "
                           "a collective needs two or more (fail fewer)")
    return left.with_identity(expr=failure_expr(g.expr, g, chosen) if g.expr else None)
