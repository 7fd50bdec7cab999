"""MSCCL++ execution plans: exporting the MSCCL program IR of ``program.py`` as the JSON plan the MSCCL++ executor
runs (``to_plan``, ``plan_json``), reading a plan back (``parse_plan``) and checking one (``check_plan``: the
executor parser's rules, then a symbolic run with the collective's postcondition).

Format targeted
---------------
The execution plan that ``mscclpp::ExecutionPlan`` loads since microsoft/mscclpp PR #538 ("Change executor to
load new execution plan", 2025): snake_case keys, channel types ``memory``/``port``/``switch`` and remote buffers
named per GPU. The older plan (``inputChunks``, ``chunkGroups``, ``ctype``/``cids``, ``i_cids``/``o_cids``,
channel types ``sm``/``proxy``/``nvls``), which msccl-tools' ``ir_to_json`` writes, is not produced or read.
Facts used, each pinned:

- [P] microsoft/mscclpp src/executor/execution_plan.cc @ 008fbad41a2f3ff6cc08743d2e8332ba2dc9ca99 (the parser):
  top-level ``name``, ``collective``, ``protocol`` ("LL" means packets), ``inplace`` (a JSON bool) and ``gpus``
  are read unconditionally; ``num_threads_per_block`` (1024), ``min_message_size`` (0), ``max_message_size``
  (2^64-1), ``reuse_resources``, ``use_double_scratch_buffer``, ``buffer_alignment`` (16) have defaults. Rank r
  loads ``gpus[r]`` and throws "GPU rank does not match" unless its ``id`` is r; it reads ``input_chunks``,
  ``output_chunks``, ``scratch_chunks``, ``channels`` (``channel_type`` + ``connected_to``, or for ``switch``
  ``buffer_type`` + ``rank_groups``), ``remote_buffers`` (``rank`` = owner, ``type``, ``access_channel_types``),
  optional ``semaphores`` (``init_value``) and ``threadblocks`` (``id``, ``ops``, ``channels`` with
  ``channel_type`` + ``channel_ids`` indexing the rank's channels of that type in file order, optional
  ``remote_buffer_refs`` with ``access_channel_type`` + ``remote_buffer_ids``). Threadblock arrays are sized by the
  number of threadblocks and indexed by ``id``, while operations are stored in list order, so ids must be 0..n-1
  in order. An op has ``name`` (``getOpType``: nop, barrier, put, pws, pwsf, get, copy, signal, wait, flush, re,
  res, rre, rres, ppkt, rppkt, respkt, cpkt, upkt, repkt, recpkt, recspkt, glres, rlxsignal, rlxwait, pipeline,
  sem_acquire, sem_release; anything else throws "Invalid operation type"), optional ``channel_type``,
  ``channel_ids`` (indices into the threadblock's channels of that type), ``src_buff``/``dst_buff`` (entries
  ``{"type", "index", "size"}`` for a local buffer, ``{"buffer_id", "index", "size"}`` for a remote one, the id
  indexing the threadblock's ``remote_buffer_refs`` of the op's channel type; any other channel type throws),
  ``barrier_id``/``num_threadblocks``, ``semaphore_ids``, ``tbg_info``, ``iter_context``. Buffer names are ``i``,
  ``o``, ``s``; channel types ``memory``, ``port``, ``none``, ``switch``. ``checkMessageSize`` takes the sizes
  modulo ``input_chunks`` and ``output_chunks`` (so neither may be 0) and ``getSizeAndChunks`` throws when the
  two give different chunk sizes; every buffer, scratch included, is cut in chunks of that one size.
- [C] src/include/execution_common.hpp @ 008fbad: MAX_CHANNEL 16 (memory, port and switch channels and remote
  buffers a threadblock may reference, fixed arrays filled without a bounds check), MAX_CHANNEL_PER_OPERATION 8
  (channel ids and buffer entries per op), MAX_OPERATION 64 (ops per threadblock), MAX_DEVICE_SYNCERS 16
  (barrier ids), MAX_DEVICE_SEMAPHORES 16 (semaphore ids per op).
- [E] src/executor/executor.cc @ 007fa10b79afdb0332a625ad8b9de10d278dc781: ``setupDeviceExecutionPlan`` throws
  when a threadblock has more than MAX_OPERATION ops; ``setupChannels`` builds one semaphore per listed channel,
  per type (memory, then port), in file order over each connection, plus "unpaired" ones where the peer lists
  more, so the k-th channel of a type from rank a to rank b is paired with the k-th of that type from b to a;
  ``setupSemaphores`` makes one ``DeviceSemaphore(init_value)`` per entry of ``semaphores``, once per context
  (not per launch).
- [K] src/include/execution_kernel.hpp @ 008fbad (the kernel): ops run in list order with no barrier between
  them; ``nop`` is ``__syncthreads()``; ``signal``/``wait``/``sem_release``/``sem_acquire`` are done by threads
  ``tid < n`` only; a memory-channel ``put`` copies with all threads straight into the peer's registered buffer
  (``memoryChannelBufferPtrs_[buffer_id]``, no channel used) and ignores the signal of ``pws``/``pwsf``; ``copy``
  copies ``src_buff[0]`` to ``dst_buff[0]``; ``re`` writes ``src_buff[0] + src_buff[1] + ...`` to ``dst_buff[0]``
  (``res`` also to the remote ``dst_buff[1:]``, ``rre``/``rres`` read remote ``src_buff[1:]``), reading every
  input over ``src_buff[0]``'s size; ``get`` reads the remote buffer at the *destination* entry's index and writes the
  local one at the *source* entry's index (so this checker simulates it only when the two indices agree).
- [D] the DSL writer: python/mscclpp/language/program.py @ 011094ce26936e685f4d0dd18cbab4d2d0a24f18 (top-level
  keys; ``validate_signal_wait_pairing``: signals from a to b must equal b's waits for a, per channel type),
  internal/gpu.py @ 04ab152c6e08af9b516ec327341931d5d4ff2d14 and internal/threadblock.py @
  05164af8b06b70de4a9d16450d9324a45c26816e (GPU and threadblock keys), internal/operations.py @ 008fbad (op
  dictionaries; a memory ``put`` carries no ``channel_ids``; ``add_data_sync`` puts a ``nop`` before and after
  every signal, wait, semaphore and flush), internal/types.py @ 04ab152c (names), channel.py @
  02eb2cfc2e8bf7fa9f630c31d69c83ec90bcae65 (a put registers the *receiver's* buffer as a remote buffer of the
  sender).
- Semaphores: ``DeviceSemaphore`` in include/mscclpp/concurrency_device.hpp is a counting semaphore (acquire
  takes one release); the index holds that version without a pinnable commit. The channel semaphore keeps all
  its counters behind pointers (include/mscclpp/semaphore_device.hpp @ 0217f354ef54269c73c4fa8065020e3ae9bd360d,
  then named SmDevice2DeviceSemaphore), so threadblocks that share a channel share its counters.
- Older format, for reference only: test/execution-files/allreduce.json @ 226b44b94211ebc80aa123c9817cad9fa0652739
  and Azure/msccl-tools msccl/language/mscclpp/ir.py @ 02c2a469c4b16d4ea6e11324afa7846f1b2b4b71.

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

Checks (``check_plan``)
-----------------------
Structure, from [P]/[C]/[E]: required keys and their JSON types, known op, buffer and channel type names,
``gpus[k].id == k`` and threadblock ids 0..n-1 in order, non-zero ``input_chunks``/``output_chunks``, channel
peers and remote buffer owners that are other ranks, every threadblock channel id inside the rank's channels of
that type, every op channel id inside the threadblock's channels of the op's ``channel_type`` (so the channel
type matches the op's), every ``buffer_id`` inside the threadblock's remote buffer refs of that type and naming a
buffer listed with that access type, semaphore and barrier ids in range, chunk ranges inside the buffer they
name (the owner's, for a remote one), and the limits 16/8/64/16/16 above. The op shapes the kernel assumes [K]
(local and remote entries in the right places, equal sizes) and the intra-threadblock ``nop`` rules of the DSL
[D] are checked too, and at most ``sm_budget`` threadblocks per rank (they spin on each other, so all must be
resident at once).

Then a symbolic run (as ``check.simulate`` does for MSCCL), twice in a row as repeated calls run it: a chunk is
(input chunk index, mask of contributing ranks, counted twice) and reduces with ``check._plus``;
``signal``/``wait`` pair per channel in order (the k-th wait takes the k-th signal of the paired channel, [E]),
semaphores count, barriers gather ``num_threadblocks``. Happens-before is tracked with vector clocks (a rank's
second launch starts after all of its first), so a read of data whose write is not ordered before it by a
signal/wait, semaphore or barrier (a missing ``wait``, say), or an overwrite of data not yet read, is reported as
a race however the run is scheduled; the scratch buffers, channel counters and semaphores carry over into the
second launch, the input and output buffers are filled afresh. A run that stops with threadblocks left is a
deadlock; signals never waited for and semaphores not back at their initial value are reported (both persist
into the next launch); an out-of-place plan must not write its input; after each launch the buffers must hold the
collective (``check._postcondition``). Packet ops, ``glres``, ``pipeline``, ``pwsf``, ``tbg_info`` and NVLS
buffers are accepted by the structure check but not simulated (the report says so and is not ok). Port-channel
copies are simulated as if done when issued. Not checked: message sizes against ``buffer_alignment`` and the
chunk counts (known only at call time), and anything about the GPUs' memory model beyond the ordering above.
"""
from __future__ import annotations

