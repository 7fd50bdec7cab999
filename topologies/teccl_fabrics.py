"""The public evaluation topologies of TE-CCL (Liu et al., SIGCOMM 2024; notes te-ccl.md section 8.2, Table 2 in
8.1): DGX1, NDv2, DGX2 and the AMD MI250 chassis, one small pure function each.

TE-CCL's model is a directed graph with one link per ordered pair (i, j) of capacity T_ij and latency alpha_ij
(notes 1.1): a "weight 2" entry of the released code's adjacency is ONE link of twice the unit bandwidth, never
two parallel links. So every function here returns at most one link per ordered pair, with its bandwidth (GB/s)
and alpha (microseconds) as exact Fractions. The links are directed, and NDv2 with 2 or more chassis and DGX2
with 2 or more chassis are not bidirectional (their inter-chassis links have no reverse link).

Node order: the GPUs first, chassis-major (``c{c}.g{j}``, or ``g{j}`` for DGX1), then the switches.

Alphas in the expression language. The expression grammar only has integers, so each family is also registered
in its ``*_ns`` form, which takes the alphas in whole nanoseconds (``ndv2(chassis=2,alpha_ns=700,
inter_alpha_ns=1300)``); ``expr`` is always written in that form. The Python builders take the alphas in
microseconds as any exact number (int, float read through its decimal text, Fraction or numeric string), which
must be a whole number of nanoseconds and not negative, so that every topology has an exact expression.

Each family has an exact ``*_size`` function (nodes, links) that only does arithmetic on the structural argument
(a non-integer one raises TypeError); the alphas do not change the size and are ignored there.
"""
from __future__ import annotations

from fractions import Fraction

from .clusters import _Net, _ints, _times
from .model import COMPUTE, SWITCH, Topology, TopologyError, as_fraction, need_int

# DGX1's hybrid cube-mesh (notes 8.2, code ``dgx1.py``): CUBE_MESH[i][j] is the capacity of the directed link
# i -> j in units of 25 GB/s. Symmetric; every GPU has 4 neighbours and 6 units (150 GB/s) out. NDv2's chassis
# is the same graph with 50 / 25 GB/s (code values 23 / 46; notes 8.2 "the same cube-mesh as DGX1").
CUBE_MESH = (
    {1: 2, 2: 1, 3: 1, 4: 2},
    {0: 2, 2: 1, 3: 2, 5: 1},
    {0: 1, 1: 1, 3: 2, 6: 2},
    {0: 1, 1: 2, 2: 2, 7: 1},
    {0: 2, 5: 2, 6: 1, 7: 1},
    {1: 1, 4: 2, 6: 1, 7: 2},
    {2: 2, 4: 1, 5: 1, 7: 2},
    {3: 1, 4: 1, 5: 2, 6: 2},
)
CUBE_MESH_UNIT = 25
NDV2_INTER_BW = Fraction(25, 2)          # 12.5 GB/s between chassis (code ``ndv2.py``)
DGX2_GPUS = 16
DGX2_SWITCH_BW = 125
DGX2_INTER_BW = Fraction(25, 2)
# The AMD MI250 chassis of TE-CCL (notes 8.2, code ``amd.py``): AMD_XGMI[i][j] is the capacity of i -> j in
# units of 50 GB/s (200 / 100 / 50 GB/s links). Symmetric, 56 directed links; the same matrix as ForestColl's
# ``clusters.MI250_XGMI``, read there as parallel 50 GB/s cables.
AMD_XGMI = (
    {1: 4, 4: 2, 8: 1}, {0: 4, 5: 1, 9: 1, 10: 1}, {3: 4, 6: 1, 10: 1, 9: 1}, {2: 4, 7: 2, 11: 1},
    {6: 1, 5: 4, 0: 2}, {1: 1, 4: 4, 7: 1, 6: 1}, {4: 1, 7: 4, 2: 1, 5: 1}, {5: 1, 6: 4, 3: 2},
    {0: 1, 9: 4, 12: 2}, {1: 1, 2: 1, 8: 4, 13: 1}, {1: 1, 2: 1, 11: 4, 14: 1}, {3: 1, 10: 4, 15: 2},
    {8: 2, 13: 4, 14: 1}, {9: 1, 12: 4, 15: 1, 14: 1}, {10: 1, 12: 1, 13: 1, 15: 4}, {11: 2, 13: 1, 14: 4},
)
AMD_XGMI_UNIT = 50
AMD_SWITCH_BW = 25


