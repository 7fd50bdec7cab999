"""A verified schedule, or one training iteration, as Chakra execution traces (ET) for ASTRA-sim.

Chakra ET (MLCommons, ``schema/protobuf/et_def.proto``; schema and framing in ``chakra_schema.py``) is one file
per rank, ``<name>.<rank>.et``: a ``GlobalMetadata`` message, then ``Node`` messages, each length-delimited.
ASTRA-sim 2.0 runs such a set as a custom collective (its system JSON's ``all-reduce-implementation-custom``
names the prefix; ``CustomAlgorithm`` issues every node whose dependencies are done) or as a workload.

A trace here is ``{rank: [node dict]}``; a node dict is ``{"id", "name", "type", "data_deps", "ctrl_deps",
"attrs", "duration_micros"}`` with ``type`` a ``NODE_TYPES`` name and ``attrs`` the Chakra attributes by name
(ASTRA-sim reads ``comm_src``, ``comm_dst``, ``comm_tag``, ``comm_size`` of sends and receives, ``comm_type`` and
``comm_size`` of a collective node, ``is_cpu_op`` of every node, and a compute node's ``duration_micros``).

* ``schedule_traces(topo, schedule, total_bytes)``: everything a link carries in one step as one message (the
  runtime model's send, ``solvers.runtime``): a COMM_SEND_NODE on its sender and a COMM_RECV_NODE on its receiver
  with the same unique tag and its bytes, the sum of its pieces' (hi - lo) x M/N. (One message, not one per piece:
  ASTRA-sim's congestion-unaware backend gives every message the link's whole bandwidth, so pieces sent apart on
  one link would share it for free.) A send depends (data_deps) on the receives on its rank, in earlier steps, of
  the same shard with an interval overlapping one of its pieces: the receipts that delivered, or reduced into,
  what it sends. Receives depend on nothing: ASTRA-sim
  matches them by (peer, tag). A reducing receive needs no compute node (ASTRA-sim's CustomAlgorithm would charge
  at least 1 ns for one; the runtime model charges nothing). ASTRA-sim's network has no switch nodes, so a
  switched fabric's schedule is first seen as its GPU-to-GPU sends (``core.switch_paths.network_view``: each
  piece from the GPU that sent it to the GPU that took it, in the step it arrived) and the fabric becomes
  ASTRA-sim's Switch dimension (``chakra_astra.py``). Ranks are the compute nodes in the topology's order.
* ``iteration_traces(n_ranks, ops, schedules)``: one iteration's compute and collectives, the same on every rank,
  each collective with a schedule expanded into its sends and receives. ``iteration_collectives``: the same
  iteration with every collective one node and the schedules as traces of their own, for ASTRA-sim's per-node
  custom collectives (``chakra_astra.write_iteration``; why: ``iteration_traces``' docstring).
* ``write_traces``, ``read_traces``, ``check_traces``: the files, written whole; read back through the schema;
  and checked (every send has exactly one receive with its peer, tag and size, dependencies point to existing
  earlier nodes, ids are unique). ``schedule_nodes`` counts a schedule's trace nodes without building them (the
  CLI's size cap, ``chakra_files.MAX_WRITE_NODES``, is checked with it before anything is written).
"""
from __future__ import annotations

import math
import os
from bisect import bisect_left
from collections import defaultdict
from fractions import Fraction

from topologies.input_file import read_input
from topologies.model import Topology

from ..core.schedule import Collective, Schedule
from ..core.switch_paths import network_view
from .chakra_files import ChakraError, check_name, output_folder, write_whole
from .chakra_schema import (COLLECTIVE_TYPES, NODE_TYPES, GlobalMetadata, Node, SchemaError, attr, attr_value,
                            frame, unframe)

__all__ = ["ChakraError", "ET_VERSION", "MAX_NODES", "check_traces", "iteration_collectives", "iteration_traces",
           "read_traces", "schedule_nodes", "schedule_traces", "write_traces"]

