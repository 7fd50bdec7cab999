"""Reading a plan file and checking it: ``parse_plan`` (JSON text or bytes to the plan object, nothing in it
evaluated) and ``check_plan`` (the executor parser's rules and limits, here and per op in ``op_rules.py``, then the
symbolic run of ``simulate.py``).

Checks (``check_plan``)
-----------------------
Structure, from [P]/[C]/[E]: required keys and their JSON types, known op, buffer and channel type names,
``gpus[k].id == k`` and threadblock ids 0..n-1 in order, non-zero ``input_chunks``/``output_chunks``, channel
peers and remote buffer owners that are other ranks, every threadblock channel id inside the rank's channels of
that type, every op channel id inside the threadblock's channels of the op's ``channel_type`` (so the channel
type matches the op's), every ``buffer_id`` inside the threadblock's remote buffer refs of that type and naming a
buffer listed with that access type, semaphore and barrier ids in range, chunk ranges inside the buffer they
name (the owner's, for a remote one), and the limits 16/8/64/16/16 ([C], ``format.py``). The op shapes the
kernel assumes [K] (local and remote entries in the right places, equal sizes) and the intra-threadblock ``nop``
rules of the DSL [D] are checked too (``op_rules.py``), and at most ``sm_budget`` threadblocks per rank (they spin
on each other, so all must be resident at once).

Then the symbolic run, twice in a row as repeated calls run it (``simulate.py``'s docstring says what it checks).
"""
from __future__ import annotations

import json
from collections import defaultdict

from ...core.gc_pause import gc_paused
from ..program import DEFAULT_SM_BUDGET
from .format import (BUFFER_TYPES, CHANNEL_TYPES, MAX_CHANNEL, MAX_OPERATION, MAX_THREADS_PER_BLOCK, PlanError,
                     _is_int)
from .model import PlanReport, _Model
from .op_rules import _sync_rule, _validate_op
from .simulate import _simulate

MAX_PLAN_BYTES = 64 << 20          # parse_plan refuses larger texts


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
