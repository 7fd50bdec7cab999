"""Checking an MSCCL program (notes/msccl-xml-and-anchors.md section 3): ``validate`` applies the runtime
parser's rules and limits, ``simulate`` runs the program symbolically (deadlock, FIFO matching, the collective's
postcondition), and ``check_xml`` does both on a file's text and sums them up in a ``Report`` (a file written
as ``to_xml`` writes it is checked in numpy columns first: ``flat.py``, ``flat_check.py``).
"""
from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field

import numpy as np

from ..core.gc_pause import gc_paused
from .flat import FlatProgram, read_flat
from .flat_check import runs, sound
from .layout import chunks_agree, file_root, rooted_layout
from .msccl_xml import parse_xml
from .program import (DEFAULT_SM_BUDGET, KNOWN_COLLS, MAX_DEPENDENCY_TB, MAX_INT, MAX_NODES_PER_RANK, MAX_OFFSET,
                      MAX_SIMULATED_CHUNKS, PROTOCOLS, ROOTED,
                      READING_STEPS, RECEIVING_STEPS, SENDING_STEPS, STEP_TYPES, TARGETS, WRITING_STEPS, Algo, Target,
                      XmlError, target)


def runtime_for(dialect: str, runtime: "str | Target | None" = None, step_types=()) -> Target:
    """The target a file is checked against: ``runtime`` when given (its dialect must be ``dialect``), else the
    strictest runtime of the dialect whose kernels run every type in ``step_types`` (the file's): RCCL for the
    executor dialect, or msccl-executor for a file with fused receive steps, which RCCL's kernels lack;
    microsoft/msccl for msccl-tools' dialect."""
    if runtime is None:
        if dialect != "executor":
            return TARGETS["msccl"]
        return TARGETS["rccl" if set(step_types) <= TARGETS["rccl"].kernel_steps else "msccl-executor"]
    t = target(runtime)
    if t.dialect != dialect:
        raise XmlError(f"the {t.name} runtime reads the {t.dialect} dialect, not {dialect}")
    return t


def validate(algo: Algo, dialect: str = "executor", sm_budget: int = DEFAULT_SM_BUDGET,
             runtime: "str | Target | None" = None) -> list[str]:
    """The runtime parser's rules and the limits of ``runtime`` (``runtime_for``; notes section 3.10/3.11) plus
    our semantic ones; the problems found, first one first (empty when the file is sound for the parser)."""
    limits = runtime_for(dialect, runtime, {st.type for g in algo.gpus for t in g.tbs for st in t.steps})
    errs = validate_header(algo, dialect)
    errs += _validate_body(algo, sm_budget, limits)
    return errs


def validate_header(algo: Algo, dialect: str = "executor") -> list[str]:
    """The rules on the ``<algo>`` tag alone (protocol, collective, size range, placement, chunks per loop): the
    part of ``validate`` that changes when a checked program is given another tag."""
    errs: list[str] = []
    colls = KNOWN_COLLS[dialect]
    if algo.proto not in PROTOCOLS:
        errs.append(f'proto="{algo.proto}" is not one of {", ".join(PROTOCOLS)} (case-sensitive)')
    if algo.coll not in colls:
        hint = {"reduce_scatter": "reducescatter", "reducescatter": "reduce_scatter"}.get(algo.coll)
        errs.append(f'coll="{algo.coll}" is not a {dialect}-dialect collective'
                    + (f' (this dialect spells it "{hint}")' if hint else ""))
    unbounded = dialect == "executor" and algo.max_bytes == 0      # the executors read maxBytes 0 as no limit
    if algo.min_bytes < 0 or algo.max_bytes < 0 or (algo.min_bytes > algo.max_bytes and not unbounded):
        errs.append(f"minBytes={algo.min_bytes} and maxBytes={algo.max_bytes} are not a valid range")
    if algo.inplace not in (0, 1) or algo.outofplace not in (0, 1):
        errs.append("inplace and outofplace must be 0 or 1")
    if algo.nchunksperloop < 1:
        errs.append("nchunksperloop must be positive")
    if algo.nchannels < 1:
        errs.append("nchannels must be positive")
    for name in ("nchannels", "nchunksperloop", "ngpus", "inplace", "outofplace"):
        if not -MAX_INT - 1 <= getattr(algo, name) <= MAX_INT:
            errs.append(f"{name}={getattr(algo, name)} is outside {-MAX_INT - 1}..{MAX_INT}, what the runtime's int "
                        "holds")
    return errs