import json
from collections import defaultdict, deque
from dataclasses import dataclass, field

from ..core.gc_pause import gc_paused
from .check import _plus, _postcondition
from .program import DEFAULT_SM_BUDGET, RECEIVING_STEPS, SENDING_STEPS, Algo, XmlError

FORMAT = "MSCCL++ execution plan, microsoft/mscclpp@008fbad41a2f3ff6cc08743d2e8332ba2dc9ca99"
MAX_PLAN_BYTES = 64 << 20          # parse_plan refuses larger texts
MAX_CHANNEL = 16                   # [C]
MAX_CHANNEL_PER_OPERATION = 8      # [C]
MAX_OPERATION = 64                 # [C], enforced by executor.cc [E]
MAX_DEVICE_SYNCERS = 16            # [C]
MAX_DEVICE_SEMAPHORES = 16         # [C]
MAX_THREADS_PER_BLOCK = 1024       # the kernel's __launch_bounds__(1024, 1) [K]
OP_NAMES = frozenset({"nop", "barrier", "put", "pws", "pwsf", "get", "copy", "signal", "wait", "flush", "re", "res",
                      "rre", "rres", "ppkt", "rppkt", "respkt", "cpkt", "upkt", "repkt", "recpkt", "recspkt",
                      "glres", "rlxsignal", "rlxwait", "pipeline", "sem_acquire", "sem_release"})
BUFFER_TYPES = ("i", "o", "s")
CHANNEL_TYPES = ("memory", "port", "none", "switch")
COLLECTIVES = {"allgather": "allgather", "reduce_scatter": "reducescatter", "reducescatter": "reducescatter",
               "allreduce": "allreduce", "alltoall": "alltoall"}
_SIGNALS = ("signal", "rlxsignal")
_WAITS = ("wait", "rlxwait")
_DATA = ("put", "pws", "get", "copy", "re", "res", "rre", "rres")
_SIMULATED = frozenset(_DATA) | {"nop", "barrier", "signal", "wait", "rlxsignal", "rlxwait", "flush", "sem_acquire",
                                 "sem_release"}


class PlanError(XmlError):
    """A plan that cannot be read or written; the message (one line) names why."""


@dataclass
class PlanReport:
    """What ``check_plan`` found. ``threadblocks[r]`` is rank r's threadblock count and
    ``ops_per_threadblock[r][t]`` the ops of its threadblock t (as far as the plan could be read)."""

    ok: bool
    problems: list[str]
    ngpus: int = 0
    threadblocks: list[int] = field(default_factory=list)
    ops_per_threadblock: list[list[int]] = field(default_factory=list)

    @property
    def first(self) -> str:
        return self.problems[0] if self.problems else "ok"

    @property
    def max_threadblocks(self) -> int:
        return max(self.threadblocks, default=0)

    @property
    def max_ops(self) -> int:
        return max((n for tbs in self.ops_per_threadblock for n in tbs), default=0)


