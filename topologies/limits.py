"""The size limits every way in to a topology shares: the link budget that goes with a node budget and the
check of a file's or an import's counts against them, before anything is built of them.

Expressions (``expression.py``), topology files (``files.py``) and machine imports (``imports.py``,
``nccl_topo.py``) all refuse a design above the node limit, and above 100 links per node of it, with the same
one-line ``TopologyError``; this module is the one place that says so, below all of them.
"""
from __future__ import annotations

from .model import TopologyError

LINKS_PER_NODE = 100


def max_links_for(max_nodes: int) -> int:
    """The link budget that goes with a node budget: ``LINKS_PER_NODE`` (100) links per node on average."""
    return LINKS_PER_NODE * max_nodes


def check_counts(nodes: int, links: int, source: str, max_nodes: int | None) -> None:
    """TopologyError when ``nodes`` is above ``max_nodes`` or ``links`` above the links that go with it
    (``max_links_for``, as for expressions); nothing when ``max_nodes`` is None."""
    if max_nodes is None:
        return
    what = source or "the topology"
    if nodes > max_nodes:
        raise TopologyError(f"{what} has {nodes} nodes, above the limit of {max_nodes}")
    if links > max_links_for(max_nodes):
        raise TopologyError(f"{what} has {links} links, above the limit of {max_links_for(max_nodes)} "
                            f"({max_links_for(max_nodes) // max_nodes} per node of the {max_nodes} allowed)")