def _validate_body(algo: Algo, sm_budget: int, limits: Target) -> list[str]:
    """The rules on the ranks, threadblocks and steps (``validate`` without ``validate_header``)."""
    errs: list[str] = []
    refused = limits.refusal(algo.coll)
    if refused is not None:
        errs.append(refused)
    ids = sorted(g.id for g in algo.gpus)
    if len(ids) != algo.ngpus or ids != list(range(algo.ngpus)):
        errs.append(f"ngpus={algo.ngpus} but the <gpu> ids are {ids[:8]}{'...' if len(ids) > 8 else ''}")
    for g in algo.gpus:
        where = f"gpu {g.id}"
        nodes = 1 + algo.ngpus + len(g.tbs) + sum(len(t.steps) for t in g.tbs)
        if nodes > MAX_NODES_PER_RANK:
            errs.append(f"{where}: {nodes} XML nodes for this rank, above the runtime parser's {MAX_NODES_PER_RANK} "
                        "(use fewer chunks per shard, or a schedule with fewer transfers)")
        if min(g.i_chunks, g.o_chunks, g.s_chunks) < 0:
            errs.append(f"{where}: negative buffer size")
        if max(g.i_chunks, g.o_chunks, g.s_chunks) > MAX_INT:
            errs.append(f"{where}: a buffer of more than {MAX_INT} chunks, the most the runtime's int holds")
        if limits.dialect == "msccl" and not chunks_agree(algo.coll, algo.ngpus, algo.nchunksperloop, g.i_chunks,
                                                          g.o_chunks):
            errs.append(f"{where}: i_chunks={g.i_chunks} and o_chunks={g.o_chunks} disagree with nchunksperloop="
                        f"{algo.nchunksperloop} for coll={algo.coll}: microsoft/msccl refuses the file (each must be 0 "
                        "or nchunksperloop, divided by ngpus for allgather's i and reduce_scatter's o; "
                        "src/graph/topo.cc:886-889)")
        if len(g.tbs) > limits.max_tbs:
            errs.append(f"{where}: {len(g.tbs)} threadblocks, {len(g.tbs) - limits.max_tbs} above the "
                        f"{limits.max_tbs} per rank that {limits.name} reads")
        elif len(g.tbs) > sm_budget:
            errs.append(f"{where}: {len(g.tbs)} threadblocks, above the budget of {sm_budget} co-resident blocks "
                        "(kernels spin on flags across blocks; raise the budget only if the GPU has that many SMs)")
        tb_ids = sorted(t.id for t in g.tbs)
        if tb_ids != list(range(len(g.tbs))):
            errs.append(f"{where}: threadblock ids {tb_ids[:8]} are not 0..{len(g.tbs) - 1} without gaps")
        per_chan = Counter()
        for t in g.tbs:
            for peer, role in ((t.send, "send"), (t.recv, "recv")):
                if not -1 <= peer < algo.ngpus or peer == g.id:
                    errs.append(f"{where} tb {t.id}: {role}={peer} is not another rank or -1")
                if peer >= 0:
                    per_chan[(role, peer, t.chan)] += 1
            if not 0 <= t.chan < limits.max_channels:
                errs.append(f"{where} tb {t.id}: chan={t.chan} out of range (the runtime has "
                            f"{limits.max_channels} channels)")
        for (role, peer, chan), count in per_chan.items():
            if count > 1:
                errs.append(f"{where}: {count} threadblocks {role} with peer {peer} on channel {chan}; a connection "
                            "is one FIFO between exactly one sending and one receiving threadblock")
        for role in ("send", "recv"):
            for chan in {c for (r, _, c) in per_chan if r == role}:
                if sum(v for (r, _, c), v in per_chan.items() if r == role and c == chan) > limits.max_tbs_per_channel:
                    errs.append(f"{where}: more than {limits.max_tbs_per_channel} {role} threadblocks on channel {chan}")
        sizes = {"i": g.i_chunks, "o": g.o_chunks, "s": g.s_chunks}
        by_id = {t.id: t for t in g.tbs}
        for t in g.tbs:
            if len(t.steps) > limits.max_steps:
                errs.append(f"{where} tb {t.id}: {len(t.steps)} steps, {len(t.steps) - limits.max_steps} above the "
                            f"{limits.max_steps} per threadblock that {limits.name} reads (spread the connection over "
                            "more channels, or use fewer chunks per shard)")
            pending_nop = False
            for k, st in enumerate(t.steps):
                at = f"{where} tb {t.id} step {st.s}"
                if st.s != k:
                    errs.append(f"{at}: steps must be numbered 0, 1, 2, ... in order (expected s={k})")
                if st.type not in STEP_TYPES:
                    errs.append(f"{at}: unknown type {st.type!r}")
                    continue
                if st.type not in limits.kernel_steps:
                    errs.append(f"{at}: type {st.type} is read by {limits.name}'s parser but its kernels do not run "
                                f"it (they run {', '.join(sorted(limits.kernel_steps))}): the first collective call "
                                f"would fail (export for {limits.name} to get a file without it, or check "
                                "for the runtime it is meant for)")
                if st.type == "nop":
                    pending_nop = True
                elif pending_nop and st.depid < 0:
                    errs.append(f"{at}: a chain of nop dependencies must end in a step with its own depid "
                                "(the runtime ignores the file otherwise)")
                    pending_nop = False
                else:
                    pending_nop = False
                if not 0 <= st.cnt < limits.max_count:
                    errs.append(f"{at}: cnt={st.cnt}, the runtime needs 0 <= cnt < {limits.max_count}")
                if st.hasdep not in (0, 1):
                    errs.append(f"{at}: hasdep must be 0 or 1")
                sends = st.type in SENDING_STEPS
                recvs = st.type in RECEIVING_STEPS
                if sends and t.send < 0:
                    errs.append(f"{at}: type {st.type} sends but the threadblock has send=-1")
                if recvs and t.recv < 0:
                    errs.append(f"{at}: type {st.type} receives but the threadblock has recv=-1")
                reads_src = st.type in READING_STEPS
                writes_dst = st.type in WRITING_STEPS
                for used, buf, off in ((reads_src, st.srcbuf, st.srcoff), (writes_dst, st.dstbuf, st.dstoff)):
                    if not used:
                        continue
                    if buf not in sizes:
                        errs.append(f"{at}: buffer {buf!r} is not i, o or s")
                    elif off < 0 or off + st.cnt > sizes[buf]:
                        errs.append(f"{at}: chunks {off}..{off + st.cnt - 1} of buffer {buf} are outside its "
                                    f"{sizes[buf]} chunks")
                    elif off > MAX_OFFSET:
                        errs.append(f"{at}: offset {off} in buffer {buf} is above {MAX_OFFSET}, the most the "
                                    "runtime's 16-bit offsets hold (cut shards into fewer chunks)")
                if st.depid > MAX_DEPENDENCY_TB:
                    errs.append(f"{at}: depends on threadblock {st.depid}, above {MAX_DEPENDENCY_TB}, the most the "
                                "runtime's 8-bit dependentBid holds")
                if st.depid >= 0:
                    target = by_id.get(st.depid)
                    if target is None or st.depid == t.id:
                        errs.append(f"{at}: depends on threadblock {st.depid}, which "
                                    + ("is itself" if st.depid == t.id else "does not exist"))
                    elif not 0 <= st.deps < len(target.steps):
                        errs.append(f"{at}: depends on step {st.deps} of tb {st.depid}, which does not exist")
                    elif target.steps[st.deps].hasdep != 1:
                        errs.append(f"{at}: depends on tb {st.depid} step {st.deps}, which has hasdep=0 and so never "
                                    "publishes its completion (the wait would never end)")
    return errs


