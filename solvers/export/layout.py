"""What an MSCCL file's buffers must hold, read off its header, shared by the object checker (``check.py``) and
the column checker (``flat_check.py``): microsoft/msccl's rule on a rank's buffer sizes (``chunks_agree``), the
root a rooted file is checked for (``file_root``) and a rooted file's inputs and postcondition
(``rooted_layout``; ``lower.py``'s layouts)."""
from __future__ import annotations

from .program import ROOTED, Algo, root_in_name

__all__ = ["chunks_agree", "file_root", "rooted_layout"]


def chunks_agree(coll: str, ngpus: int, nchunks: int, i_chunks: int, o_chunks: int) -> bool:
    """microsoft/msccl's reader's rule on a rank's buffers (src/graph/topo.cc:824-841, 886-889): i_chunks (times
    ngpus for allgather) and o_chunks (times ngpus for reduce_scatter) each 0 or nchunksperloop."""
    i_times = ngpus if coll == "allgather" else 1
    o_times = ngpus if coll == "reduce_scatter" else 1
    return not ((i_chunks > 0 and i_chunks * i_times != nchunks) or (o_chunks > 0 and o_chunks * o_times != nchunks))


def rooted_layout(coll: str, ngpus: int, nchunks: int, root: int | None, in_place: bool):
    """For a rooted file (``program.ROOTED``; ``lower.py``'s layouts): (P, the chunks of one rank's part;
    ``inputs``, rank -> (buffer, chunks) its input fills from chunk 0, value (k, the rank); ``results``, rank ->
    (buffer, count, base, modulo, who): chunk k < count of the buffer must end as value index base + k % modulo
    holding the contribution of ``who``: "root", "all" ranks (reduced, each once) or "part" (rank k // modulo);
    ``forbidden``, the (rank, buffer) pairs the program may not write). ``coll`` is the file's spelling. Broadcast
    and reduce count the whole buffer (P = nchunksperloop / N), gather and scatter one rank's part
    (P = nchunksperloop): the runtimes' count x sizeMultiplier / nchunksperloop, sizeMultiplier 1 for all four
    (msccl-executor-nccl src/misc/msccl/msccl_parser.cc:330-373, msccl_setup.cc:475)."""
    n = ngpus
    parts = coll in ("gather", "scatter")
    per = nchunks if parts else (nchunks // n if n else 0)
    whole, step = (n * per if parts else max(nchunks, 0)), max(per, 1)   # broadcast, reduce: every chunk of count
    inputs, results, forbidden = {}, {}, set()
    for r in range(n):
        forbidden.add((r, "i"))                 # the caller's send buffer (the root's, or each rank's contribution)
        if coll == "broadcast":
            if r == root:
                inputs[r] = ("o" if in_place else "i", whole)
            results[r] = ("o", whole, 0, max(whole, 1), "root")
        elif coll == "reduce":
            inputs[r] = ("o" if in_place and r == root else "i", whole)
            if r == root:
                results[r] = ("o", whole, 0, max(whole, 1), "all")
            else:
                forbidden.add((r, "o"))         # a reduce's recvbuff is significant at the root only
        elif coll == "gather":
            inputs[r] = ("i", per)
            if r == root:
                results[r] = ("o", whole, 0, step, "part")
            else:
                forbidden.add((r, "o"))
        else:                                   # scatter
            if r == root:
                inputs[r] = ("i", whole)
            results[r] = ("o", per, r * per, step, "root")
    return per, inputs, results, forbidden


def file_root(algo: Algo, root: int | None = None) -> tuple[int | None, str | None]:
    """(the root a rooted file is checked for: ``root`` when given, else the one its name carries; a problem, or
    None)."""
    if algo.coll not in ROOTED:
        return None, None
    if root is None:
        root = root_in_name(algo.name)
    if root is None:
        return None, (f"coll={algo.coll} has a root, which MSCCL XML does not carry: the file's name must say "
                      "root=R (as export writes it), or give the root to check for (check-xml --root)")
    if not 0 <= root < algo.ngpus:
        return None, f"the {algo.coll}'s root {root} is not a rank of this {algo.ngpus}-rank file"
    return root, None
