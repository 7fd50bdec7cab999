"""The rules for one op of a plan, part of ``check_plan``'s structure check (``reader.py``): its fields, channel
ids and buffer entries (``_validate_op``, ``_validate_ref``), the operand shapes the kernel assumes [K]
(``_shape``), and the DSL's data-sync discipline [D] over a threadblock's ops (``_sync_rule``). Sources as pinned in
``format.py``."""
from __future__ import annotations

from .format import (BUFFER_TYPES, CHANNEL_TYPES, MAX_CHANNEL_PER_OPERATION, MAX_DEVICE_SEMAPHORES, MAX_DEVICE_SYNCERS,
                     OP_NAMES, _DATA, _SIGNALS, _SIMULATED, _WAITS, _conflict, _is_int)
from .model import _Op, _Ref


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