# ================================================================================================ export
def _natural_chunks(coll: str, n: int, per: int) -> tuple[int, int]:
    return {"allgather": (per, n * per), "reducescatter": (n * per, per)}.get(coll, (n * per, n * per))


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


def _conflict(a: tuple, b: tuple) -> bool:
    """Two accesses (key, first, end, writes) overlap and one of them writes."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and (a[3] or b[3])


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
    from .lower import _refuse_custom, lower

    lower_kwargs = dict(lower_kwargs)
    _refuse_custom(schedule)
    if topo.switch_nodes:
        from ..core.switch_paths import network_view
        from ..core.verify import verify

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


# ================================================================================================ reading
def _reject_constant(name):
    raise PlanError(f"not JSON: {name} is not a JSON number")


def parse_plan(text) -> dict:
    """The plan object of a JSON text (str or UTF-8 bytes, at most MAX_PLAN_BYTES); PlanError with a one-line
    reason for anything else. JSON only: nothing in the text is evaluated."""
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_PLAN_BYTES:
            raise PlanError(f"the plan is {len(text)} bytes, over the {MAX_PLAN_BYTES} this reader accepts")
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PlanError(f"not UTF-8 text: byte {exc.start} cannot be decoded") from None
    if not isinstance(text, str):
        raise PlanError(f"a plan is JSON text, not {type(text).__name__}")
    if len(text) > MAX_PLAN_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_PLAN_BYTES:
        raise PlanError(f"the plan is over the {MAX_PLAN_BYTES} bytes this reader accepts")
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise PlanError(f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise PlanError("not JSON this reader accepts: nested too deeply") from None
    if not isinstance(obj, dict):
        raise PlanError(f"a plan is a JSON object, this text holds a JSON {type(obj).__name__}")
    return obj


# ================================================================================================ checking
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass
class _Ref:
    rank: int
    buf: str
    index: int
    size: int
    remote: bool


@dataclass
class _Op:
    name: str
    where: str
    chans: list = field(default_factory=list)        # the rank's channel indices of the op's type
    ctype: str = ""
    srcs: list = field(default_factory=list)
    dsts: list = field(default_factory=list)
    sems: list = field(default_factory=list)
    barrier: tuple | None = None
    unsupported: str = ""


@dataclass
class _Model:
    n: int
    coll: str
    in_place: bool
    chunks: list            # per rank: {"i": .., "o": .., "s": ..}
    chans: list             # per rank: {ctype: [peer, ...]}
    sem_init: list          # per rank: [init values]
    tbs: list               # per rank: [[_Op, ...], ...]


@gc_paused()
def check_plan(text, sm_budget: int = DEFAULT_SM_BUDGET) -> PlanReport:
    """Check a plan (JSON text, bytes or an already parsed dict): the executor parser's rules and limits, then
    the symbolic run (module docstring, "Checks"). Never raises for a bad plan: the report lists the problems,
    first one first."""
    try:
        plan = text if isinstance(text, dict) else parse_plan(text)
    except PlanError as exc:
        return PlanReport(False, [str(exc)])
    gpus = plan.get("gpus") if isinstance(plan.get("gpus"), list) else []
    tbs = [g.get("threadblocks") if isinstance(g, dict) and isinstance(g.get("threadblocks"), list) else []
           for g in gpus]
    shape = dict(ngpus=len(gpus), threadblocks=[len(t) for t in tbs],
                 ops_per_threadblock=[[len(tb["ops"]) if isinstance(tb, dict) and isinstance(tb.get("ops"), list)
                                       else 0 for tb in t] for t in tbs])
    problems, model = _validate(plan, sm_budget)
    if not problems:
        problems = _simulate(model)
    return PlanReport(not problems, problems, **shape)


def _validate(plan: dict, sm_budget: int):
    """Structural rules ([P], [C], [E], [K], [D]); (problems, model of the plan when there are none)."""
    errs: list[str] = []
    for key, kind in (("name", str), ("collective", str), ("protocol", str), ("inplace", bool), ("gpus", list)):
        if key not in plan:
            errs.append(f'missing key "{key}" (the executor reads it unconditionally)')
        elif not isinstance(plan[key], kind):
            errs.append(f'"{key}" must be a JSON {_kind(kind)}, not {_jtype(plan[key])}')
    if errs:
        return errs, None
    if plan["protocol"] not in ("Simple", "LL"):
        errs.append(f'protocol "{plan["protocol"]}" is neither "Simple" nor "LL" (the DSL writes only these)')
    for key, lo, hi in (("num_threads_per_block", 1, MAX_THREADS_PER_BLOCK), ("min_message_size", 0, 2 ** 64 - 1),
                        ("max_message_size", 0, 2 ** 64 - 1), ("buffer_alignment", 1, 2 ** 32)):
        if key in plan and not (_is_int(plan[key]) and lo <= plan[key] <= hi):
            errs.append(f'"{key}" must be an integer in {lo}..{hi}, not {plan[key]!r}')
    smallest, largest = plan.get("min_message_size", 0), plan.get("max_message_size", 2 ** 64 - 1)
    if _is_int(smallest) and _is_int(largest) and smallest > largest:
        errs.append("min_message_size is above max_message_size: no message size selects the plan")
    for key in ("reuse_resources", "use_double_scratch_buffer"):
        if key in plan and not isinstance(plan[key], bool):
            errs.append(f'"{key}" must be a JSON bool, not {_jtype(plan[key])}')
    gpus = plan["gpus"]
    n = len(gpus)
    if n == 0:
        errs.append('"gpus" is empty')
        return errs, None
    chunks, chans, remotes, sem_init, nvls = [], [], [], [], []
    for r, g in enumerate(gpus):
        where = f"gpu {r}"
        if not isinstance(g, dict):
            errs.append(f"{where}: must be a JSON object")
            chunks.append({})
            chans.append({})
            remotes.append([])
            sem_init.append([])
            nvls.append(0)
            continue
        if "inputChunks" in g or "chunkGroups" in g:
            errs.append(f"{where}: written in the older plan format (inputChunks, chunkGroups, ctype/cids), which "
                        "the executor no longer reads; it reads input_chunks, remote_buffers, channel_type/channel_ids")
            return errs, None
        for key in ("id", "input_chunks", "output_chunks", "scratch_chunks", "threadblocks", "channels",
                    "remote_buffers"):
            if key not in g:
                errs.append(f'{where}: missing key "{key}"')
        if "id" in g and g["id"] != r:
            errs.append(f"{where}: gpus[{r}] has id {g.get('id')!r}; rank {r} loads gpus[{r}] and the executor "
                        'throws "GPU rank does not match"')
        sizes = {}
        for key, buf in (("input_chunks", "i"), ("output_chunks", "o"), ("scratch_chunks", "s")):
            v = g.get(key, 0)
            if not (_is_int(v) and v >= 0):
                errs.append(f'{where}: "{key}" must be a non-negative integer, not {v!r}')
                v = 0
            sizes[buf] = v
        for key, buf in (("input_chunks", "i"), ("output_chunks", "o")):
            if key in g and sizes[buf] == 0:
                errs.append(f"{where}: {key} is 0; the executor's checkMessageSize takes the buffer size modulo "
                            f"{key} (give the collective's chunk count even when the plan does not use the buffer)")
        chunks.append(sizes)
        by_type, groups = defaultdict(list), 0
        channels = _optional_list(g, "channels", where, errs)
        for ci, ch in enumerate(channels):
            at = f"{where} channels[{ci}]"
            ctype = ch.get("channel_type") if isinstance(ch, dict) else None
            if ctype not in CHANNEL_TYPES:
                errs.append(f'{at}: channel_type {ctype!r} is not one of {", ".join(CHANNEL_TYPES)} '
                            '(the executor throws "Invalid channel type")')
                continue
            if ctype == "switch":
                if ch.get("buffer_type") not in BUFFER_TYPES:
                    errs.append(f"{at}: switch channel buffer_type {ch.get('buffer_type')!r} is not i, o or s")
                rgs = ch.get("rank_groups")
                if not isinstance(rgs, list) or not all(
                        isinstance(x, dict) and _is_int(x.get("size")) and isinstance(x.get("ranks"), list)
                        and all(_is_int(y) and 0 <= y < n for y in x["ranks"]) for x in rgs):
                    errs.append(f"{at}: rank_groups must be a list of {{size, ranks}} with ranks 0..{n - 1}")
                else:
                    groups += len(rgs)
                continue
            peers = ch.get("connected_to")
            if not isinstance(peers, list):
                errs.append(f"{at}: missing the connected_to list")
                continue
            for p in peers:
                if not (_is_int(p) and 0 <= p < n) or p == r:
                    errs.append(f"{at}: connected_to {p!r} is not another rank (0..{n - 1}, not {r})")
                elif ctype != "none":
                    by_type[ctype].append(p)
        chans.append(dict(by_type))
        nvls.append(groups)
        rbs = []
        remote_list = _optional_list(g, "remote_buffers", where, errs)
        for bi, rb in enumerate(remote_list):
            at = f"{where} remote_buffers[{bi}]"
            if not isinstance(rb, dict):
                errs.append(f"{at}: must be a JSON object")
                rbs.append(None)
                continue
            owner, btype, access = rb.get("rank"), rb.get("type"), rb.get("access_channel_types")
            if not (_is_int(owner) and 0 <= owner < n) or owner == r:
                errs.append(f"{at}: rank {owner!r} is not another rank (0..{n - 1}, not {r})")
                owner = None
            if btype not in BUFFER_TYPES:
                errs.append(f"{at}: type {btype!r} is not i, o or s")
                owner = None
            if not (isinstance(access, list) and access and all(a in ("memory", "port") for a in access)):
                errs.append(f"{at}: access_channel_types must list memory and/or port")
                access = []
            rbs.append(None if owner is None else (owner, btype, tuple(access)))
        remotes.append(rbs)
        init = []
        sem_list = _optional_list(g, "semaphores", where, errs)
        for si, sem in enumerate(sem_list):
            v = sem.get("init_value") if isinstance(sem, dict) else None
            if not (_is_int(v) and v >= 0):
                errs.append(f"{where} semaphores[{si}]: init_value must be a non-negative integer, not {v!r}")
                v = 0
            init.append(v)
        sem_init.append(init)
    if errs:
        return errs, None
    tbs_model = []
    for r, g in enumerate(gpus):
        tbs = g["threadblocks"]
        if not isinstance(tbs, list):
            errs.append(f'gpu {r}: "threadblocks" must be a list')
            continue
        if len(tbs) > sm_budget:
            errs.append(f"gpu {r}: {len(tbs)} threadblocks, above the budget of {sm_budget} co-resident blocks "
                        "(the plan's blocks spin on each other, so all must be resident at once)")
        rank_tbs = []
        for ti, tb in enumerate(tbs):
            rank_tbs.append(_validate_tb(r, ti, tb, n, len(tbs), chunks, chans[r], remotes, sem_init[r], nvls[r],
                                         errs))
        tbs_model.append(rank_tbs)
    if errs:
        return errs, None
    for r, rank_tbs in enumerate(tbs_model):
        for ops in rank_tbs:
            err = _sync_rule(ops)
            if err:
                return [err], None
    return [], _Model(n, plan["collective"], plan["inplace"], chunks, chans, sem_init, tbs_model)


def _kind(kind) -> str:
    return {str: "string", bool: "bool", list: "list", int: "integer", dict: "object"}[kind]


def _jtype(v) -> str:
    if v is None:
        return "null"
    return {bool: "bool", int: "integer", float: "number", str: "string", list: "list", dict: "object"}.get(
        type(v), type(v).__name__)


def _optional_list(obj: dict, key: str, where: str, errs: list) -> list:
    """``obj[key]`` when it is a list, [] when it is missing; anything else is a problem (and reads as [])."""
    value = obj.get(key, [])
    if isinstance(value, list):
        return value
    errs.append(f'{where}: "{key}" must be a list')
    return []


def _validate_tb(r, ti, tb, n, ntbs, chunks, rank_chans, remotes, sem_init, nvls, errs) -> list:
    where = f"gpu {r} tb {ti}"
    if not isinstance(tb, dict):
        errs.append(f"{where}: must be a JSON object")
        return []
    for key in ("id", "ops", "channels"):
        if key not in tb:
            errs.append(f'{where}: missing key "{key}"')
    if "id" in tb and tb["id"] != ti:
        errs.append(f"{where}: threadblocks[{ti}] has id {tb['id']!r}; the executor indexes channel tables by id "
                    "but keeps ops in list order, so ids must be 0, 1, 2, ... in order")
    tb_chans = defaultdict(list)
    for ci, ch in enumerate(tb.get("channels", []) if isinstance(tb.get("channels"), list) else [None]):
        ctype = ch.get("channel_type") if isinstance(ch, dict) else None
        ids = ch.get("channel_ids") if isinstance(ch, dict) else None
        if ctype not in CHANNEL_TYPES or not isinstance(ids, list):
            errs.append(f"{where} channels[{ci}]: needs a channel_type ({', '.join(CHANNEL_TYPES)}) and a "
                        "channel_ids list")
            continue
        count = nvls if ctype == "switch" else len(rank_chans.get(ctype, []))
        for cid in ids:
            if not (_is_int(cid) and 0 <= cid < count):
                errs.append(f"{where}: {ctype} channel id {cid!r} is out of range (gpu {r} has {count} {ctype} "
                            "channel(s))")
            elif ctype != "none":
                tb_chans[ctype].append(cid)
    tb_rbs = defaultdict(list)
    refs = tb.get("remote_buffer_refs", [])
    for ri, ref in enumerate(refs if isinstance(refs, list) else [None]):
        atype = ref.get("access_channel_type") if isinstance(ref, dict) else None
        ids = ref.get("remote_buffer_ids") if isinstance(ref, dict) else None
        if atype not in ("memory", "port") or not isinstance(ids, list):
            errs.append(f"{where} remote_buffer_refs[{ri}]: needs access_channel_type memory or port and a "
                        "remote_buffer_ids list")
            continue
        for bid in ids:
            if not (_is_int(bid) and 0 <= bid < len(remotes[r])):
                errs.append(f"{where}: remote buffer id {bid!r} is out of range (gpu {r} has {len(remotes[r])})")
            elif atype not in remotes[r][bid][2]:
                errs.append(f"{where}: remote buffer {bid} is not listed with access type {atype} on gpu {r} (the "
                            "executor would hand the threadblock another buffer)")
            else:
                tb_rbs[atype].append(remotes[r][bid])
    for ctype, lst in list(tb_chans.items()) + list(tb_rbs.items()):
        if len(lst) > MAX_CHANNEL:
            errs.append(f"{where}: {len(lst)} {ctype} entries, above the MAX_CHANNEL={MAX_CHANNEL} slots of a "
                        "threadblock's device plan")
    ops_raw = tb.get("ops", [])
    if not isinstance(ops_raw, list):
        errs.append(f'{where}: "ops" must be a list')
        return []
    flat = []
    for op in ops_raw:
        flat.append(op)
        if isinstance(op, dict) and op.get("name") == "pipeline" and isinstance(op.get("ops"), list):
            flat.extend(op["ops"])
    if len(flat) > MAX_OPERATION:
        errs.append(f"{where}: {len(flat)} ops, {len(flat) - MAX_OPERATION} above the executor's MAX_OPERATION="
                    f"{MAX_OPERATION} per threadblock")
    model = []
    for k, op in enumerate(flat):
        model.append(_validate_op(f"{where} op {k}", op, r, n, ntbs, chunks, rank_chans, tb_chans, tb_rbs,
                                  sem_init, errs))
    return model


def _validate_op(at, op, r, n, ntbs, chunks, rank_chans, tb_chans, tb_rbs, sem_init, errs) -> _Op:
    if not isinstance(op, dict) or "name" not in op:
        errs.append(f"{at}: an op must be a JSON object with a name")
        return _Op("?", at)
    name = op["name"]
    if not isinstance(name, str) or name not in OP_NAMES:
        errs.append(f'{at}: unknown operation type {name!r} (the executor throws "Invalid operation type")')
        return _Op(str(name), at)
    m = _Op(name, f"{at} ({name})")
    ctype = op.get("channel_type", "none")
    if ctype not in CHANNEL_TYPES:
        errs.append(f"{m.where}: channel_type {ctype!r} is not one of {', '.join(CHANNEL_TYPES)}")
        return m
    m.ctype = ctype
    ids = op.get("channel_ids", [])
    if not isinstance(ids, list) or len(ids) > MAX_CHANNEL_PER_OPERATION:
        errs.append(f"{m.where}: channel_ids must be a list of at most {MAX_CHANNEL_PER_OPERATION}")
        ids = []
    for cid in ids:
        mine = tb_chans.get(ctype, [])
        if not (_is_int(cid) and 0 <= cid < len(mine)):
            errs.append(f"{m.where}: channel id {cid!r} is not one of the threadblock's {len(mine)} {ctype} "
                        "channel(s)")
        else:
            m.chans.append(mine[cid])
    for key, into in (("src_buff", m.srcs), ("dst_buff", m.dsts)):
        entries = op.get(key, [])
        if not isinstance(entries, list) or len(entries) > MAX_CHANNEL_PER_OPERATION:
            errs.append(f"{m.where}: {key} must be a list of at most {MAX_CHANNEL_PER_OPERATION} entries")
            continue
        for e in entries:
            ref = _validate_ref(f"{m.where} {key}", e, r, ctype, chunks, tb_rbs, errs)
            if ref is None:
                m.unsupported = m.unsupported or "NVLS (switch) buffer entries"
            elif ref is not False:
                into.append(ref)
    sems = op.get("semaphore_ids", [])
    if not isinstance(sems, list) or len(sems) > MAX_DEVICE_SEMAPHORES:
        errs.append(f"{m.where}: semaphore_ids must be a list of at most {MAX_DEVICE_SEMAPHORES}")
        sems = []
    for s in sems:
        if not (_is_int(s) and 0 <= s < len(sem_init)):
            errs.append(f"{m.where}: semaphore id {s!r} is out of range (gpu {r} has {len(sem_init)})")
        else:
            m.sems.append(s)
    if "tbg_info" in op:
        m.unsupported = "threadblock groups (tbg_info)"
    if name not in _SIMULATED:
        m.unsupported = m.unsupported or f"the {name} op"
    if name == "get" and any(s.index != d.index for s, d in zip(m.srcs, m.dsts)):
        m.unsupported = "get with different source and destination indices (the kernel swaps them)"
    _shape(m, op, n, ntbs, ids, sems, rank_chans.get(ctype, []), errs)
    return m


def _validate_ref(at, e, r, ctype, chunks, tb_rbs, errs):
    """A resolved buffer entry, False when broken (problem recorded), None for a switch-channel entry."""
    if not isinstance(e, dict) or not (_is_int(e.get("index")) and e["index"] >= 0
                                       and _is_int(e.get("size")) and e["size"] >= 0):
        errs.append(f"{at}: an entry needs non-negative integer index and size")
        return False
    if "switch_channel_id" in e:
        return None
    if "buffer_id" in e:
        if ctype not in ("memory", "port"):
            errs.append(f"{at}: a remote entry (buffer_id) needs the op's channel_type memory or port, not "
                        f'{ctype} (the executor throws "Invalid channel type")')
            return False
        refs = tb_rbs.get(ctype, [])
        bid = e["buffer_id"]
        if not (_is_int(bid) and 0 <= bid < len(refs)):
            errs.append(f"{at}: buffer_id {bid!r} is not one of the threadblock's {len(refs)} {ctype} remote "
                        "buffer(s)")
            return False
        owner, btype, _ = refs[bid]
        ref = _Ref(owner, btype, e["index"], e["size"], True)
    elif e.get("type") in BUFFER_TYPES:
        ref = _Ref(r, e["type"], e["index"], e["size"], False)
    else:
        errs.append(f"{at}: an entry names no buffer (type i, o or s, or a buffer_id), got {e.get('type')!r}")
        return False
    have = chunks[ref.rank].get(ref.buf, 0)
    if ref.index + ref.size > have:
        errs.append(f"{at}: chunks {ref.index}..{ref.index + ref.size - 1} of gpu {ref.rank} buffer {ref.buf} "
                    f"are outside its {have} chunk(s)")
        return False
    return ref


def _shape(m: _Op, op: dict, n, ntbs, ids, sems, peers, errs):
    """The operand shapes the kernel assumes for each op [K]; ``peers`` are the rank's channel peers of the
    op's channel type."""
    name, loc = m.name, m.where

    def local(refs):
        return all(not x.remote for x in refs)

    if name in _SIGNALS + _WAITS + ("flush",):
        if m.ctype not in ("memory", "port") or not ids:
            errs.append(f"{loc}: needs channel_type memory or port and at least one channel id (without them the "
                        "kernel does nothing)")
        elif len(set(m.chans)) != len(m.chans):
            errs.append(f"{loc}: names one channel twice; two threads would update its counters at once")
        if name == "flush" and m.ctype != "port":
            errs.append(f"{loc}: flush works on port channels only")
    elif name in ("put", "pws", "pwsf"):
        if m.ctype not in ("memory", "port"):
            errs.append(f"{loc}: a put needs channel_type memory or port")
        elif not m.srcs or len(m.srcs) != len(m.dsts) or not local(m.srcs) or not all(d.remote for d in m.dsts):
            errs.append(f"{loc}: a put copies local src_buff[i] to remote dst_buff[i] (buffer_id), in equal numbers")
        elif any(s.size != d.size for s, d in zip(m.srcs, m.dsts)) or len({s.buf for s in m.srcs}) > 1:
            errs.append(f"{loc}: every source must match its destination's size and share src_buff[0]'s buffer "
                        "(the kernel takes the source buffer from the first entry)")
        elif m.ctype == "port" and len(m.chans) != len(m.dsts):
            errs.append(f"{loc}: a port put needs one channel id per destination")
        elif m.ctype == "port" and any(peers[g] != d.rank for g, d in zip(m.chans, m.dsts)):
            errs.append(f"{loc}: a port put's channel must lead to the rank that owns its destination buffer")
    elif name == "get":
        if m.ctype != "memory" or not m.srcs or len(m.srcs) != len(m.dsts) or not local(m.dsts) \
                or not all(s.remote for s in m.srcs) or any(s.size != d.size for s, d in zip(m.srcs, m.dsts)):
            errs.append(f"{loc}: a get reads remote src_buff[i] (memory channel) into local dst_buff[i] of equal size")
    elif name == "copy":
        if len(m.srcs) != 1 or len(m.dsts) != 1 or not local(m.srcs + m.dsts) or m.srcs[0].size != m.dsts[0].size:
            errs.append(f"{loc}: a copy takes one local source and one local destination of equal size")
    elif name in ("re", "res", "rre", "rres"):
        remote_in, remote_out = name in ("rre", "rres"), name in ("res", "rres")
        ok = (len(m.srcs) >= 1 and len(m.dsts) >= 1 and not m.srcs[0].remote and not m.dsts[0].remote
              and all(x.remote == remote_in for x in m.srcs[1:]) and all(x.remote == remote_out for x in m.dsts[1:])
              and all(x.size == m.srcs[0].size for x in m.srcs + m.dsts)
              and (name == "re" or len(m.dsts) == 1 or m.ctype == "memory")
              and (not remote_in or m.ctype == "memory")
              and (remote_out or len(m.dsts) == 1))
        if not ok:
            errs.append(f"{loc}: {name} reduces src_buff[0] with src_buff[1:] ({'remote' if remote_in else 'local'}) "
                        f"into local dst_buff[0]{' and remote dst_buff[1:]' if remote_out else ''}, all of one size")
    elif name == "barrier":
        bid, count = op.get("barrier_id"), op.get("num_threadblocks")
        if not (_is_int(bid) and 0 <= bid < MAX_DEVICE_SYNCERS):
            errs.append(f"{loc}: barrier_id {bid!r} is outside 0..{MAX_DEVICE_SYNCERS - 1}")
        elif not (_is_int(count) and 1 <= count <= ntbs):
            errs.append(f"{loc}: num_threadblocks {count!r} is not 1..{ntbs}")
        else:
            m.barrier = (bid, count)
    elif name in ("sem_acquire", "sem_release"):
        if not sems:
            errs.append(f"{loc}: needs semaphore_ids")


