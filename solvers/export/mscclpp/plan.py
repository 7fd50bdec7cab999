"""Writing an MSCCL program as an MSCCL++ execution plan: ``to_plan`` (the plan object), ``plan_json`` (its
text) and ``export_plan`` (lower a verified schedule, write its plan and check it with ``reader.check_plan``).

Mapping (``to_plan``)
---------------------
Protocol ``Simple`` (no packets) on memory channels, whatever ``algo.proto`` says. Each MSCCL threadblock becomes
one MSCCL++ threadblock (more when it exceeds 64 ops, below). Messages are matched as MSCCL matches them: the
k-th send from a to b on channel c meets the k-th receive of b from a on c. Every message gets its own landing
slot in the receiver's scratch buffer, after the scratch the MSCCL program uses itself, so no slot is ever
overwritten within a launch (``scratch_chunks`` = the program's scratch + every chunk the rank receives).

- send ``s``: ``put`` of the chunks from the sender's buffer into the slot of the receiver's scratch (remote
  buffer ``{rank: b, type: s}``), ``nop``, ``signal`` on the link's channel.
- receive ``r``: ``wait`` on the link's channel, ``nop``, ``copy`` slot -> destination; ``rrc``: ``wait``, ``nop``,
  ``re`` (local chunks + slot -> destination); ``rcs``/``rrs``/``rrcs`` do that and forward (``put`` + ``signal``)
  from the slot (``rcs``; ``rrs``, whose sum is written back into its slot) or from the destination (``rrcs``).
- ``cpy`` -> ``copy``; ``re`` -> ``re`` (destination + source -> destination); ``nop`` only carries a dependency.
- A dependency (``depid``, ``deps``) is one semaphore of the rank (``init_value`` 0): the producer step is
  followed by ``nop`` + ``sem_release``, the consumer preceded by ``sem_acquire`` + ``nop``.
- ``nop`` (``__syncthreads``) also goes between two data ops of a threadblock whose chunks overlap with a write,
  before every ``signal``/``sem_release`` that follows a data op, and after every ``wait``/``sem_acquire`` that
  a data op follows, as the DSL's ``add_data_sync`` does.
- Each directed link (a, b, c) with traffic gets its own memory channel on both ranks, listed on each side in
  the same order (peer, channel, lower rank's direction first), so the executor pairs them. Data flows a -> b;
  b's receiving threadblock first signals "ready" on it, and a waits for that once before its first put on the
  link: b's previous launch has then finished reading its slots (the semaphores and the scratch outlive a launch).
- A threadblock over 64 ops is cut into segments chained by a semaphore (``nop`` + ``sem_release`` at the end of
  one, ``sem_acquire`` + ``nop`` at the start of the next); they share the channels, whose counters live in memory.
"""
from __future__ import annotations

import json
from collections import defaultdict

from ...core.gc_pause import gc_paused
from ..program import DEFAULT_SM_BUDGET, RECEIVING_STEPS, SENDING_STEPS, Algo
from .format import (COLLECTIVES, MAX_DEVICE_SEMAPHORES, MAX_OPERATION, MAX_THREADS_PER_BLOCK, PlanError, _conflict,
                     _natural_chunks)
from .model import PlanReport
from .reader import check_plan


class _Builder:
    """One threadblock's op list, with the ``nop`` placement rules of the module docstring."""

    def __init__(self):
        self.ops: list[dict] = []
        self.touched: list[tuple] = []
        self.after_wait = False

    def sync(self):
        if self.ops and self.ops[-1]["name"] != "nop":
            self.ops.append({"name": "nop"})
        self.touched, self.after_wait = [], False

    def data(self, op: dict, accesses: list[tuple]):
        if self.after_wait or any(_conflict(a, b) for a in accesses for b in self.touched):
            self.sync()
        self.ops.append(op)
        self.touched.extend(accesses)

    def release(self, op: dict):
        if self.touched:
            self.sync()
        self.ops.append(op)

    def acquire(self, op: dict):
        self.ops.append(op)
        self.after_wait = True



def _local(buf: str, index: int, size: int) -> dict:
    return {"type": buf, "index": index, "size": size}