ET_VERSION = "0.0.4"
MAX_NODES = 20_000_000                    # nodes over all ranks; ~100 bytes each on disk
MAX_FILE_BYTES = 4 * 2 ** 30
MAX_TAG = 2 ** 31 - 1                     # ASTRA-sim reads comm_tag as uint32 and hands it on as int
COLL_KINDS = {"allreduce": "ALL_REDUCE", "alltoall": "ALL_TO_ALL", "allgather": "ALL_GATHER",
              "reducescatter": "REDUCE_SCATTER", "reduce_scatter": "REDUCE_SCATTER"}
_NAMES = {v: k for k, v in NODE_TYPES.items()}


def _node(nid: int, name: str, kind: str, deps=(), attrs=None, duration_micros: int = 0) -> dict:
    return {"id": nid, "name": name, "type": kind, "data_deps": sorted(set(deps)), "ctrl_deps": [],
            "attrs": {"is_cpu_op": False, **(attrs or {})}, "duration_micros": int(duration_micros)}


def _shard_bytes(schedule: Schedule, ranks: int, total_bytes) -> Fraction:
    members = len(schedule.group) if schedule.group is not None else ranks
    return Fraction(total_bytes) / members


def schedule_traces(topo: Topology, schedule: Schedule, total_bytes, tag_base: int = 0) -> dict[int, list[dict]]:
    """{rank: nodes} of a verified schedule on ``topo`` for M = ``total_bytes`` (module docstring). Message sizes
    are whole bytes: a message's exact sum of (hi - lo) x M/N rounded to the nearest byte; ChakraError where one
    is under a byte. ``tag_base``: the first tag (another collective's traces in the same iteration use other tags)."""
    if schedule.collective is Collective.CUSTOM:
        raise ChakraError("a custom collective has no Chakra collective type: export a named collective")
    net, sched = network_view(topo, schedule)
    ranks = len(net.compute_nodes)
    if sched.count > MAX_NODES // 2:
        raise ChakraError(f"{sched.count} transfers make over {MAX_NODES} trace nodes: too many to write")
    shard = _shard_bytes(schedule, ranks, total_bytes)
    rank_of = {v: i for i, v in enumerate(net.compute_nodes)}
    traces: dict[int, list[dict]] = {r: [] for r in range(ranks)}
    # (rank, shard) -> receipts as (step, lo, hi, node id), in step order: what a later send of that shard waits on
    receipts: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    tag = tag_base
    for step, transfers in sched.by_step().items():
        arrivals = []
        by_link: dict[int, list] = defaultdict(list)       # one message per (step, link), as the runtime model
        for t in transfers:
            by_link[t.link].append(t)
        for link_id, pieces in by_link.items():
            link = net.links[link_id]
            src, dst = rank_of[link.src], rank_of[link.dst]
            exact = sum(((t.hi - t.lo) * shard for t in pieces), Fraction(0))
            size = round(exact)
            if size < 1:
                raise ChakraError(f"a message of {float(exact):.3g} bytes in step {step}: M = {float(total_bytes):g} "
                                  "is too small for this schedule's pieces (raise --bytes)")
            if tag > MAX_TAG:
                raise ChakraError(f"over {MAX_TAG} messages: ASTRA-sim's tags run out")
            deps = set()
            for t in pieces:
                held = receipts.get((src, t.shard), ())
                deps.update(nid for (_, lo, hi, nid) in held[:bisect_left(held, (step,))] if lo < t.hi and t.lo < hi)
            t0 = pieces[0]
            piece = f"shard {t0.shard} [{t0.lo},{t0.hi})" + (f" and {len(pieces) - 1} more" if len(pieces) > 1
                                                               else "") + f" step {step}"
            common = {"comm_src": src, "comm_dst": dst, "comm_tag": tag, "comm_size": size}
            send = _node(len(traces[src]), f"send {piece} to {dst}", "COMM_SEND_NODE", deps, common)
            traces[src].append(send)
            reduce = " reduce" if any(t.reduce for t in pieces) else ""
            recv = _node(len(traces[dst]), f"recv {piece} from {src}{reduce}", "COMM_RECV_NODE", (), common)
            traces[dst].append(recv)
            arrivals += [((dst, t.shard), (step, t.lo, t.hi, recv["id"])) for t in pieces]
            tag += 1
        for key, entry in arrivals:       # visible to sends of later steps only
            receipts[key].append(entry)
    return traces


