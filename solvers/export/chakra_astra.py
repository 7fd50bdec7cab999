"""ASTRA-sim's inputs beside a collective's Chakra traces: network YAML, system JSON, remote-memory JSON, a
one-node workload per rank that calls the collective, and a README saying how to run it (or why the fabric has
no analytical network here).

ASTRA-sim 2.0's analytical backend (astra-sim/astra-network-analytical) knows a network as dimensions, each a
``Ring``, ``FullyConnected`` or ``Switch`` of ``npus_count`` NPUs with one ``bandwidth`` in GB/s, GB = 2^30
bytes, and one ``latency`` in ns per link; NPU ids count the first dimension fastest. Its Ring links both ways
(a unidirectional ring's schedule uses one of them); its Switch is one node every NPU links to, a message crossing
two links. ``network_dims(topo)`` recognises a topology that is exactly one of these, or a product of Rings and
FullyConnected dimensions over the compute nodes in order (a torus); anything else (several switches, mixed
fabrics) it cannot express, and ``astra_inputs`` says so in the README while the traces are still written.

Prices follow the runtime model (``solvers.runtime``): a link's bandwidth and alpha under the given
``Execution``; a Switch link's latency is half the GPU-to-GPU path's alpha, so a message pays the model's one alpha
across both links. The system JSON points ``<collective>-implementation-custom`` at the traces' prefix; ASTRA-sim
reads ``PREFIX.<rank>.et`` relative to its working folder, so the README runs it from the folder.

A training iteration (``write_iteration``): the workload is the iteration with every collective one node, and
``collectives.yml`` (the system JSON's ``per-node-custom-implementation``) names for each of those nodes the
traces of the verified schedule that runs it (``iteration_schedules``). Sends written into the workload itself
would not do: ASTRA-sim's workload layer (``workload/HardwareResource.cc``) lets a rank have one GPU
communication node in flight (receives excepted), so a schedule that sends on several links in one step runs
its sends one after another (BFB on biring(8): twice its time). As collective nodes, one collective at a time
runs on a rank beside its compute, the direct-connect paper's two streams (App. A.4).
"""
from __future__ import annotations

import json
from itertools import product

from topologies.model import Topology

from ..runtime import Execution
from .chakra import ET_VERSION, _message
from .chakra_files import ChakraError, check_name, output_folder, write_whole
from .chakra_schema import COLLECTIVE_TYPES, GlobalMetadata, attr, frame

__all__ = ["CUSTOM_KEYS", "GIB", "PER_NODE", "astra_inputs", "iteration_inputs", "iteration_schedules", "network_dims",
           "write_iteration"]

GIB = 2 ** 30
CUSTOM_KEYS = {"allreduce": ("all-reduce-implementation-custom", "ALL_REDUCE"),
               "allgather": ("all-gather-implementation-custom", "ALL_GATHER"),
               "reduce_scatter": ("reduce-scatter-implementation-custom", "REDUCE_SCATTER"),
               "alltoall": ("all-to-all-implementation-custom", "ALL_TO_ALL")}
WORKLOAD = "workload"