def to_plan(algo: Algo, *, num_threads_per_block: int = MAX_THREADS_PER_BLOCK) -> dict:
    """The MSCCL++ plan of an MSCCL program (module docstring, "Mapping"); PlanError when the program cannot be
    expressed (unknown collective or step type, sends and receives that do not match, a missing threadblock)."""
    coll = COLLECTIVES.get(algo.coll)
    if coll is None:
        raise PlanError(f"collective {algo.coll!r} has no MSCCL++ plan here (allgather, reduce_scatter, allreduce, "
                        "alltoall)")
    n = algo.ngpus
    gpus = sorted(algo.gpus, key=lambda g: g.id)
    if [g.id for g in gpus] != list(range(n)) or n < 1:
        raise PlanError(f"ngpus={n} but the gpu ids are {[g.id for g in gpus][:8]}")
    per = algo.nchunksperloop // n
    if per < 1 or per * n != algo.nchunksperloop:
        raise PlanError(f"nchunksperloop={algo.nchunksperloop} is not a positive multiple of ngpus={n}")
    i_chunks, o_chunks = _natural_chunks(coll, n, per)
    for g in gpus:
        if g.i_chunks not in (0, i_chunks) or g.o_chunks not in (0, o_chunks):
            raise PlanError(f"gpu {g.id}: buffers of {g.i_chunks}/{g.o_chunks} chunks, but a {coll} of "
                            f"{algo.nchunksperloop} chunks per loop has {i_chunks}/{o_chunks}")

    # match the k-th send with the k-th receive of every (sender, receiver, channel)
    sends, recvs = defaultdict(list), defaultdict(list)
    for g in gpus:
        tb_ids = sorted(t.id for t in g.tbs)
        if tb_ids != list(range(len(g.tbs))):
            raise PlanError(f"gpu {g.id}: threadblock ids {tb_ids[:8]} are not 0..{len(g.tbs) - 1}")
        for t in g.tbs:
            for k, st in enumerate(t.steps):
                if st.type not in SENDING_STEPS + RECEIVING_STEPS + ("cpy", "re", "nop"):
                    raise PlanError(f"gpu {g.id} tb {t.id} step {k}: step type {st.type!r} has no MSCCL++ mapping")
                if st.type in SENDING_STEPS:
                    if not (0 <= t.send < n) or t.send == g.id:
                        raise PlanError(f"gpu {g.id} tb {t.id} step {k}: sends but the send peer is {t.send}")
                    sends[(g.id, t.send, t.chan)].append((t.id, k, st.cnt))
                if st.type in RECEIVING_STEPS:
                    if not (0 <= t.recv < n) or t.recv == g.id:
                        raise PlanError(f"gpu {g.id} tb {t.id} step {k}: receives but the recv peer is {t.recv}")
                    recvs[(t.recv, g.id, t.chan)].append((t.id, k, st.cnt))
    for link in sorted(set(sends) | set(recvs)):
        a, b, c = link
        if len(sends[link]) != len(recvs[link]):
            raise PlanError(f"gpu {a} sends {len(sends[link])} message(s) to gpu {b} on channel {c} but gpu {b} "
                            f"receives {len(recvs[link])}")
        for (st, sk, scnt), (rt, rk, rcnt) in zip(sends[link], recvs[link]):
            if scnt != rcnt:
                raise PlanError(f"gpu {a} tb {st} step {sk} sends {scnt} chunk(s) to gpu {b} but the matching "
                                f"receive (tb {rt} step {rk}) takes {rcnt}")
    links = sorted(k for k, v in sends.items() if v)

    # landing slots in the receiver's scratch, after the program's own scratch
    scratch = {g.id: g.s_chunks for g in gpus}
    slot_of, send_msg, recv_msg = {}, {}, {}
    for link in links:
        a, b, _ = link
        for k, ((st, sk, cnt), (rt, rk, _)) in enumerate(zip(sends[link], recvs[link])):
            slot_of[(link, k)] = scratch[b]
            scratch[b] += cnt
            send_msg[(a, st, sk)] = (link, k)
            recv_msg[(b, rt, rk)] = (link, k)

    # one memory channel per directed link on both ends, in the same order on both
    def pair_order(link):
        a, b, c = link
        return (c, 0 if a < b else 1)

    channels = {}
    connected = {g.id: [] for g in gpus}
    for r in range(n):
        for p in range(n):
            if p == r:
                continue
            for link in sorted((lk for lk in links if {lk[0], lk[1]} == {r, p}), key=pair_order):
                channels[(r, link)] = len(connected[r])
                connected[r].append(p)
    remote_ids = {}
    for a in range(n):
        for b in sorted({lk[1] for lk in links if lk[0] == a}):
            remote_ids[(a, b)] = len([k for k in remote_ids if k[0] == a])

    # one semaphore per dependency edge
    sems = defaultdict(int)
    acquire_of, release_of = {}, defaultdict(list)
    for g in gpus:
        by_id = {t.id: t for t in g.tbs}
        for t in g.tbs:
            for k, st in enumerate(t.steps):
                if st.depid < 0:
                    continue
                other = by_id.get(st.depid)
                if other is None or other is t or not 0 <= st.deps < len(other.steps):
                    raise PlanError(f"gpu {g.id} tb {t.id} step {k}: depends on tb {st.depid} step {st.deps}, "
                                    "which does not exist")
                sid = sems[g.id]
                sems[g.id] += 1
                acquire_of[(g.id, t.id, k)] = sid
                release_of[(g.id, st.depid, st.deps)].append(sid)

    plan_gpus = []
    for g in gpus:
        r = g.id
        segments = []
        for t in sorted(g.tbs, key=lambda t: t.id):
            ops = _threadblock_ops(r, t, recv_msg, send_msg, slot_of, channels, remote_ids, acquire_of,
                                   release_of)
            for seg in _split(ops, lambda: _new_sem(sems, r)):
                segments.append(seg)
        threadblocks = [_finish(tid, seg) for tid, seg in enumerate(segments)]
        remote = [{"rank": b, "type": "s", "access_channel_types": ["memory"]}
                  for (a, b), _ in sorted(remote_ids.items(), key=lambda kv: kv[1]) if a == r]
        plan_gpus.append({
            "id": r, "input_chunks": i_chunks, "output_chunks": o_chunks, "scratch_chunks": scratch[r],
            "channels": [{"channel_type": "memory", "connected_to": connected[r]}] if connected[r] else [],
            "remote_buffers": remote,
            "semaphores": [{"init_value": 0} for _ in range(sems[r])],
            "threadblocks": threadblocks,
        })
    in_place = algo.inplace == 1 and algo.outofplace == 0
    return {
        "name": algo.name, "collective": coll, "protocol": "Simple", "inplace": in_place,
        "reuse_resources": False, "use_double_scratch_buffer": False, "buffer_alignment": 16,
        "num_threads_per_block": num_threads_per_block,
        "min_message_size": algo.min_bytes, "max_message_size": algo.max_bytes, "gpus": plan_gpus,
    }