def schedule_nodes(topo: Topology, schedule: Schedule) -> int:
    """The trace nodes ``schedule_traces`` makes of ``schedule``, counted without building them: a send and a
    receive per (step, link) that carries anything; on a switched fabric (whose GPU-to-GPU messages each cross at
    least two links) twice the transfers, an upper bound."""
    if topo.switch_nodes or schedule.count > MAX_NODES // 2:
        return 2 * schedule.count
    cols = schedule.stored_columns()
    if cols is not None:
        return 2 * len(set(zip(cols.step.tolist(), cols.link.tolist())))
    return 2 * len({(t.step, t.link) for t in schedule.transfers})


def _coll_kind(kind: str) -> str:
    key = kind.lower().replace("-", "").replace(" ", "")
    if key not in COLL_KINDS:
        known = ", ".join(sorted(set(COLL_KINDS) - {"reduce_scatter"}))
        raise ChakraError(f"op kind {kind!r}: expected compute, {known}"[:200])
    return key.replace("_", "")


def _lookup(schedules, kind: str, size):
    if not schedules:
        return None
    for key in ((kind, size), (kind, float(size)), kind):
        if key in schedules:
            return schedules[key]
    return None


def iteration_traces(n_ranks: int, ops: list[dict], schedules=None, topo: Topology | None = None) \
        -> dict[int, list[dict]]:
    """{rank: nodes} of one training iteration, the same ``ops`` on every rank (SPMD).

    ``ops[i]`` is ``{"kind": "compute", "ns": t, "label": s, "deps": [j < i]}`` or ``{"kind": "allreduce" |
    "alltoall" | "allgather" | "reducescatter", "bytes": M, "label": s, "deps": [...]}`` (M: what one rank holds;
    for an all-to-all, what each rank sends in all, so its schedule is exported at N x M). A collective whose
    verified schedule is ``schedules[(kind, bytes)]`` or ``schedules[kind]`` (a ``(topology, Schedule)`` pair, or a
    ``Schedule`` on ``topo``) becomes its sends and receives (``schedule_traces``), every send matched; otherwise one
    COMM_COLL_NODE with the collective type and ``comm_size`` = M, which ASTRA-sim runs with its own algorithm. A
    compute op is a COMP_NODE whose ``duration_micros`` is ``ns`` / 1000 rounded (ASTRA-sim replays whole
    microseconds, and a zero as 1 ns); the exact figure is kept in the attribute ``duration_ns``. An op waits for
    the last nodes of the ops it depends on (for an expanded collective: every node on that rank nothing else in it
    waits for).

    Expanded sends are plain workload nodes, and ASTRA-sim's workload layer (``HardwareResource``) lets one rank
    have only one GPU communication node in flight: a rank's sends run one after another even where the schedule
    sends on several links at once (BFB on biring(8): twice the schedule's time). ``iteration_collectives`` writes
    each collective as one node with its schedule beside it instead, which ASTRA-sim runs as the studio does."""
    return _iteration(n_ranks, ops, schedules, topo, expand=True)[0]


