"""The MSCCL program IR and the runtime's limits (notes/msccl-xml-and-anchors.md section 3).

The IR mirrors the file: an ``Algo`` has one ``Gpu`` per rank, each with threadblocks (``Tb``: one send peer, one
receive peer, a channel) holding ``Step`` instructions. ``msccl_xml.to_xml`` is a pure function of the IR. Beside
the dataclasses: ``XmlError`` (a file the runtime would reject) and the constants the lowering, the writer and the
checker share (instruction and threadblock limits, protocols, step types, each dialect's collective names).
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_COUNT = 72                 # cnt < 72
MAX_STEPS = 256                # steps per threadblock
MAX_NODES_PER_RANK = 4096      # parsed XML nodes: 1 (algo) + ngpus + tbs + steps of the rank's gpu
MAX_TBS_PER_CHANNEL = 32
MAX_CHANNELS = 32
DEFAULT_SM_BUDGET = 108        # threadblocks per GPU that can be co-resident (A100)
MAX_CHUNKS_PER_LOOP = 1 << 20
OPS_PER_THREADBLOCK = 160      # instructions of one link per threadblock, leaving room for dependency nops
PROTOCOLS = ("Simple", "LL", "LL128")
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop", "ra")
DIALECT_COLL = {"executor": {"allgather": "allgather", "reduce_scatter": "reducescatter", "allreduce": "allreduce",
                             "alltoall": "alltoall"},
                "msccl": {"allgather": "allgather", "reduce_scatter": "reduce_scatter", "allreduce": "allreduce",
                          "alltoall": "alltoall"}}
KNOWN_COLLS = {"executor": {"allgather", "reducescatter", "allreduce", "alltoall", "send", "recv", "gather", "scatter",
                            "alltoallv", "broadcast", "reduce", "custom"},
               "msccl": {"allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "reduce", "custom"}}


@dataclass
class Step:
    s: int
    type: str
    srcbuf: str = "i"
    srcoff: int = -1
    dstbuf: str = "o"
    dstoff: int = -1
    cnt: int = 0
    depid: int = -1
    deps: int = -1
    hasdep: int = 0


@dataclass
class Tb:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass
class Gpu:
    id: int
    i_chunks: int
    o_chunks: int
    s_chunks: int
    tbs: list[Tb] = field(default_factory=list)


@dataclass
class Algo:
    name: str
    proto: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    coll: str
    inplace: int
    outofplace: int
    min_bytes: int = 0
    max_bytes: int = 1 << 40
    gpus: list[Gpu] = field(default_factory=list)


class XmlError(ValueError):
    """An MSCCL file the runtime would reject or that does not do its collective; the message names why."""