def _accesses(m: _Op) -> list[tuple]:
    return [((x.rank, x.buf), x.index, x.index + x.size, False) for x in m.srcs] + \
           [((x.rank, x.buf), x.index, x.index + x.size, True) for x in m.dsts]


def _sync_rule(ops: list) -> str:
    """The DSL's data-sync discipline [D]: nop between conflicting data ops, before a signal or semaphore release
    that follows a data op, after a wait or semaphore acquire that a data op follows (these are done by a
    single thread, [K])."""
    touched, last_data, after_wait = [], None, None
    for m in ops:
        if m.name in ("nop", "barrier"):
            touched, last_data, after_wait = [], None, None
        elif m.name in _SIGNALS + ("sem_release", "flush") and last_data is not None:
            return (f"{m.where}: follows {last_data.where} with no nop between; only thread 0 signals, so it can "
                    "signal before the other threads finish that op")
        elif m.name in _WAITS + ("sem_acquire",):
            after_wait = m
        elif m.name in _DATA or m.name in ("pwsf",):
            acc = _accesses(m)
            if after_wait is not None:
                return (f"{m.where}: follows {after_wait.where} with no nop between; only thread 0 waits, so the "
                        "other threads run this op before the wait is over")
            clash = next((b for a in acc for b in touched if _conflict(a, b[:4])), None)
            if clash is not None:
                return (f"{m.where}: overlaps chunks that {clash[4].where} also touches (one of them writing) "
                        "with no nop between")
            touched.extend(a + (m,) for a in acc)
            last_data = m
    return ""