def iteration_collectives(n_ranks: int, ops: list[dict], schedules=None, topo: Topology | None = None,
                          prefix: str = "coll") -> tuple[dict[int, list[dict]], dict[str, dict], dict[int, str]]:
    """One iteration as ASTRA-sim runs it op for op like the studio's two streams (App. A.4: one collective at a
    time on the communication stream, beside the compute stream): ``(workload, customs, per_node)``.

    ``workload``: ``{rank: nodes}`` as ``iteration_traces``, but every collective is one COMM_COLL_NODE (with its
    type and ``comm_size``), so that the workload layer holds each rank to one collective in flight, not one send.
    ``customs``: ``{name: {rank: nodes}}``, the ``schedule_traces`` of each distinct (kind, bytes) that has a
    verified schedule, named ``<prefix><k>``. ``per_node``: ``{node id: name}``, the collective nodes to run with
    those traces (ASTRA-sim's ``per-node-custom-implementation``; the node ids are the same on every rank); the
    other collective nodes run with ASTRA-sim's own algorithms."""
    check_name(prefix)
    return _iteration(n_ranks, ops, schedules, topo, expand=False, prefix=prefix)


def _iteration(n_ranks, ops, schedules, topo, expand: bool, prefix: str = "coll"):
    if not isinstance(n_ranks, int) or n_ranks < 1:
        raise ChakraError(f"n_ranks must be a positive integer, got {n_ranks!r}"[:200])
    traces: dict[int, list[dict]] = {r: [] for r in range(n_ranks)}
    ends: list[dict[int, list[int]]] = []        # per op: rank -> the node ids later ops wait for
    customs: dict[str, dict] = {}
    names: dict[tuple, str] = {}
    per_node: dict[int, str] = {}
    tag = 0
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            raise ChakraError(f"op {i} must be a dict, got {type(op).__name__}")
        deps = op.get("deps", []) or []
        if any(not isinstance(d, int) or not 0 <= d < i for d in deps):
            raise ChakraError(f"op {i}: deps must name earlier ops (0..{i - 1}), got {deps!r}"[:200])
        label = str(op.get("label", f"op {i}"))[:200]
        waits = {r: sorted({n for d in deps for n in ends[d][r]}) for r in range(n_ranks)}
        kind = str(op.get("kind", ""))
        if kind == "compute":
            ns = op.get("ns")
            if isinstance(ns, bool) or not isinstance(ns, (int, float)) or not math.isfinite(ns) or ns < 0:
                raise ChakraError(f"op {i} ({label}): ns must be a finite number >= 0, got {ns!r}"[:200])
            ends.append(_one_node(traces, waits, label, "COMP_NODE", {"duration_ns": float(ns)}, round(ns / 1000)))
            continue
        coll = _coll_kind(kind)
        size = op.get("bytes")
        if isinstance(size, bool) or not isinstance(size, (int, float)) or not math.isfinite(size) or size <= 0:
            raise ChakraError(f"op {i} ({label}): bytes must be a finite number > 0, got {size!r}"[:200])
        given = _lookup(schedules, coll, size)
        coll_attrs = {"comm_type": COLLECTIVE_TYPES[COLL_KINDS[coll]], "comm_size": int(round(size))}
        if given is None:
            ends.append(_one_node(traces, waits, label, "COMM_COLL_NODE", coll_attrs))
            continue
        on, schedule = given if isinstance(given, tuple) else (topo, given)
        if on is None:
            raise ChakraError(f"op {i} ({label}): a schedule needs its topology (a (topology, schedule) pair)")
        if expand or (coll, float(size)) not in names:
            part = schedule_traces(on, schedule, _schedule_bytes(coll, size, schedule, n_ranks),
                                   tag_base=tag if expand else 0)
            if len(part) != n_ranks:
                raise ChakraError(f"op {i} ({label}): the schedule has {len(part)} ranks, the iteration {n_ranks}")
        if expand:
            tag += sum(n["type"] == "COMM_SEND_NODE" for nodes in part.values() for n in nodes)
            ends.append(_splice(traces, part, waits, label))
            continue
        if (coll, float(size)) not in names:
            names[(coll, float(size))] = f"{prefix}{len(customs)}"
            customs[names[(coll, float(size))]] = part
        ends.append(_one_node(traces, waits, label, "COMM_COLL_NODE", coll_attrs))
        per_node[ends[-1][0][0]] = names[(coll, float(size))]
    return traces, customs, per_node