# ------------------------------------------------------------------------------------------------ simulation
_EMPTY = None


def _plus(a, b):
    """Reduce two chunk values: (input chunk index or -1 when mixed, mask of contributing ranks, counted twice)."""
    if a is None or b is None:
        return ("empty", 0, True) if a is None and b is None else (a or b)[:2] + (True,)
    index = a[0] if a[0] == b[0] else -1
    return (index, a[1] | b[1], a[2] or b[2] or bool(a[1] & b[1]))


def simulate(algo: Algo, root: int | None = None) -> list[str]:
    """Run the program symbolically: every threadblock steps through its list, receives match sends in FIFO
    order per (sender, receiver, channel), dependencies wait for the named step. A chunk's value is the input
    chunk index it derives from, the set of ranks whose contributions it holds and whether one was counted twice.
    Returns the faults: a deadlock (with where a stuck threadblock waits), a size mismatch between a send and its
    receive, or a final state that is not the collective (a contribution missing, foreign or counted twice).
    Reducing into an empty chunk counts as a fault too (it reads data that was never there), and so does any
    write into the input buffer ``i`` of a file that serves only out-of-place calls (the caller's send buffer).

    A rooted file (broadcast, reduce, gather, scatter) is run for ``root`` (default: the one its name carries,
    ``file_root``) with the inputs and postcondition of ``rooted_layout``: it may write only the recvbuff ``o``
    (at the root only, for reduce and gather) and scratch."""
    n, c = algo.ngpus, algo.nchunksperloop
    per = c // n if n else 0
    chunks = sum(g.i_chunks + g.o_chunks + g.s_chunks for g in algo.gpus) + n * max(c, 0)
    if chunks > MAX_SIMULATED_CHUNKS:
        return [f"{chunks} chunks of buffers (and of results to check) are more than the {MAX_SIMULATED_CHUNKS} "
                "this checker simulates"]
    root, why = file_root(algo, root)
    if why is not None:
        return [why]
    layout = None
    if algo.coll in ROOTED:
        layout = rooted_layout(algo.coll, n, c, root, algo.inplace == 1 and algo.outofplace == 0)
        per = layout[0]
    bufs: dict[tuple, list] = {}
    for g in algo.gpus:
        for name, size in (("i", g.i_chunks), ("o", g.o_chunks), ("s", g.s_chunks)):
            bufs[(g.id, name)] = [_EMPTY] * size
    coll = algo.coll
    in_place = algo.inplace == 1 and algo.outofplace == 0
    for g in algo.gpus:
        if layout is not None:
            buf, count = layout[1].get(g.id, (None, 0))
            cells = bufs.get((g.id, buf), [])
            for k in range(min(count, len(cells))):
                cells[k] = (k, 1 << g.id, False)
        elif coll == "allgather" and in_place:
            cells = bufs[(g.id, "o")]
            for k in range(per):
                if g.id * per + k < len(cells):
                    cells[g.id * per + k] = (k, 1 << g.id, False)
        else:
            cells = bufs[(g.id, "i")]
            for k in range(len(cells)):
                cells[k] = (k, 1 << g.id, False)
    fifo: dict[tuple, deque] = defaultdict(deque)
    pc = {(g.id, t.id): 0 for g in algo.gpus for t in g.tbs}
    tbs = {(g.id, t.id): t for g in algo.gpus for t in g.tbs}
    # event-driven: a threadblock runs until it blocks, then waits on the FIFO or threadblock that blocks it and
    # is run again when that one moves; every step is executed once, whatever the order
    ready = deque(tbs)
    queued = set(tbs)
    on_fifo: dict[tuple, list] = defaultdict(list)      # FIFO key -> threadblocks waiting for a message
    on_tb: dict[tuple, list] = defaultdict(list)        # threadblock key -> threadblocks waiting for its steps

    def wake(waiting: list) -> None:
        for k in waiting:
            if k not in queued:
                queued.add(k)
                ready.append(k)
        waiting.clear()

    def push(key: tuple, data: list) -> None:
        fifo[key].append(data)
        if on_fifo.get(key):
            wake(on_fifo[key])

    receiving, writing, reducing = RECEIVING_STEPS, WRITING_STEPS, ("rrc", "rrs", "rrcs")
    rank_bufs = {g.id: {name: bufs[(g.id, name)] for name in ("i", "o", "s")} for g in algo.gpus}
    # what a threadblock's run needs, looked up once: it runs again for about every step it takes
    info = {(g.id, t.id): (t, g.id, t.steps, rank_bufs[g.id], (t.recv, g.id, t.chan), (g.id, t.send, t.chan))
            for g in algo.gpus for t in g.tbs}
    while ready:
        key = ready.popleft()
        queued.discard(key)
        t, rank, steps, mine_bufs, in_key, out_key = info[key]
        p = pc[key]
        start = p
        while p < len(steps):
            st = steps[p]
            depid = st.depid
            if depid >= 0 and pc.get((rank, depid), 0) <= st.deps:
                on_tb[(rank, depid)].append(key)
                break
            kind = st.type
            if kind in receiving:
                q = fifo[in_key]
                if not q:
                    on_fifo[in_key].append(key)
                    break
                data = q.popleft()
                if len(data) != st.cnt:
                    return [f"gpu {rank} tb {t.id} step {st.s}: receives {st.cnt} chunks but the matching send "
                            f"from gpu {t.recv} on channel {t.chan} carried {len(data)}"]
            if not in_place and st.dstbuf == "i" and kind in writing and layout is None:
                return [f"gpu {rank} tb {t.id} step {st.s} ({kind}) writes into the input buffer, which an "
                        "out-of-place call must leave as it was"]
            if layout is not None and kind in writing and (rank, st.dstbuf) in layout[3]:
                return [f"gpu {rank} tb {t.id} step {st.s} ({kind}) writes into buffer {st.dstbuf}, which a "
                        f"{coll} with root {root} must leave alone (" + ("the caller's send buffer" if st.dstbuf == "i"
                                                                        else "its recvbuff counts at the root only")
                        + ")"]
            if kind == "s":
                off = st.srcoff
                push(out_key, mine_bufs[st.srcbuf][off:off + st.cnt])
            elif kind == "r" or kind == "rcs":
                off = st.dstoff
                mine_bufs[st.dstbuf][off:off + st.cnt] = data
                if kind == "rcs":
                    push(out_key, data)
            elif kind in reducing:
                off = st.srcoff
                total = [_plus(a, b) for a, b in zip(mine_bufs[st.srcbuf][off:off + st.cnt], data)]
                if kind != "rrs":
                    off = st.dstoff
                    mine_bufs[st.dstbuf][off:off + st.cnt] = total
                if kind != "rrc":
                    push(out_key, total)
            elif kind == "cpy":
                mine_bufs[st.dstbuf][st.dstoff:st.dstoff + st.cnt] = \
                    mine_bufs[st.srcbuf][st.srcoff:st.srcoff + st.cnt]
            elif kind == "re":
                src = mine_bufs[st.srcbuf][st.srcoff:st.srcoff + st.cnt]
                dst = mine_bufs[st.dstbuf]
                for k in range(st.cnt):
                    dst[st.dstoff + k] = _plus(dst[st.dstoff + k], src[k])
            p += 1
        pc[key] = p
        if p > start and on_tb.get(key):
            wake(on_tb[key])
    stuck = [(k, t) for k, t in tbs.items() if pc[k] < len(t.steps)]
    if stuck:
        (rank, tid), t = stuck[0]
        st = t.steps[pc[(rank, tid)]]
        why = (f"waits for tb {st.depid} step {st.deps}" if st.depid >= 0 and pc.get((rank, st.depid), 0) <= st.deps
               else f"waits for data from gpu {t.recv} on channel {t.chan} that never comes")
        return [f"deadlock: {len(stuck)} threadblocks never finish; gpu {rank} tb {tid} step {st.s} ({st.type}) {why}"]
    leftovers = [k for k, q in fifo.items() if q]
    if leftovers:
        a, b, ch = leftovers[0]
        return [f"gpu {a} sends {len(fifo[leftovers[0]])} message(s) to gpu {b} on channel {ch} that are never "
                "received"]
    return _postcondition(algo, bufs, per, in_place, layout, root)