def _new_sem(sems, r) -> int:
    sid = sems[r]
    sems[r] += 1
    return sid


def _threadblock_ops(r, t, recv_msg, send_msg, slot_of, channels, remote_ids, acquire_of, release_of) -> list:
    """The ops of MSCCL threadblock ``t`` of rank ``r``; channel ids and remote buffer ids are still the rank's
    (``_finish`` turns them into the threadblock's)."""
    b = _Builder()
    recv_link = next((recv_msg[(r, t.id, k)][0] for k in range(len(t.steps)) if (r, t.id, k) in recv_msg), None)
    send_link = next((send_msg[(r, t.id, k)][0] for k in range(len(t.steps)) if (r, t.id, k) in send_msg), None)
    if recv_link is not None:                      # "ready": the previous launch has finished with our slots
        b.release({"name": "signal", "channel_type": "memory", "_ch": [channels[(r, recv_link)]]})
    ready = False
    for k, st in enumerate(t.steps):
        if (r, t.id, k) in acquire_of:
            b.acquire({"name": "sem_acquire", "semaphore_ids": [acquire_of[(r, t.id, k)]]})
        kind, cnt = st.type, st.cnt
        forward = None
        if kind in RECEIVING_STEPS:
            link, m = recv_msg[(r, t.id, k)]
            slot = slot_of[(link, m)]
            b.acquire({"name": "wait", "channel_type": "memory", "_ch": [channels[(r, link)]]})
            landing = ((r, "s"), slot, slot + cnt, False)
            dst = ((r, st.dstbuf), st.dstoff, st.dstoff + cnt, True)
            mine = ((r, st.srcbuf), st.srcoff, st.srcoff + cnt, False)
            if kind in ("r", "rcs"):
                b.data({"name": "copy", "src_buff": [_local("s", slot, cnt)],
                        "dst_buff": [_local(st.dstbuf, st.dstoff, cnt)]}, [landing, dst])
                forward = ("s", slot)
            elif kind == "rrs":
                b.data({"name": "re", "reduce_op": "sum",
                        "src_buff": [_local(st.srcbuf, st.srcoff, cnt), _local("s", slot, cnt)],
                        "dst_buff": [_local("s", slot, cnt)]}, [mine, landing[:3] + (True,)])
                forward = ("s", slot)
            else:                                   # rrc, rrcs
                b.data({"name": "re", "reduce_op": "sum",
                        "src_buff": [_local(st.srcbuf, st.srcoff, cnt), _local("s", slot, cnt)],
                        "dst_buff": [_local(st.dstbuf, st.dstoff, cnt)]}, [mine, landing, dst])
                forward = (st.dstbuf, st.dstoff)
        elif kind == "cpy":
            b.data({"name": "copy", "src_buff": [_local(st.srcbuf, st.srcoff, cnt)],
                    "dst_buff": [_local(st.dstbuf, st.dstoff, cnt)]},
                   [((r, st.srcbuf), st.srcoff, st.srcoff + cnt, False),
                    ((r, st.dstbuf), st.dstoff, st.dstoff + cnt, True)])
        elif kind == "re":
            b.data({"name": "re", "reduce_op": "sum",
                    "src_buff": [_local(st.dstbuf, st.dstoff, cnt), _local(st.srcbuf, st.srcoff, cnt)],
                    "dst_buff": [_local(st.dstbuf, st.dstoff, cnt)]},
                   [((r, st.srcbuf), st.srcoff, st.srcoff + cnt, False),
                    ((r, st.dstbuf), st.dstoff, st.dstoff + cnt, True)])
        if kind in SENDING_STEPS:
            link, m = send_msg[(r, t.id, k)]
            peer, slot = link[1], slot_of[(link, m)]
            buf, off = (st.srcbuf, st.srcoff) if kind == "s" else forward
            if not ready:
                b.acquire({"name": "wait", "channel_type": "memory", "_ch": [channels[(r, send_link)]]})
                ready = True
            b.data({"name": "put", "channel_type": "memory", "src_buff": [_local(buf, off, cnt)],
                    "dst_buff": [{"_rb": remote_ids[(r, peer)], "index": slot, "size": cnt}]},
                   [((r, buf), off, off + cnt, False), ((peer, "s"), slot, slot + cnt, True)])
            b.release({"name": "signal", "channel_type": "memory", "_ch": [channels[(r, link)]]})
        sids = release_of.get((r, t.id, k), [])
        for i in range(0, len(sids), MAX_DEVICE_SEMAPHORES):
            b.release({"name": "sem_release", "semaphore_ids": sids[i:i + MAX_DEVICE_SEMAPHORES]})
    return b.ops