def _schedule_bytes(coll: str, size, schedule: Schedule, n_ranks: int):
    """The schedule's M for an op of ``size`` bytes. An op's bytes are what one rank holds (ASTRA-sim's
    ``comm_size``; for an all-to-all, what each rank sends in all, App. A.5), and so is an allreduce's M; an
    all-to-all schedule's M is the whole vector of all N shards (each rank owns one shard of M/N and sends a 1/N
    piece of it to each rank), so M = bytes x N."""
    if coll != "alltoall":
        return size
    members = len(schedule.group) if schedule.group is not None else n_ranks
    return size * members


def _one_node(traces, waits, label, kind, attrs, duration_micros: int = 0) -> dict[int, list[int]]:
    """The same node appended on every rank (SPMD: the same id everywhere); its id per rank."""
    mine = {}
    for r in traces:
        node = _node(len(traces[r]), label, kind, waits[r], attrs, duration_micros=duration_micros)
        traces[r].append(node)
        mine[r] = [node["id"]]
    return mine


def _splice(traces, part, waits, label) -> dict[int, list[int]]:
    """Append a collective's nodes to every rank's trace, renumbered; its first nodes wait for ``waits``. The
    collective's ends per rank (its nodes nothing in it waits for; the waits themselves on a rank it leaves idle)."""
    out = {}
    for r, nodes in part.items():
        base = len(traces[r])
        waited = {d for n in nodes for d in n["data_deps"]}
        for n in nodes:
            m = dict(n, id=base + n["id"], name=f"{label}: {n['name']}"[:300],
                     data_deps=sorted({base + d for d in n["data_deps"]} | set(waits[r])))
            traces[r].append(m)
        out[r] = [base + n["id"] for n in nodes if n["id"] not in waited] or list(waits[r])
    return out


def _message(node: dict):
    msg = Node(id=node["id"], name=node.get("name", ""), type=NODE_TYPES[node["type"]],
               data_deps=node.get("data_deps", []), ctrl_deps=node.get("ctrl_deps", []),
               duration_micros=node.get("duration_micros", 0))
    msg.attr.extend(attr(k, v) for k, v in node.get("attrs", {}).items())
    return msg


def write_traces(folder: str, name: str, traces: dict[int, list[dict]]) -> list[str]:
    """Write ``folder/<name>.<rank>.et`` for every rank (a metadata message, then the nodes, length-delimited),
    each file whole or not at all; the paths written. ChakraError (one line) for a folder that is a symbolic link
    or not a folder, an unusable name, or a failed write."""
    check_name(name)
    output_folder(folder)
    if sorted(traces) != list(range(len(traces))):
        raise ChakraError("trace ranks must be 0..N-1")
    paths = []
    for rank in range(len(traces)):
        meta = GlobalMetadata(version=ET_VERSION)
        meta.attr.append(attr("schema", f"Chakra ET {ET_VERSION}, written by Topology Studio"))
        data = frame(meta) + b"".join(frame(_message(n)) for n in traces[rank])
        paths.append(write_whole(folder, f"{name}.{rank}.et", data))
    return paths


def _as_dict(msg) -> dict:
    return {"id": msg.id, "name": msg.name, "type": _NAMES.get(msg.type, str(msg.type)),
            "data_deps": list(msg.data_deps), "ctrl_deps": list(msg.ctrl_deps),
            "attrs": {a.name: attr_value(a) for a in msg.attr}, "duration_micros": msg.duration_micros}