def _postcondition(algo: Algo, bufs, per, in_place, layout=None, root: int | None = None) -> list[str]:
    n = algo.ngpus
    full = (1 << n) - 1
    coll = algo.coll.replace("_", "")

    def check(rank, buf, off, want):
        cells = bufs.get((rank, buf), [])
        got = cells[off] if off < len(cells) else None
        if got == want:
            return []
        if got is None:
            return [f"gpu {rank} buffer {buf} chunk {off} ends empty"]
        if got[2]:
            return [f"gpu {rank} buffer {buf} chunk {off}: a contribution is counted twice (or an empty chunk was "
                    "reduced)"]
        ranks = [r for r in range(n) if got[1] >> r & 1]
        return [f"gpu {rank} buffer {buf} chunk {off} holds input chunk {got[0]} of ranks "
                f"{ranks[:6]}{'...' if len(ranks) > 6 else ''}, expected chunk {want[0]} of "
                f"{'all ranks' if want[1] == full else [r for r in range(n) if want[1] >> r & 1]}"]

    if layout is not None:
        for r, (buf, count, base, modulo, who) in sorted(layout[2].items()):
            for k in range(count):
                mask = 1 << root if who == "root" else full if who == "all" else 1 << (k // modulo)
                err = check(r, buf, k, (base + k % modulo, mask, False))
                if err:
                    return err
        return []
    for r in range(n):
        if coll == "allgather":
            for s in range(n):
                for k in range(per):
                    err = check(r, "o", s * per + k, (k, 1 << s, False))
                    if err:
                        return err
        elif coll == "reducescatter":
            for k in range(per):
                err = (check(r, "i", r * per + k, (r * per + k, full, False)) if in_place
                       else check(r, "o", k, (r * per + k, full, False)))
                if err:
                    return err
        elif coll == "allreduce":
            for k in range(algo.nchunksperloop):
                err = check(r, "i" if in_place else "o", k, (k, full, False))
                if err:
                    return err
        elif coll == "alltoall":           # output block s of rank r = input block r of rank s (in place: in i)
            for s in range(n):
                for k in range(per):
                    err = check(r, "i" if in_place else "o", s * per + k, (r * per + k, 1 << s, False))
                    if err:
                        return err
        else:
            return [f"no postcondition known for coll={algo.coll}: only its soundness was simulated"]
    return []


@dataclass
class Report:
    """What ``check_xml`` found: ``runtime`` the target checked against, ``tbs_per_rank`` and
    ``steps_per_tb`` the largest counts the file uses (against the target's limits), ``step_types`` the step
    types it uses (in ``STEP_TYPES`` order; every one must be among the target's ``kernel_steps``). (*) A file
    that passed in columns (``flat``) keeps only its ``<algo>`` attributes in ``program`` (no GPUs):
    ``full_program()`` gives the whole program either way."""

    ok: bool
    dialect: str
    problems: list[str]
    ranks: int
    threadblocks: int
    steps: int
    runtime: str = ""
    tbs_per_rank: int = 0
    steps_per_tb: int = 0
    program: Algo | None = field(default=None, repr=False, compare=False)    # the file as read back (*)
    ops_per_tb: int = 0         # set by ``export``: the instructions per threadblock the lowering used
    merged: bool = False        # set by ``export``: whether it merged send and receive threadblocks
    flat: FlatProgram | None = field(default=None, repr=False, compare=False)   # the file as columns, when read so
    step_types: tuple = ()
    runtime_note: str = ""      # set by ``export``: why it wrote for ``runtime`` when none was named
    root: int | None = None     # a rooted file: the root it was checked for (``file_root``)
    root_note: str = ""         # set by ``export`` for a rooted file: the one root it serves (``program.root_note``)
    coarsened: object = None    # set by ``export`` when it coarsened the schedule to fit: a ``coarsen.Coarsening``

    @property
    def first(self) -> str:
        return self.problems[0] if self.problems else "ok"

    def full_program(self) -> Algo | None:
        """The file as read back, with its GPUs."""
        return self.flat.to_algo() if self.flat is not None else self.program


@gc_paused()
def check_xml(text: str, dialect: str | None = None, sm_budget: int = DEFAULT_SM_BUDGET,
              runtime: "str | Target | None" = None, root: int | None = None) -> Report:
    """Validate (parser rules and the limits and kernels of ``runtime``, by default the strictest runtime that
    runs the file's step types, ``runtime_for``) and, when that passes, simulate
    (deadlock, FIFO matching, postcondition). Without a dialect, the runtime's is read (or it is guessed). A
    rooted file (broadcast, reduce, gather, scatter) is simulated for ``root``, by default the ``root=R`` its name
    carries (``file_root``; ``Report.root``).

    A file written exactly as ``to_xml`` writes it is read into columns (``flat.read_flat``) and checked there
    (``flat_check.sound`` and ``runs``); only a file that fails there (or that runs in too many waves) is read
    into objects and checked by ``validate`` and ``simulate``, which name its first problem."""
    if dialect is None and runtime is not None:
        dialect = target(runtime).dialect
    flat = None
    try:
        got = read_flat(text, dialect)
        if got is None:
            algo, dialect = parse_xml(text, dialect)
            types = {st.type for g in algo.gpus for t in g.tbs for st in t.steps}
        else:
            flat, dialect = got
            types = {STEP_TYPES[k] for k in np.unique(flat.steps["type"]).tolist()}
        limits = runtime_for(dialect, runtime, types)
    except (XmlError, ValueError) as exc:
        return Report(False, dialect or "?", [str(exc)], 0, 0, 0)
    if flat is not None and flat.header.ngpus != len(flat.gpu_id):
        algo = flat.to_algo()             # a declared ngpus (1e9) the <gpu> elements do not bear out: nothing is
        flat = None                       # sized by it; the object checker names the mismatch
    if flat is not None:
        checked_root = file_root(flat.header, root)[0]
        if not validate_header(flat.header, dialect) and sound(flat, sm_budget, limits) and runs(flat, root):
            tb_len = flat.tb_len
            per_rank = np.bincount(flat.tb_gpu, minlength=len(flat.gpu_id))
            return Report(True, dialect, [], flat.header.ngpus, len(tb_len), int(flat.tb_start[-1]), limits.name,
                          int(per_rank.max(initial=0)), int(tb_len.max(initial=0)), flat.header, flat=flat,
                          step_types=_in_order(types), root=checked_root)
        algo = flat.to_algo()             # the object checker names the problem
    problems = validate(algo, dialect, sm_budget, limits)
    if not problems:
        problems = simulate(algo, root)
    tbs = sum(len(g.tbs) for g in algo.gpus)
    steps = sum(len(t.steps) for g in algo.gpus for t in g.tbs)
    return Report(not problems, dialect, problems, algo.ngpus, tbs, steps, limits.name,
                  max((len(g.tbs) for g in algo.gpus), default=0),
                  max((len(t.steps) for g in algo.gpus for t in g.tbs), default=0), algo,
                  step_types=_in_order({st.type for g in algo.gpus for t in g.tbs for st in t.steps}),
                  root=file_root(algo, root)[0])


def _in_order(types: set) -> tuple:
    """Step types in ``STEP_TYPES`` order, any unknown ones after them."""
    return tuple(k for k in STEP_TYPES if k in types) + tuple(sorted(types - set(STEP_TYPES)))