def _split(ops: list, new_sem) -> list:
    """Cut an op list into segments of at most MAX_OPERATION ops chained by semaphores."""
    segments, head = [], []
    while len(head) + len(ops) > MAX_OPERATION:
        room = MAX_OPERATION - len(head) - 2
        body, ops = ops[:room], ops[room:]
        sid = new_sem()
        tail = ([] if body[-1]["name"] == "nop" else [{"name": "nop"}]) + [{"name": "sem_release",
                                                                            "semaphore_ids": [sid]}]
        segments.append(head + body + tail)
        head = [{"name": "sem_acquire", "semaphore_ids": [sid]}]
        if not ops or ops[0]["name"] != "nop":
            head.append({"name": "nop"})
    segments.append(head + ops)
    return segments


def _finish(tid: int, ops: list) -> dict:
    """Threadblock ``tid``: its channel list and remote buffer refs, op ids made local to them."""
    chans, rbs, out = [], [], []
    for op in ops:
        op = dict(op)
        if "_ch" in op:
            ids = []
            for g in op.pop("_ch"):
                if g not in chans:
                    chans.append(g)
                ids.append(chans.index(g))
            op["channel_ids"] = ids
        if "dst_buff" in op:
            entries = []
            for e in op["dst_buff"]:
                if "_rb" in e:
                    e = dict(e)
                    g = e.pop("_rb")
                    if g not in rbs:
                        rbs.append(g)
                    e["buffer_id"] = rbs.index(g)
                entries.append(e)
            op["dst_buff"] = entries
        out.append(op)
    return {"id": tid, "ops": out,
            "channels": [{"channel_type": "memory", "channel_ids": chans}] if chans else [],
            "remote_buffer_refs": [{"access_channel_type": "memory", "remote_buffer_ids": rbs}] if rbs else []}


def plan_json(algo: Algo, **kwargs) -> str:
    """``to_plan`` as JSON text: keys sorted, lists in plan order, so the same program gives the same bytes."""
    return json.dumps(to_plan(algo, **kwargs), indent=1, sort_keys=True) + "\n"


@gc_paused()
def export_plan(topo, schedule, sm_budget: int = DEFAULT_SM_BUDGET, **lower_kwargs) -> tuple[str, PlanReport]:
    """Lower a verified schedule (``lower.lower``, keyword arguments passed on), write its plan and check it;
    PlanError naming the first problem rather than a plan that fails. Threadblocks over ``sm_budget`` are merged
    in send/receive pairs (``merge=True``) once before giving up. Switched fabrics are first turned into the
    GPU-to-GPU sends (as ``export`` does)."""
    from ..lower import _refuse_custom, lower, refuse_rooted

    lower_kwargs = dict(lower_kwargs)
    _refuse_custom(schedule)
    refuse_rooted(schedule, "mscclpp")
    if topo.switch_nodes:
        from ...core.switch_paths import network_view
        from ...core.verify import verify

        topo, schedule = network_view(topo, schedule)
        verify(topo, schedule).raise_if_failed()
    while True:
        text = plan_json(lower(topo, schedule, **lower_kwargs))
        report = check_plan(text, sm_budget)
        if report.ok:
            return text, report
        if report.max_threadblocks > sm_budget and not lower_kwargs.get("merge"):
            lower_kwargs["merge"] = True
            continue
        raise PlanError(f"the exported MSCCL++ plan fails its check: {report.first}")