# ------------------------------------------------------------------------------------------------ simulation
def _simulate(model: _Model) -> list[str]:
    """The symbolic run (module docstring, "Checks"), two launches back to back; the faults found."""
    for ops in (o for tbs in model.tbs for o in tbs):
        for m in ops:
            if m.unsupported:
                return [f"{m.where}: {m.unsupported} is not simulated by this checker, so the plan is unverified"]
    coll = model.coll
    if coll not in ("allgather", "reducescatter", "allreduce", "alltoall"):
        return [f'collective "{coll}" has no postcondition here (allgather, reducescatter, allreduce, alltoall)']
    n = model.n
    if any((model.chunks[r]["i"], model.chunks[r]["o"]) != (model.chunks[0]["i"], model.chunks[0]["o"])
           for r in range(n)):
        return ["the gpus list different input or output chunk counts; a collective's ranks have equal buffers"]
    nchunks = model.chunks[0]["o"] if coll == "allgather" else model.chunks[0]["i"]
    per = nchunks // n
    want = _natural_chunks(coll, n, per)
    if per < 1 or per * n != nchunks or (model.chunks[0]["i"], model.chunks[0]["o"]) != want:
        return [f"input_chunks={model.chunks[0]['i']} and output_chunks={model.chunks[0]['o']} do not fit a {coll} "
                f"over {n} ranks (expected {want[0]} and {want[1]} for {per} chunk(s) per shard)"]
    run = _Run(model, per)
    for launch in (0, 1):
        err = run.launch(launch)
        if err:
            return [err if launch == 0 else f"second launch: {err}"]
    return []