def read_traces(folder: str, name: str, ranks: int | None = None) -> dict[int, list[dict]]:
    """The traces ``folder/<name>.<rank>.et`` for rank 0, 1, ... while the files exist (or for ``ranks`` ranks),
    read back through the schema (regular files only, each at most 4 GiB). ChakraError for none found, a missing
    rank or a file that does not parse."""
    check_name(name)
    traces = {}
    while (len(traces) < ranks if ranks is not None
           else os.path.lexists(os.path.join(folder, f"{name}.{len(traces)}.et"))):
        path = os.path.join(folder, f"{name}.{len(traces)}.et")
        try:
            bodies = unframe(read_input(path, MAX_FILE_BYTES, "Chakra trace"))
        except (SchemaError, OSError, ValueError) as exc:
            raise ChakraError(f"{path}: {exc}"[:300]) from None
        if not bodies:
            raise ChakraError(f"{path}: empty (no GlobalMetadata message)")
        try:
            GlobalMetadata().ParseFromString(bodies[0])
            nodes = []
            for body in bodies[1:]:
                msg = Node()
                msg.ParseFromString(body)
                nodes.append(_as_dict(msg))
        except Exception as exc:             # protobuf's DecodeError
            raise ChakraError(f"{path}: not a Chakra ET message ({exc})"[:300]) from None
        traces[len(traces)] = nodes
    if not traces:
        raise ChakraError(f"no {name}.0.et in {folder}")
    return traces


def check_traces(traces: dict[int, list[dict]]) -> dict:
    """Check a trace set and return {ranks, nodes, sends, recvs, collectives, computes, bytes} (bytes: the sum of
    the sends' comm_size). ChakraError for the first fault: a duplicate id, a dependency on a missing or later
    node (ids in file order, so no cycle can form), a send or receive without comm_src/comm_dst/comm_tag/comm_size
    or on the wrong rank, or a send without exactly one receive of the same (source, destination, tag, size)."""
    ranks = len(traces)
    if sorted(traces) != list(range(ranks)):
        raise ChakraError("trace ranks must be 0..N-1")
    sends, recvs = defaultdict(int), defaultdict(int)
    counts = defaultdict(int)
    total = 0
    for r in range(ranks):
        seen = set()
        for n in traces[r]:
            nid = n["id"]
            if nid in seen:
                raise ChakraError(f"rank {r}: node id {nid} appears twice")
            for d in list(n["data_deps"]) + list(n["ctrl_deps"]):
                if d not in seen:
                    raise ChakraError(f"rank {r}: node {nid} depends on {d}, which is not an earlier node")
            seen.add(nid)
            counts[n["type"]] += 1
            if n["type"] not in ("COMM_SEND_NODE", "COMM_RECV_NODE"):
                continue
            a = n["attrs"]
            missing = [k for k in ("comm_src", "comm_dst", "comm_tag", "comm_size") if a.get(k) is None]
            if missing:
                raise ChakraError(f"rank {r}: node {nid} lacks {', '.join(missing)}")
            key = (int(a["comm_src"]), int(a["comm_dst"]), int(a["comm_tag"]), int(a["comm_size"]))
            mine = key[0] if n["type"] == "COMM_SEND_NODE" else key[1]
            if mine != r or not 0 <= key[0] < ranks or not 0 <= key[1] < ranks:
                raise ChakraError(f"rank {r}: node {nid} ({n['type']}) names src {key[0]} and dst {key[1]}")
            if n["type"] == "COMM_SEND_NODE":
                sends[key] += 1
                total += key[3]
            else:
                recvs[key] += 1
    for key, k in sends.items():
        if k != 1 or recvs.get(key) != 1:
            raise ChakraError(f"send {key[0]} -> {key[1]} tag {key[2]} of {key[3]} bytes: {k} such sends and "
                              f"{recvs.get(key, 0)} matching receives (one each expected)")
    extra = set(recvs) - set(sends)
    if extra:
        key = min(extra)
        raise ChakraError(f"receive on rank {key[1]} from {key[0]} tag {key[2]} of {key[3]} bytes has no send")
    return {"ranks": ranks, "nodes": sum(counts.values()), "sends": counts["COMM_SEND_NODE"],
            "recvs": counts["COMM_RECV_NODE"], "collectives": counts["COMM_COLL_NODE"],
            "computes": counts["COMP_NODE"], "bytes": total}
