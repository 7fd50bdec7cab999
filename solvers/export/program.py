"""The MSCCL program IR and the runtime's limits (notes/msccl-xml-and-anchors.md section 3).

The IR mirrors the file: an ``Algo`` has one ``Gpu`` per rank, each with threadblocks (``Tb``: one send peer, one
receive peer, a channel) holding ``Step`` instructions. ``msccl_xml.to_xml`` is a pure function of the IR. Beside
the dataclasses: ``XmlError`` (a file the runtime would reject) and the constants the lowering, the writer and the
checker share (instruction and threadblock limits, protocols, step types, each dialect's collective names).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.errors import NotApplicable

MAX_COUNT = 72                 # cnt < 72 on every target (the per-runtime limits are ``TARGETS``)
MAX_OFFSET = 32767            # srcOffset/dstOffset are int16_t in every runtime's mscclTransmission (msccl_struct.h)
MAX_DEPENDENCY_TB = 127        # dependentBid is int8_t there: a step can wait for threadblocks 0..127 only
MAX_NODES_PER_RANK = 4096      # parsed XML nodes: 1 (algo) + ngpus + tbs + steps of the rank's gpu
DEFAULT_SM_BUDGET = 108        # threadblocks per GPU that can be co-resident (A100)
MAX_CHUNKS_PER_LOOP = 1 << 20
MAX_INT = (1 << 31) - 1        # the readers parse every integer attribute into a C int (mscclXmlGetAttrInt)
MAX_SIMULATED_CHUNKS = 1 << 24  # buffer chunks of all ranks (and chunks the postcondition checks) a check simulates
MAX_CHANNELS = 32              # NCCL's and RCCL's MAXCHANNELS (the targets carry their own)
MAX_TBS_PER_CHANNEL = 32       # send (receive) threadblocks of a rank on one channel, every target
OPS_PER_THREADBLOCK = 160      # instructions of one link per threadblock, leaving room for dependency nops
PROTOCOLS = ("Simple", "LL", "LL128")
STEP_TYPES = ("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop", "ra")
SENDING_STEPS = ("s", "rcs", "rrs", "rrcs")              # push chunks to the threadblock's send peer
RECEIVING_STEPS = ("r", "rcs", "rrs", "rrc", "rrcs")       # take the next message from its receive peer
READING_STEPS = ("s", "rrs", "rrc", "rrcs", "cpy", "re")   # read srcbuf
WRITING_STEPS = ("r", "rcs", "rrc", "rrcs", "cpy", "re")   # write dstbuf
FULL_OPS = ("rcs", "rrs", "rrc", "rrcs")                   # the fused receive steps a kernel may be built without
DIALECT_COLL = {"executor": {"allgather": "allgather", "reduce_scatter": "reducescatter", "allreduce": "allreduce",
                             "alltoall": "alltoall", "broadcast": "broadcast", "reduce": "reduce", "gather": "gather",
                             "scatter": "scatter"},
                "msccl": {"allgather": "allgather", "reduce_scatter": "reduce_scatter", "allreduce": "allreduce",
                          "alltoall": "alltoall", "broadcast": "broadcast", "reduce": "reduce", "gather": "gather",
                          "scatter": "scatter"}}
KNOWN_COLLS = {"executor": {"allgather", "reducescatter", "allreduce", "alltoall", "send", "recv", "gather", "scatter",
                            "alltoallv", "broadcast", "reduce", "custom"},
               "msccl": {"allgather", "reduce_scatter", "allreduce", "alltoall", "broadcast", "reduce", "custom"}}


# Rooted collectives (``ROOTED``). MSCCL XML has no root attribute, and no runtime hands the call's root to the
# program: msccl-executor-nccl's mscclRunAlgo passes it to nothing that runs (src/collectives.cc:342-364; its proxy
# even hard-codes root 0, src/misc/msccl/msccl_setup.cc:139), nor does RCCL's (src/msccl.cc:43-85). A file is
# therefore written for one root, which its algo name carries as "root=R" (``ROOT_TAG``), where check-xml reads
# it back (``root_in_name``). Buffers (msccl-executor-nccl src/misc/msccl/msccl_parser.cc:333-373 and the kernel's
# count * sizeMultiplier / nchunksperloop elements per chunk, msccl_setup.cc:475): sizeMultiplier is 1 for all
# four, so broadcast and reduce (count: the whole buffer) cut it into nchunksperloop = N x chunks-per-shard
# chunks, and gather and scatter (count: one rank's sendcount or recvcount) into nchunksperloop = chunks-per-shard,
# the root's recvbuff (gather) or sendbuff (scatter) holding N x that (``lower.py``'s module docstring).
ROOTED = ("broadcast", "reduce", "gather", "scatter")
ROOT_TAG = " root=%d"
_ROOT_IN_NAME = re.compile(r"(?:^|\s)root=([0-9]{1,9})(?=\s|$)")


def root_in_name(name: str) -> int | None:
    """The root a rooted file was written for, read from its algo name (the last ``root=R`` in it; ``ROOT_TAG``),
    or None when the name names none."""
    found = _ROOT_IN_NAME.findall(name or "")
    return int(found[-1]) if found else None


def root_note(root: int, coll: str) -> str:
    """The one line an export of a rooted file says about its root (``ROOTED``'s comment)."""
    note = (f"runs correctly only when the call's root is rank {root}: MSCCL XML has no root attribute and the "
            "runtimes never pass the call's root to the program (msccl-executor-nccl src/collectives.cc:342-364, "
            "RCCL src/msccl.cc:43-85), so a call with another root runs this file all the same and is wrong")
    if coll == "reduce":
        note += ("; ops avg and user-defined (ncclAvg and above) are never run by MSCCL and fall back to the "
                 "library's own reduce (msccl-executor-nccl src/misc/msccl/msccl_lifecycle.cc:309)")
    return note


@dataclass(frozen=True)
class Target:
    """A runtime that loads MSCCL XML, with the limits its reader enforces (``msccl_struct.h`` / ``msccl.h``):
    ``max_steps`` steps per threadblock (a step index s must stay below it), ``max_tbs`` threadblocks per rank,
    ``max_tbs_per_channel`` send (and receive) threadblocks per channel, ``max_channels`` channels (NCCL's and
    RCCL's MAXCHANNELS), ``max_count`` (cnt must stay below it), and the dialect of attributes and collective names
    it reads (``DIALECT_COLL``). ``source`` cites where the numbers come from. ``kernel_steps`` are the step types
    its kernels run, which can be fewer than its reader accepts (RCCL reads ``rrc`` but its kernels are built
    without it), cited by ``kernel_source``. ``never_runs``: (collective, why) pairs for the collectives whose
    program the runtime never runs, its one line citing the runtime's source (``refusal``)."""

    name: str
    dialect: str
    max_steps: int
    max_tbs: int
    max_tbs_per_channel: int
    max_channels: int
    max_count: int
    source: str
    kernel_steps: frozenset = frozenset(STEP_TYPES)
    kernel_source: str = ""
    never_runs: tuple = ()

    def refusal(self, coll: str) -> str | None:
        """Why this runtime never runs a ``coll`` program (a collective's name in either dialect), or None."""
        key = coll.replace("_", "")
        return next((why for name, why in self.never_runs if name.replace("_", "") == key), None)

    @property
    def full_ops(self) -> bool:
        """Whether the kernel runs the fused receive steps (``FULL_OPS``); without them a lowering receives into
        scratch and reduces or forwards in steps of its own."""
        return set(FULL_OPS) <= self.kernel_steps


TARGETS = {t.name: t for t in (
    Target("rccl", "executor", 64, 64, 32, 32, 72,
           "ROCm/rccl src/include/msccl/msccl_struct.h (commit b463f53; the same at 0cbce2a): MSCCL_MAX_NUM_STEPS "
           "64 (the parser's fixed per-threadblock arrays: transmissions, dependentBid, dependentStep), "
           "MSCCL_MAX_NUM_THREAD_BLOCKS 64, MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL 32, MSCCL_MAX_COUNT 72; "
           "src/include/devcomm.h MAXCHANNELS 32",
           frozenset(("s", "r", "re", "cpy", "nop")),
           "ROCm/rccl (commit 0cbce2a): src/device/generate.py instantiates every MSCCL kernel with "
           "MSCCL_IMPL_KERNEL_ENTRY_FUNC_DEVREDOP_TYPE(..., false), i.e. fullOps = false, so "
           "src/device/msccl_kernel_impl.h runs only send, recv, reduce and local copy; "
           "src/misc/msccl/msccl_setup.cc mscclSetupKernel returns ncclInternalError ('this version of MSCCL "
           "build doesn't support full Ops') for any program whose typeMask has rcs, rrs, rrc or rrcs",
           # RCCL runs all four rooted collectives through MSCCL: src/collectives.cc:180-184 (broadcast), 217-221
           # (gather), 258-262 (reduce), 319-323 (scatter) call mscclEnqueueCheck; nothing refused
           ),
    Target("msccl-executor", "executor", 64, 32 * 32, 32, 32, 72,
           "Azure/msccl-executor-nccl src/include/msccl/msccl_struct.h (commit 206e0c4): MSCCL_MAX_NUM_STEPS 64, "
           "MSCCL_MAX_NUM_THREAD_BLOCKS = 32 per channel x MAXCHANNELS (32, src/include/devcomm.h), "
           "MSCCL_MAX_COUNT 72",
           frozenset(("s", "r", "rcs", "rrs", "rrc", "rrcs", "cpy", "re", "nop")),
           "Azure/msccl-executor-nccl (commit c6f6b36): src/device/msccl_kernel.cu runs recvCopySend, "
           "recvReduceSend, recvReduceCopySend and recvReduceCopy with no fullOps switch; its parser "
           "(src/misc/msccl/msccl_parser.cc) knows no 'ra'",
           tuple((c, f"msccl-executor has no {c}: msccl-executor-nccl exposes no nccl{c.title()} (src/nccl.h.in:"
                     f"314-435), so a {c} program loads (src/misc/msccl/msccl_parser.cc:333-373) but is never "
                     "selected (src/collectives.cc sends only broadcast and reduce of the rooted calls to "
                     "mscclEnqueueCheck, :150-154, :188-192); export for rccl, which runs it")
                 for c in ("gather", "scatter"))),
    Target("msccl", "msccl", 256, 108 * 2, 32, 32, 72,
           "microsoft/msccl src/include/msccl.h (commit 75e5896): MSCCL_MAX_NUM_STEPS 256, "
           "MSCCL_MAX_NUM_THREAD_BLOCKS 108*2, MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL 32, MSCCL_MAX_COUNT 72",
           frozenset(STEP_TYPES),
           "microsoft/msccl src/collectives/device/msccl_interpreter.h: every step type, MSCCL_RES_ADD ('ra') "
           "included",
           tuple((c, f"msccl has no {c}: microsoft/msccl's reader takes coll allreduce, allgather, reduce, "
                     "broadcast, alltoall, reduce_scatter or custom only (src/graph/topo.cc:822-845) and, like NCCL, "
                     f"it has no nccl{c.title()} call; export for rccl, which runs it") for c in ("gather", "scatter"))),
)}


def target(name: "str | Target") -> Target:
    """The target called ``name`` (``TARGETS``); ValueError naming the choices otherwise."""
    if isinstance(name, Target):
        return name
    try:
        return TARGETS[name]
    except KeyError:
        raise ValueError(f"unknown runtime {name!r} (choose from {', '.join(TARGETS)})") from None


@dataclass(slots=True)
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


@dataclass(slots=True)
class Tb:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[Step] = field(default_factory=list)


@dataclass(slots=True)
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


class OverLimit(XmlError, NotApplicable):
    """A program over one of a runtime reader's limits (``what``: "XML nodes per rank", "channels", "threadblocks
    per rank", "steps per threadblock", "chunks per loop"): ``reached``, the count the program needed (0 where only
    "more than the limit" is known), against ``limit``. Both an XmlError and a NotApplicable, as each of these
    refusals used to be one or the other; ``export`` coarsens the schedule on it before refusing
    (``coarsen.py``)."""

    def __init__(self, message: str, what: str, reached: int, limit: int):
        super().__init__(message)
        self.what, self.reached, self.limit = what, int(reached), int(limit)

    def __reduce__(self):           # pickled whole: a bundle's worker processes send it back
        return OverLimit, (str(self), self.what, self.reached, self.limit)
