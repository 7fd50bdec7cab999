"""The MSCCL++ execution plan format this package writes and reads: the executor's names and limits
(``OP_NAMES``, ``MAX_OPERATION``, ...), ``PlanError``, and the small helpers that the writer (``plan.py``) and the
checker (``reader.py``, ``op_rules.py``, ``simulate.py``) share. The sources the package cites ([P], [C], [E],
[K], [D]) are pinned here.

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
"""
from __future__ import annotations

from ..program import XmlError

FORMAT = "MSCCL++ execution plan, microsoft/mscclpp@008fbad41a2f3ff6cc08743d2e8332ba2dc9ca99"
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



# ------------------------------------------------------------------------------------------------ shared helpers
def _natural_chunks(coll: str, n: int, per: int) -> tuple[int, int]:
    return {"allgather": (per, n * per), "reducescatter": (n * per, per)}.get(coll, (n * per, n * per))



def _conflict(a: tuple, b: tuple) -> bool:
    """Two accesses (key, first, end, writes) overlap and one of them writes."""
    return a[0] == b[0] and a[1] < b[2] and b[1] < a[2] and (a[3] or b[3])



def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