def _factorizations(n: int, most: int = 3):
    """Ordered factorizations of n into at most ``most`` factors, each at least 2."""
    if n == 1:
        yield ()
        return
    if most == 0:
        return
    for f in range(2, n + 1):
        if n % f == 0:
            for rest in _factorizations(n // f, most - 1):
                yield (f, *rest)


def _dim_edges(sizes, kinds) -> set:
    """Undirected NPU pairs of a product of Ring / FullyConnected dimensions (first dimension fastest)."""
    edges, n = set(), 1
    for s in sizes:
        n *= s
    strides = [1]
    for s in sizes[:-1]:
        strides.append(strides[-1] * s)
    for v in range(n):
        coords = [(v // st) % s for st, s in zip(strides, sizes)]
        for d, (s, kind) in enumerate(zip(sizes, kinds)):
            peers = [(coords[d] + 1) % s] if kind == "Ring" else range(s)
            for c in peers:
                if c != coords[d]:
                    u = v + (c - coords[d]) * strides[d]
                    edges.add((min(u, v), max(u, v)))
    return edges


def network_dims(topo: Topology, execution: Execution) -> tuple[list[dict] | None, str]:
    """([{topology, npus_count, bandwidth (GiB/s), latency (ns)}] per dimension, or None; why not / what)."""
    alpha, us_per_byte = execution.link_prices(topo)
    gbs = [1.0 / (u * 1e3) for u in us_per_byte]          # GB/s of 10^9 bytes
    n = len(topo.compute_nodes)
    if len({round(g, 9) for g in gbs}) != 1:
        return None, "its links have different bandwidths; the analytical network has one per dimension"
    bw = float(gbs[0]) * 1e9 / GIB
    if topo.switch_nodes:
        switches = topo.switch_nodes
        ends = {(l.src, l.dst) for l in topo.links}
        star = {(v, switches[0]) for v in topo.compute_nodes} | {(switches[0], v) for v in topo.compute_nodes}
        if len(switches) != 1 or ends != star:
            return None, (f"it has {len(switches)} switch nodes and links besides one switch joining every GPU; "
                          "the analytical network's Switch is a single crossbar")
        half = float(sum(alpha)) / len(topo.compute_nodes) / 2.0      # one GPU-to-GPU alpha over two links
        return [{"topology": "Switch", "npus_count": n, "bandwidth": bw, "latency": half * 1e3}], \
            f"Switch({n}): one switch node, every GPU linked to it"
    if len({round(float(a), 12) for a in alpha}) != 1:
        return None, "its links have different alphas; the analytical network has one latency per dimension"
    lat = float(alpha[0]) * 1e3
    pairs = {(min(l.src, l.dst), max(l.src, l.dst)) for l in topo.links}
    if any(a == b for a, b in pairs):
        return None, "it has self-loops"
    for sizes in _factorizations(n):
        for kinds in product(("Ring", "FullyConnected"), repeat=len(sizes)):
            if any(k == "Ring" and s < 3 for k, s in zip(kinds, sizes)):
                continue
            if _dim_edges(sizes, kinds) == pairs:
                dims = [{"topology": k, "npus_count": s, "bandwidth": bw, "latency": lat} for k, s in zip(kinds, sizes)]
                return dims, " x ".join(f"{k}({s})" for k, s in zip(kinds, sizes))
    return None, ("its links are not a Ring, FullyConnected or Switch, nor a product of Rings and FullyConnected "
                  "dimensions over the GPUs in order")


def _yaml(dims: list[dict]) -> str:
    def row(key, fmt):
        return f"{key}: [ {', '.join(fmt(d[key]) for d in dims)} ]\n"
    return (row("topology", str) + row("npus_count", str) + row("bandwidth", lambda x: repr(float(x)))
            + row("latency", lambda x: repr(float(x))))


def astra_inputs(topo: Topology, folder: str, name: str, collective: str, total_bytes: float,
                 execution: Execution, ranks: int | None = None) -> dict:
    """Write ASTRA-sim's inputs for ``name``'s traces of ``collective`` (allreduce, allgather, reduce_scatter,
    alltoall) in ``folder``; returns {"files", "dims", "note", "expressible"}. ``execution``: the runtime model's
    prices (``Workload.execution``)."""
    check_name(name)
    if name == WORKLOAD:
        raise ChakraError(f"the traces may not be named {WORKLOAD!r}: ASTRA-sim's workload files take that name here")
    output_folder(folder)
    ranks = len(topo.compute_nodes) if ranks is None else ranks
    dims, note = network_dims(topo, execution)
    files, lines = [], []
    key = CUSTOM_KEYS.get(collective.replace("-", "_"))
    if key is None:
        lines.append(f"ASTRA-sim runs custom all-reduce, all-gather, reduce-scatter and all-to-all only; a "
                     f"{collective} has no custom implementation there, so only the traces are written.")
    else:
        system = {"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "active-chunks-per-dimension": 1,
                  key[0]: [name], "local-mem-bw": 50}
        files.append(write_whole(folder, "system.json", (json.dumps(system, indent=2) + "\n").encode()))
        files.append(write_whole(folder, "memory.json", b'{\n  "memory-type": "NO_MEMORY_EXPANSION"\n}\n'))
        for r in range(ranks):       # the workload: one call of the collective per rank (its size is not used)
            meta = GlobalMetadata(version=ET_VERSION)
            node = {"id": 0, "name": f"{collective} {total_bytes:g} bytes", "type": "COMM_COLL_NODE",
                    "attrs": {"is_cpu_op": False, "comm_type": COLLECTIVE_TYPES[key[1]],
                              "comm_size": int(round(total_bytes))}}
            meta.attr.append(attr("schema", f"Chakra ET {ET_VERSION}, written by Topology Studio"))
            files.append(write_whole(folder, f"{WORKLOAD}.{r}.et", frame(meta) + frame(_message(node))))
    if dims is not None:
        files.append(write_whole(folder, "network.yml", _yaml(dims).encode()))
        binary = "AstraSim_Analytical_Congestion_Aware" if len(dims) == 1 else "AstraSim_Analytical_Congestion_Unaware"
        lines.append(f"Network: {note}; bandwidth in GB/s of 2^30 bytes, latency in ns (network.yml).")
        if key is not None:
            lines.append(f"Run from this folder: {binary} --workload-configuration={WORKLOAD} "
                         "--system-configuration=system.json --remote-memory-configuration=memory.json "
                         "--network-configuration=network.yml   (reported cycles are ns)")
        if len(dims) > 1:
            lines.append("Several dimensions run on the congestion-unaware backend only (the aware one takes one).")
    else:
        lines.append(f"No network.yml: ASTRA-sim's analytical backend cannot express {topo.name or topo.expr}: "
                     f"{note}. The traces are still written; give ASTRA-sim a network of your own.")
    files.append(write_whole(folder, "README.txt", ("\n".join(lines) + "\n").encode()))
    return {"files": files, "dims": dims, "note": note, "expressible": dims is not None}


NATIVE_KEYS = {"all-reduce-implementation": "ring", "all-gather-implementation": "ring",
               "reduce-scatter-implementation": "ring", "all-to-all-implementation": "direct"}


PER_NODE = "collectives.yml"


def iteration_inputs(topo: Topology, folder: str, execution: Execution, expanded: int, native: int,
                     per_node: dict[int, str] | None = None) -> dict:
    """ASTRA-sim's inputs beside a training iteration's traces, which are the workload itself
    (``folder/workload.<rank>.et``, written by the caller from ``chakra.iteration_traces`` or
    ``iteration_collectives``): the network YAML where the fabric is expressible, a system JSON whose collectives
    are ASTRA-sim's own (ring, direct: they run only the ``native`` collectives that had no verified schedule), the
    remote-memory JSON and a README. ``per_node`` ({workload node id: trace prefix}, from ``iteration_collectives``):
    also ``collectives.yml``, named by the system JSON's ``per-node-custom-implementation``, so that ASTRA-sim runs
    each of those collective nodes with the studio's schedule (``<prefix>.<rank>.et``, written by the caller).
    Returns {"files", "dims", "note", "expressible"}; ``expanded`` counts the collectives written as the studio's
    schedules (sends and receives in the workload, or per-node custom collectives)."""
    output_folder(folder)
    dims, note = network_dims(topo, execution)
    per_dim = 1 if dims is None else len(dims)
    system = {"scheduling-policy": "FIFO", "preferred-dataset-splits": 1, "active-chunks-per-dimension": 1,
              "local-mem-bw": 50, **{k: [v] * per_dim for k, v in NATIVE_KEYS.items()}}
    files = []
    if per_node:
        for name in set(per_node.values()):
            check_name(name)
        body = "".join(f"{int(k)}: {v}\n" for k, v in sorted(per_node.items()))
        files.append(write_whole(folder, PER_NODE, body.encode()))
        system["per-node-custom-implementation"] = PER_NODE
    files += [write_whole(folder, "system.json", (json.dumps(system, indent=2) + "\n").encode()),
              write_whole(folder, "memory.json", b'{\n  "memory-type": "NO_MEMORY_EXPANSION"\n}\n')]
    how = ("one collective node each, run by ASTRA-sim with the studio's verified schedule (collectives.yml names "
           "each node's <prefix>.<rank>.et)" if per_node else "the studio's verified schedules (sends and receives)")
    lines = [f"One training iteration as ASTRA-sim's workload ({WORKLOAD}.<rank>.et): {expanded} collectives written "
             f"as {how}, {native} as collective nodes that ASTRA-sim runs with its own algorithms (system.json)."]
    if dims is not None:
        files.append(write_whole(folder, "network.yml", _yaml(dims).encode()))
        binary = "AstraSim_Analytical_Congestion_Aware" if len(dims) == 1 else "AstraSim_Analytical_Congestion_Unaware"
        lines.append(f"Network: {note}; bandwidth in GB/s of 2^30 bytes, latency in ns (network.yml).")
        lines.append(f"Run from this folder: {binary} --workload-configuration={WORKLOAD} "
                     "--system-configuration=system.json --remote-memory-configuration=memory.json "
                     "--network-configuration=network.yml   (reported cycles are ns)")
    else:
        lines.append(f"No network.yml: ASTRA-sim's analytical backend cannot express {topo.name or topo.expr}: "
                     f"{note}. The traces are still written; give ASTRA-sim a network of your own.")
    files.append(write_whole(folder, "README.txt", ("\n".join(lines) + "\n").encode()))
    return {"files": files, "dims": dims, "note": note, "expressible": dims is not None}


def write_iteration(topo: Topology, folder: str, ops: list[dict], schedules, execution: Execution) -> dict:
    """One iteration (``Iteration.trace_ops``) with ASTRA-sim's inputs in ``folder``: the workload with every
    collective one node (``chakra.iteration_collectives``), each distinct scheduled collective's traces
    (``coll<k>.<rank>.et``), ``collectives.yml`` and the rest (``iteration_inputs``). Returns
    ``iteration_inputs``' dict plus {"workload": traces, "customs": {name: traces}, "per_node": {id: name}}."""
    from .chakra import iteration_collectives, write_traces

    traces, customs, per_node = iteration_collectives(len(topo.compute_nodes), ops, schedules, topo)
    files = write_traces(folder, WORKLOAD, traces)
    for name, part in customs.items():
        files += write_traces(folder, name, part)
    colls = sum(op.get("kind") != "compute" for op in ops)
    out = iteration_inputs(topo, folder, execution, len(per_node), colls - len(per_node), per_node)
    out["files"] = files + out["files"]
    return {**out, "workload": traces, "customs": customs, "per_node": per_node}


def iteration_schedules(topo: Topology, collectives) -> dict:
    """{(kind, bytes): (topology, verified schedule)} for an iteration's ``CollectiveCost`` rows: an allreduce as
    the synthesizer that priced it (``synthesize`` verifies), an all-to-all as the verified shortest-path schedule
    (``direct_alltoall``) up to 64 nodes; the rest have none (ASTRA-sim's own algorithms run them)."""
    from ..core.errors import NotApplicable
    from ..core.verify import verify
    from ..directconnect.direct_alltoall import direct_alltoall
    from ..synthesize import synthesize

    schedules, built = {}, {}
    for c in collectives:
        key = (c.collective, float(c.bytes))
        if c.collective == "allreduce" and c.algo:
            if c.algo not in built:
                built[c.algo] = synthesize(topo, c.algo, "allreduce").schedule
            schedules[key] = (topo, built[c.algo])
        elif c.collective == "alltoall" and topo.n <= 64:
            if "alltoall" not in built:
                try:
                    schedule = direct_alltoall(topo)
                except NotApplicable:
                    schedule = None
                built["alltoall"] = schedule if schedule is not None and verify(topo, schedule).ok else None
            if built["alltoall"] is not None:
                schedules[key] = (topo, built["alltoall"])
    return schedules
