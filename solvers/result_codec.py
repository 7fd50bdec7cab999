"""The body of a results-cache entry (``solvers.results_cache``): a verified Result as an npz of plain arrays and
one JSON tree, written and read back with nothing pickled.

``encode_result`` stores the request's topology, the fabric the schedule runs on (once when they are the same),
the schedule's columns and the synthesizer's ``Detail`` through ``codec()``, which names every dataclass it may
build. ``decode_result`` takes any bytes: an npz of stored members only, each no larger than its header says and
none holding objects, loaded with ``allow_pickle=False``; a JSON tree of this layout (``FORMAT``); the topology's
content (``topology_digest``) the request's; and the schedule verified again by the simulator before the Result
is rebuilt. Anything else is a miss with its reason, never an exception.
"""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from functools import lru_cache
from typing import Any

import numpy as np

from topologies.model import Topology

from .core.safe_codec import Codec, CodecError

FORMAT = 1                          # the layout of an entry's JSON
_ENTRY = "entry"                    # the npz member holding the JSON
_MAX_MEMBERS = 100_000


def topology_digest(topo: Topology) -> str:
    """The topology as the key sees it: names, kinds, links (bandwidth and alpha exact), name and expression."""
    h = hashlib.sha256()
    h.update(json.dumps([topo.name, topo.expr, list(topo.names), list(topo.kinds)]).encode())
    for link in topo.links:
        h.update(f"{link.src} {link.dst} {link.bandwidth} {link.alpha};".encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def codec() -> Codec:
    """The codec of cached results: every synthesizer's ``Detail`` dataclass and the dataclasses they hold.
    A Detail of a type not listed here (a plug-in's) refuses to encode, and its results are simply not kept."""
    from .baselines.synthesizers import RingDetail
    from .directconnect.bfb import StepReport
    from .directconnect.synthesizers import DirectConnectDetail
    from .forestcoll.synthesizers import BlinkDetail, ForestDetail
    from .genmodel.synthesizers import GentreePlan
    from .tacos import Phase, TacosResult
    from .tacos.greedy import GreedyRun
    from .tacos.ilp import IlpResult
    from .tacos.synthesizers import IlpDetail
    from .teccl import Composed, Probe, TecclResult
    from .teccl.instance import Demand, Timing

    return Codec([RingDetail, DirectConnectDetail, StepReport, ForestDetail, GentreePlan, TacosResult, Phase,
                  GreedyRun, IlpResult, IlpDetail, TecclResult, Composed, Probe, Demand, Timing, BlinkDetail])


def encode_result(result: Any, topo: Topology | None = None) -> bytes:
    """The body of an entry (an npz) for ``result`` solved on ``topo`` (default: its fabric). CodecError when
    the result holds anything the codec does not encode."""
    try:
        fabric, schedule, detail = result.topology, result.schedule, result.detail
    except AttributeError:
        raise CodecError("not a Result") from None
    if topo is None or (fabric is not topo and topology_digest(fabric) == topology_digest(topo)):
        topo = fabric                     # the schedule runs on the request's topology: stored once
    parts = (topo, fabric, schedule, detail)
    tree, arrays = codec().encode(parts)
    text = json.dumps({"format": FORMAT, "result": tree}, allow_nan=False, separators=(",", ":"))
    buf = io.BytesIO()
    np.savez(buf, **{_ENTRY: np.frombuffer(text.encode(), dtype=np.uint8)}, **arrays)
    return buf.getvalue()


def _npz_arrays(body: bytes) -> dict[str, np.ndarray]:
    """The arrays of an entry's npz: stored (uncompressed) members only, each no larger than its header says,
    none holding objects; then ``np.load(..., allow_pickle=False)``."""
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        infos = zf.infolist()
        if len(infos) > _MAX_MEMBERS:
            raise CodecError("too many members")
        for info in infos:
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy") \
                    or "/" in info.filename or info.file_size > len(body):
                raise CodecError(f"an unexpected member {info.filename!r}")
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                    np.lib.format.read_array_header_2_0
                shape, _, dtype = read(fh)
                if dtype.hasobject or int(np.prod(shape, dtype=object)) * dtype.itemsize > info.file_size:
                    raise CodecError(f"member {info.filename!r} is not what its header says")
    with np.load(io.BytesIO(body), allow_pickle=False) as z:
        return {name: z[name] for name in z.files}


def decode_result(body: bytes, topo: Topology | None = None, options: Any = None):
    """(the Result of an entry's body, its cost and verification computed again, or None; the reason when None).
    With ``topo`` the entry must be for that topology (its content), and the Result's topology is ``topo``
    where the schedule runs on the request's own topology."""
    from .core.cost import cost
    from .core.detail import Detail
    from .core.schedule import Schedule
    from .core.verify import verify
    from .synthesize import Result

    try:
        arrays = _npz_arrays(body)
        entry = json.loads(arrays.pop(_ENTRY).tobytes().decode())
        if type(entry) is not dict or entry.get("format") != FORMAT or set(entry) != {"format", "result"}:
            raise CodecError("not an entry of this layout")
        parts = codec().decode(entry["result"], arrays)
        if type(parts) is not tuple or len(parts) != 4:
            raise CodecError("not a result")
        request, fabric, schedule, detail = parts
        if type(request) is not Topology or type(fabric) is not Topology or type(schedule) is not Schedule \
                or not (detail is None or isinstance(detail, Detail)):
            raise CodecError("not a result")
    except Exception as exc:              # whatever the bytes hold, an entry that does not decode is a miss
        return None, f"is unreadable ({_line(str(exc) or type(exc).__name__)})"
    if topo is not None:
        if topology_digest(request) != topology_digest(topo):
            return None, "was stored for another topology"
        if fabric is request:
            fabric = topo
        elif _compute_names(fabric) != _compute_names(topo):
            return None, "holds a fabric without the topology's compute nodes"
    try:
        verification = verify(fabric, schedule)
    except Exception as exc:              # a malformed schedule the verifier trips over: rejected all the same
        return None, f"holds a schedule that fails verification ({_line(f'{type(exc).__name__}: {exc}')})"
    if not verification.ok:
        first = verification.errors[0] if verification.errors else "not verified"
        return None, f"holds a schedule that fails verification ({_line(first)})"
    return Result(fabric, schedule, verification, cost(fabric, schedule), detail, options), ""


def _line(text: str) -> str:
    """``text`` as one short line (a reason inside a warning)."""
    one = " ".join(text.split())
    return one if len(one) <= 200 else one[:199] + "…"


def _compute_names(topo: Topology) -> list[str]:
    return [topo.names[i] for i in topo.compute_nodes]