class _Run:
    """The state a plan's launches share (as the executor keeps it between calls): the scratch buffers, the
    channel and device semaphores, and who last wrote or read each chunk (for the race checks). A chunk access
    is (rank, buffer, index); an agent is one threadblock of one launch, with a vector clock over all agents."""

    def __init__(self, model: _Model, per: int):
        self.model, self.per = model, per
        self.agents = [(r, t) for r in range(model.n) for t in range(len(model.tbs[r]))]
        self.T = len(self.agents)
        self.bufs = {(r, b): [None] * model.chunks[r][b] for r in range(model.n) for b in BUFFER_TYPES}
        self.writer = {}                          # chunk -> (agent, time, where)
        self.readers = defaultdict(dict)          # chunk -> {agent: (time, where)}
        self.signals = defaultdict(deque)         # (from, to, type, ordinal) -> clocks (None: relaxed)
        self.sems = {(r, s): deque([None] * v) for r in range(model.n) for s, v in enumerate(model.sem_init[r])}
        self.clock = [[0] * (2 * self.T) for _ in range(2 * self.T)]
        self.ordinal = {}                         # (rank, type, channel) -> (peer, k-th channel to that peer)
        for r in range(model.n):
            for ctype, peers in model.chans[r].items():
                seen = defaultdict(int)
                for g, p in enumerate(peers):
                    self.ordinal[(r, ctype, g)] = (p, seen[p])
                    seen[p] += 1

    def launch(self, launch: int) -> str:
        model, per, n = self.model, self.per, self.model.n
        in_place = model.in_place
        # the caller's buffers hold fresh data; a rank's launch starts after its previous one ended
        for r in range(n):
            for b in ("i", "o"):
                cells = self.bufs[(r, b)]
                for k in range(len(cells)):
                    cells[k] = None
                    self.writer.pop((r, b, k), None)
                    self.readers.pop((r, b, k), None)
            if model.coll == "allgather" and in_place:
                for k in range(per):
                    self.bufs[(r, "o")][r * per + k] = (k, 1 << r, False)
            else:
                cells = self.bufs[(r, "i")]
                for k in range(len(cells)):
                    cells[k] = (k, 1 << r, False)
        base = launch * self.T
        if launch:
            for r in range(n):
                ended = [max(c) for c in zip(*(self.clock[i] for i, (rr, _) in enumerate(self.agents) if rr == r))] \
                    if any(rr == r for rr, _ in self.agents) else [0] * (2 * self.T)
                for i, (rr, _) in enumerate(self.agents):
                    if rr == r:
                        self.clock[base + i][:] = ended
        self.pc = [0] * self.T
        self.barriers, self.released = defaultdict(list), set()
        progress = True
        while progress:
            progress = False
            for i, (r, t) in enumerate(self.agents):
                ops = model.tbs[r][t]
                while self.pc[i] < len(ops):
                    done, err = self.step(base + i, r, ops[self.pc[i]])
                    if err:
                        return err
                    if not done:
                        break
                    self.pc[i] += 1
                    progress = True
        stuck = [i for i, (r, t) in enumerate(self.agents) if self.pc[i] < len(model.tbs[r][t])]
        if stuck:
            r, t = self.agents[stuck[0]]
            m = model.tbs[r][t][self.pc[stuck[0]]]
            if m.name in _WAITS:
                keys = [self._wait_key(r, m, g) for g in m.chans]
                p, _, _, o = next((k for k in keys if not self.signals[k]), keys[0])
                why = f"waits for a signal from gpu {p} on their {m.ctype} channel pair #{o} that never comes"
            elif m.name == "sem_acquire":
                why = f"waits on semaphore(s) {m.sems} that are never released"
            else:
                why = f"waits at barrier {m.barrier[0]} for {m.barrier[1]} threadblocks"
            return f"deadlock: {len(stuck)} threadblock(s) never finish; {m.where} {why}"
        for (src, dst, ctype, o), q in sorted(self.signals.items()):
            if q:
                return (f"gpu {src} signals gpu {dst} {len(q)} more time(s) than gpu {dst} waits on their {ctype} "
                        f"channel pair #{o} (every signal needs its wait: counters carry over into the next launch)")
        for (r, s), q in sorted(self.sems.items()):
            if len(q) != model.sem_init[r][s]:
                return (f"gpu {r} semaphore {s} ends at {len(q)}, not its initial {model.sem_init[r][s]} (the next "
                        "launch would start unbalanced)")
        stub = Algo("plan", "Simple", 0, per * n, n, model.coll, int(in_place), int(not in_place))
        return next(iter(_postcondition(stub, self.bufs, per, in_place)), "")

    def _wait_key(self, r, m, g):
        p, o = self.ordinal[(r, m.ctype, g)]
        return (p, r, m.ctype, o)

    def _race(self, m, cell, kind, other) -> str:
        return (f"race: {m.where} {kind} gpu {cell[0]} buffer {cell[1]} chunk {cell[2]}, which {other[2]} also "
                "touches with nothing (signal/wait, semaphore, barrier) ordering the two")

    def _read(self, a, m, ref):
        vals, mine = [], self.clock[a]
        for k in range(ref.size):
            cell = (ref.rank, ref.buf, ref.index + k)
            w = self.writer.get(cell)
            if w is not None and w[0] != a and mine[w[0]] < w[1]:
                return None, self._race(m, cell, "reads", w)
            self.readers[cell][a] = (mine[a], m.where)
            vals.append(self.bufs[(ref.rank, ref.buf)][ref.index + k])
        return vals, ""

    def _write(self, a, m, ref, vals) -> str:
        if not self.model.in_place and ref.buf == "i":
            return f"{m.where}: writes the input buffer of gpu {ref.rank} in an out-of-place plan"
        mine = self.clock[a]
        for k in range(ref.size):
            cell = (ref.rank, ref.buf, ref.index + k)
            w = self.writer.get(cell)
            if w is not None and w[0] != a and mine[w[0]] < w[1]:
                return self._race(m, cell, "overwrites", w)
            for b, (t, where) in self.readers[cell].items():
                if b != a and mine[b] < t:
                    return self._race(m, cell, "overwrites", (b, t, where))
            self.readers[cell] = {}
            self.writer[cell] = (a, mine[a], m.where)
            self.bufs[(ref.rank, ref.buf)][ref.index + k] = vals[k]
        return ""

    def _join(self, a, other):
        if other is not None:
            mine = self.clock[a]
            mine[:] = map(max, mine, other)

    def _copy(self, a, m) -> str:
        for s, d in zip(m.srcs, m.dsts):
            vals, err = self._read(a, m, s)
            if err or (err := self._write(a, m, d, vals)):
                return err
        return ""

    def step(self, a, r, m: _Op) -> tuple[bool, str]:
        """Run op ``m`` for agent ``a`` (on rank ``r``): (done, fault); not done while it has to wait."""
        name = m.name
        if name in _WAITS:
            keys = [self._wait_key(r, m, g) for g in m.chans]
            if any(len(self.signals[k]) < keys.count(k) for k in keys):
                return False, ""
            for k in keys:
                got = self.signals[k].popleft()
                if name == "wait":                # a relaxed wait orders no data
                    self._join(a, got)
        elif name == "sem_acquire":
            if any(len(self.sems[(r, s)]) < m.sems.count(s) for s in m.sems):
                return False, ""
            for s in m.sems:
                self._join(a, self.sems[(r, s)].popleft())
        elif name == "barrier":
            key = (r,) + m.barrier
            if a in self.released:
                self.released.discard(a)
            else:
                group = self.barriers[key]
                if a not in group:
                    group.append(a)
                if len(group) < m.barrier[1]:
                    return False, ""
                self.barriers[key] = []
                merged = [max(c) for c in zip(*(self.clock[b] for b in group))]
                for b in group:
                    self.clock[b][:] = merged
                    if b != a:
                        self.released.add(b)
        self.clock[a][a] += 1
        err = ""
        if name in ("put", "pws", "get", "copy"):
            err = self._copy(a, m)               # a memory-channel pws does not signal [K]
        elif name in ("re", "res", "rre", "rres"):
            total = None
            for s in m.srcs:
                vals, err = self._read(a, m, s)
                if err:
                    return True, err
                total = vals if total is None else [_plus(x, y) for x, y in zip(total, vals)]
            for d in m.dsts:
                if (err := self._write(a, m, d, total)):
                    break
        if err:
            return True, err
        if name in _SIGNALS or (name == "pws" and m.ctype == "port"):
            for g in m.chans:
                p, o = self.ordinal[(r, m.ctype, g)]
                self.signals[(r, p, m.ctype, o)].append(list(self.clock[a]) if name != "rlxsignal" else None)
        elif name == "sem_release":
            for s in m.sems:
                self.sems[(r, s)].append(list(self.clock[a]))
        return True, ""
