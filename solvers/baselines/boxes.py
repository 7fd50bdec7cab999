"""Boxes of a switched fabric, as NCCL sees a cluster: machines joined inside by fast links (NVSwitch, xGMI) and
to each other by slower ones (NICs, an IB switch). Shared by the multi-ring, NCCL's tree across boxes and the
hierarchical allreduce.

Definitions, with ``slow`` the smallest link bandwidth of the fabric:

* a *box* is a set of compute nodes connected by links faster than ``slow`` (switches included on the way); a
  fabric whose links all run at one bandwidth is one box;
* a *fast* logical edge u -> v is one whose route (``fabric.Fabric.route``) uses only links faster than ``slow``;
* a box's *NIC nodes* are its compute nodes with a link at ``slow`` leaving the box (a GPU and its NIC).
"""
from __future__ import annotations

from fractions import Fraction

from ..core.components import components
from .fabric import Fabric


def boxes(fabric: Fabric) -> tuple[list[list[int]], Fraction]:
    """The boxes (compute nodes in rank order within each) and the fabric's slowest bandwidth."""
    topo = fabric.topo
    slow = min(Fraction(link.bandwidth) for link in topo.links)
    if all(Fraction(link.bandwidth) == slow for link in topo.links):
        return [list(fabric.ranks)], slow
    member = {v: i for i, group in enumerate(components(range(len(topo.names)),
                                                        [(link.src, link.dst) for link in topo.links
                                                         if Fraction(link.bandwidth) > slow])) for v in group}
    groups: dict[int, list[int]] = {}
    for u in fabric.ranks:
        groups.setdefault(member[u], []).append(u)
    return list(groups.values()), slow


def fast(fabric: Fabric, u: int, v: int, slow: Fraction) -> bool:
    """Whether the logical edge u -> v exists and every link of its route is faster than ``slow``."""
    route = fabric.route(u, v)
    return route is not None and all(Fraction(fabric.topo.links[li].bandwidth) > slow for hop in route for li in hop)


def nic_nodes(fabric: Fabric, box: list[int], slow: Fraction) -> list[int]:
    """The compute nodes of ``box`` with a link at ``slow`` bandwidth leaving the box, in rank order."""
    topo = fabric.topo
    members = set(box)
    return [u for u in box if any(Fraction(topo.links[i].bandwidth) == slow and topo.links[i].dst not in members
                                  for i in topo.out_links[u])]