def _alpha(value, what: str) -> Fraction:
    """An alpha in microseconds, exactly; it must be at least 0 and a whole number of nanoseconds."""
    a = as_fraction(value, what)
    if a < 0:
        raise TopologyError(f"{what} must be at least 0 us, got {value}")
    if (a * 1000).denominator != 1:
        raise TopologyError(f"{what} must be a whole number of nanoseconds (a multiple of 0.001 us), got {value}")
    return a


def _ns(alpha: Fraction) -> int:
    return int(alpha * 1000)


def _from_ns(value, what: str) -> Fraction:
    return Fraction(need_int(value, what, 0), 1000)


def _cube_mesh(net: _Net, gpus: list[int], alpha: Fraction) -> None:
    """The 8-GPU cube-mesh on ``gpus``: one link per ordered neighbour pair, weight x 25 GB/s."""
    for i, row in enumerate(CUBE_MESH):
        for j, w in row.items():
            net.link(gpus[i], gpus[j], w * CUBE_MESH_UNIT, alpha)


# ---------------------------------------------------------------------------------------------------- DGX1
def dgx1(alpha=Fraction(7, 10)) -> Topology:
    """NVIDIA DGX1 as modelled by TE-CCL (notes te-ccl.md 8.2, code ``dgx1.py``; Table 2: 8 GPUs, 32 edges).

    GPUs ``g0`` .. ``g7`` joined by the hybrid cube-mesh ``CUBE_MESH``: the directed link i -> j carries
    weight x 25 GB/s, so a weight-2 pair is ONE 50 GB/s link (TE-CCL has one link per pair with capacity T_ij),
    not two parallel 25 GB/s links. 32 directed links; every GPU has 4 neighbours and 150 GB/s out. Every link
    has the same ``alpha`` (us; the code takes it as input, the SCCL comparisons used 0.7 or 0, notes 8.2 and
    9.1-9.2).
    """
    alpha = _alpha(alpha, "alpha")
    net = _Net()
    _cube_mesh(net, [net.node(f"g{j}", COMPUTE) for j in range(8)], alpha)
    return net.topology("DGX1", f"dgx1(alpha_ns={_ns(alpha)})")


def dgx1_size(*_alphas, **_named_alphas) -> tuple[int, int]:
    return 8, 32


def dgx1_ns(alpha_ns: int = 700) -> Topology:
    """``dgx1`` with its alpha in whole nanoseconds (the expression language's form)."""
    return dgx1(_from_ns(alpha_ns, "alpha_ns"))


# ---------------------------------------------------------------------------------------------------- NDv2
def ndv2(chassis: int = 1, alpha=Fraction(7, 10), inter_alpha=Fraction(13, 10)) -> Topology:
    """``chassis`` Azure NDv2 chassis as modelled by TE-CCL (paper Figure 14; notes te-ccl.md 8.2 and 10.1, code
    ``ndv2.py``; Table 2: 8 GPUs, 32 edges per chassis).

    Chassis c has GPUs ``c{c}.g0`` .. ``c{c}.g7`` joined by DGX1's cube-mesh at 50 / 25 GB/s ("Each chassis has
    8 GPUs connected with 50 GBps and 25 GBps links"), every link with ``alpha`` (0.7 us). Between chassis every
    link is 12.5 GB/s with ``inter_alpha`` (1.3 us):

    - 2 chassis: direct links from local GPU0 of one chassis to local GPU1 of the other, both ways; with the
      GPUs numbered 0-15 these are 0 -> 9 and 8 -> 1 (the code's matrix is transposed before use, so its
      entries [1][8] and [9][0] are these links; notes 10.1 reproduced Table 8 with them).
    - 3 or more chassis: one switch ``sw``; local GPU0 of every chassis -> ``sw`` and ``sw`` -> local GPU1 of
      every chassis, each 12.5 GB/s with ``inter_alpha`` (so a GPU0 -> GPU1 hop through it has two alphas).
    - 1 chassis: no inter-chassis link and no switch (the code's single-chassis branch also adds its switch and
      the GPU0 -> switch -> GPU1 links, which only loop back into the chassis; they are left out here).

    The inter-chassis bottleneck is one 12.5 GB/s link per direction per chassis pair (notes 8.2).

    Node order: the GPUs (chassis-major), then ``sw``. The code numbers its switch 0 and the GPUs from 1; here
    the switch comes last, so node i is GPU i for every chassis count.
    """
    chassis = need_int(chassis, "chassis", 1)
    alpha, inter_alpha = _alpha(alpha, "alpha"), _alpha(inter_alpha, "inter_alpha")
    net = _Net()
    gpus = [[net.node(f"c{c}.g{j}", COMPUTE) for j in range(8)] for c in range(chassis)]
    for row in gpus:
        _cube_mesh(net, row, alpha)
    if chassis == 2:
        net.link(gpus[0][0], gpus[1][1], NDV2_INTER_BW, inter_alpha)
        net.link(gpus[1][0], gpus[0][1], NDV2_INTER_BW, inter_alpha)
    elif chassis > 2:
        sw = net.node("sw", SWITCH)
        for row in gpus:
            net.link(row[0], sw, NDV2_INTER_BW, inter_alpha)
        for row in gpus:
            net.link(sw, row[1], NDV2_INTER_BW, inter_alpha)
    return net.topology(f"NDv2{_times(chassis)}",
                        f"ndv2(chassis={chassis},alpha_ns={_ns(alpha)},inter_alpha_ns={_ns(inter_alpha)})")


