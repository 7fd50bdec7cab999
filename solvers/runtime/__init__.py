"""The runtime model: how long a verified schedule takes on its fabric, as a runtime executes it
(docs/ARCHITECTURE.md, "The runtime model"). Every time the studio shows comes from here.

Semantics (one paragraph for users; the Learn page says the same):

* the buffer of M bytes is cut into the schedule's pieces (shards of M/N, cut as the schedule cuts them);
* everything a link carries in one step is one send (``dag.message_graph``); it starts when the data it carries
  has arrived at its sender (copies: the first arrival; reductions: every partial sum received before) and the
  link is free, and holds the link for alpha_l + bytes / bandwidth_l (GB/s = 1e3 bytes per microsecond); switch
  ports are links and switches store and forward;
* pipelining: P >= 1 slices of the buffer follow each other through the schedule (the runtime's loop over the
  buffer): slice k's step t runs in wave k + t, and a link serves its sends in wave order, in a wave in step
  order (with P = 1, plain step order); the model tries P = 1, 2, 4, ... (at most
  ``Execution.max_slices``, and no slice below ``Execution.min_slice_bytes``) and keeps the fastest.

Not modelled: protocol overheads beyond alpha (LL flags, LL128 packing), congestion control, GPU compute
(reductions and copies are free, except as below), and the runtime's limits on threadblocks; a link is either
busy or free.

Local reductions. A runtime whose kernels have no fused receive-reduce steps (RCCL: ``solvers.export`` lowers
each reducing receive as ``r`` into scratch and an ``re`` on the same threadblock) pays for every reduced byte
a second pass of the receiving threadblock: ``Model.with_local_reductions(gbs)`` adds reduced bytes / gbs to
each message that reduces, on its link (the threadblock that serves the connection runs ``r``, ``re``, ``r``,
``re``, so the next receive on that link waits for the reduction). ``LOCAL_REDUCE_GBS`` = 40 GB/s: the most one
threadblock moves in NCCL's own model (the Simple protocol's per-channel speed, ``solvers.export.tuning``), i.e.
0.025 us per KB reduced; no extra alpha (the ``re`` waits for no peer).

Link prices. ``Execution()`` uses each link's own alpha and bandwidth; ``Execution.alpha_beta(alpha_us, B)``
charges alpha for every send a compute node makes (a switch forwards without a new alpha, so a GPU-to-GPU send
through a switch costs one alpha, as in the direct-connect view) and scales bandwidths so that the slowest
compute node's egress is B GB/s (the papers' alpha-beta model: on a d-regular unit-link graph every link gets
B/d).

The workload (M and one price list) that every page and command prices with is ``workload.Workload``.

Public: ``simulate(topo, schedule, total_bytes, execution) -> RuntimeResult``; ``Model`` keeps one schedule's
message graph for many sizes (``Model.run``, ``Model.times``); ``Execution``; ``busbw_factor``; ``bound_time_us``,
the tightest lower bound we prove on the model's time (``bounds.py``, named by ``bounds.tightest_bound``).
"""
from __future__ import annotations

from .dag import busbw_factor, message_graph
from .bounds import bound_time_us
from .model import LOCAL_REDUCE_GBS, Execution, Model, RuntimeResult, simulate
from .workload import DEFAULT as DEFAULT_WORKLOAD, Priced, Workload, WorkloadError, read_price_file

__all__ = ["DEFAULT_WORKLOAD", "LOCAL_REDUCE_GBS", "Execution", "Model", "Priced", "RuntimeResult", "Workload",
           "WorkloadError", "bound_time_us", "busbw_factor", "message_graph", "read_price_file", "simulate"]