def ndv2_size(chassis: int = 1, *_alphas, **_named_alphas) -> tuple[int, int]:
    _ints(chassis)
    if chassis == 2:
        return 16, 66
    if chassis > 2:
        return 8 * chassis + 1, 34 * chassis
    return 8 * chassis, 32 * chassis


def ndv2_ns(chassis: int = 1, alpha_ns: int = 700, inter_alpha_ns: int = 1300) -> Topology:
    """``ndv2`` with its alphas in whole nanoseconds (the expression language's form)."""
    return ndv2(chassis, _from_ns(alpha_ns, "alpha_ns"), _from_ns(inter_alpha_ns, "inter_alpha_ns"))


# ---------------------------------------------------------------------------------------------------- DGX2
def dgx2(chassis: int = 2, alpha=Fraction(35, 100), inter_alpha=Fraction(26, 10)) -> Topology:
    """``chassis`` NVIDIA DGX2 chassis as modelled by TE-CCL (paper Figure 13; notes te-ccl.md 8.2, code
    ``dgx2.py``; Table 2: 17 nodes, 32 edges per chassis).

    Chassis c has GPUs ``c{c}.g0`` .. ``c{c}.g15`` and one NVSwitch node ``c{c}.nvs``; every GPU <-> switch
    link is 125 GB/s each way with ``alpha`` (0.35 us). Between chassis, "8 GPUs are used for sending chunks to
    another chassis, and 8 GPUs are used for receiving": local GPU 2k+1 of chassis i -> local GPU 2k of chassis
    j (k = 0..7, GPUs numbered 0..15 within the chassis), 12.5 GB/s with ``inter_alpha`` (2.6 us). This is the
    code's map ``{"1": [0], "3": [2], ..., "15": [14]}`` (its node 17i + 1 + g is local GPU g here).

    The paper and the code define 2 chassis only. For more, every ordered pair of chassis (i, j) gets the same
    8 links (the code's loop over all pairs i != j), so each odd GPU sends to the same local even GPU of every
    other chassis. 1 chassis has no inter-chassis link.

    Node order: all GPUs (chassis-major), then the switches (the code puts each chassis's switch first, 17i).
    """
    chassis = need_int(chassis, "chassis", 1)
    alpha, inter_alpha = _alpha(alpha, "alpha"), _alpha(inter_alpha, "inter_alpha")
    net = _Net()
    gpus = [[net.node(f"c{c}.g{j}", COMPUTE) for j in range(DGX2_GPUS)] for c in range(chassis)]
    for c in range(chassis):
        nvs = net.node(f"c{c}.nvs", SWITCH)
        for g in gpus[c]:
            net.cable(g, nvs, DGX2_SWITCH_BW, alpha=alpha)
    for i in range(chassis):
        for j in range(chassis):
            if i != j:
                for k in range(DGX2_GPUS // 2):
                    net.link(gpus[i][2 * k + 1], gpus[j][2 * k], DGX2_INTER_BW, inter_alpha)
    return net.topology(f"DGX2{_times(chassis)}",
                        f"dgx2(chassis={chassis},alpha_ns={_ns(alpha)},inter_alpha_ns={_ns(inter_alpha)})")


def dgx2_size(chassis: int = 2, *_alphas, **_named_alphas) -> tuple[int, int]:
    _ints(chassis)
    return 17 * chassis, 32 * chassis + 8 * chassis * (chassis - 1)


def dgx2_ns(chassis: int = 2, alpha_ns: int = 350, inter_alpha_ns: int = 2600) -> Topology:
    """``dgx2`` with its alphas in whole nanoseconds (the expression language's form)."""
    return dgx2(chassis, _from_ns(alpha_ns, "alpha_ns"), _from_ns(inter_alpha_ns, "inter_alpha_ns"))


# --------------------------------------------------------------------------------------------------- AMD
def mi250_teccl(chassis: int = 1, alpha=0, switch_alpha=0) -> Topology:
    """``chassis`` AMD MI250 chassis as modelled by TE-CCL (paper Figure 15; notes te-ccl.md 8.2, code
    ``amd.py``; Table 2: 16 GPUs, 56 edges per chassis). ForestColl's model of the same machine is ``mi250``.

    Chassis c has GPUs ``c{c}.g0`` .. ``c{c}.g15`` joined by ``AMD_XGMI``: ONE directed link i -> j of
    weight x 50 GB/s per pair (200 / 100 / 50 GB/s, "connected with 200 GBps, 100 GBps and 50 GBps links"), 56
    per chassis, each with ``alpha`` (us). When chassis > 1, "GPU pairs are connected to small switches in each
    chassis, which are all connected to a bigger switch. All switch links are 25 GBps": small switch
    ``c{c}.sw{i}`` <-> GPUs 2i and 2i+1, and every small switch <-> the one global switch ``sw``, all 25 GB/s
    each way with ``switch_alpha`` (us). The paper gives no AMD alpha (both default to 0).

    Readings of the code: the global switch is one node shared by all chassis (the code's node 0, "the switch
    interconnecting the chassis"); a single chassis has no switches (the code returns the 16-GPU matrix alone).
    The code tests ``i > 16 or j > 16`` for a switch link, so its first small switch (node 16) gets 50 GB/s
    links; that is a bug (it should be >= 16) and is not reproduced: every switch link here is 25 GB/s.

    Node order: all GPUs (chassis-major), then each chassis's small switches, then ``sw``.
    """
    chassis = need_int(chassis, "chassis", 1)
    alpha, switch_alpha = _alpha(alpha, "alpha"), _alpha(switch_alpha, "switch_alpha")
    net = _Net()
    gpus = [[net.node(f"c{c}.g{j}", COMPUTE) for j in range(16)] for c in range(chassis)]
    for row in gpus:
        for i, adjacent in enumerate(AMD_XGMI):
            for j, w in sorted(adjacent.items()):
                net.link(row[i], row[j], w * AMD_XGMI_UNIT, alpha)
    if chassis > 1:
        small = [[net.node(f"c{c}.sw{i}", SWITCH) for i in range(8)] for c in range(chassis)]
        for c in range(chassis):
            for i, s in enumerate(small[c]):
                net.cable(gpus[c][2 * i], s, AMD_SWITCH_BW, alpha=switch_alpha)
                net.cable(gpus[c][2 * i + 1], s, AMD_SWITCH_BW, alpha=switch_alpha)
        top = net.node("sw", SWITCH)
        for row in small:
            for s in row:
                net.cable(s, top, AMD_SWITCH_BW, alpha=switch_alpha)
    return net.topology(f"AMD MI250{_times(chassis)} (TE-CCL)",
                        f"mi250_teccl(chassis={chassis},alpha_ns={_ns(alpha)},switch_alpha_ns={_ns(switch_alpha)})")


def mi250_teccl_size(chassis: int = 1, *_alphas, **_named_alphas) -> tuple[int, int]:
    _ints(chassis)
    if chassis > 1:
        return 24 * chassis + 1, 104 * chassis
    return 16 * chassis, 56 * chassis


def mi250_teccl_ns(chassis: int = 1, alpha_ns: int = 0, switch_alpha_ns: int = 0) -> Topology:
    """``mi250_teccl`` with its alphas in whole nanoseconds (the expression language's form)."""
    return mi250_teccl(chassis, _from_ns(alpha_ns, "alpha_ns"), _from_ns(switch_alpha_ns, "switch_alpha_ns"))
