"""The README inside an export bundle (``bundle.Bundle.zip_bytes``): the environment that enables the files in
each runtime, the conditions under which a call runs one, a table of the files and the step types they use."""
from __future__ import annotations

from .program import STEP_TYPES, TARGETS
from .tuning import PROTOCOL_SOURCE

ALGO_DIR = "msccl-algorithms"

ENABLE = {
    "rccl": ["export RCCL_MSCCL_ENABLE=1        # RCCL's default",
             "export RCCL_MSCCL_FORCE_ENABLE=1  # use the files on GPUs where RCCL does not enable MSCCL itself",
             f"export MSCCL_ALGO_DIR=$PWD/{ALGO_DIR}"],
    "msccl-executor": ["export NCCL_MSCCL_ENABLE=1        # the default",
                       f"export MSCCL_ALGO_DIR=$PWD/{ALGO_DIR}",
                       "# its internal scheduler only picks files where NCCL's topology detection enables MSCCL;",
                       "# elsewhere load them through an external scheduler (MSCCL_SCHEDULER=libmsccl-scheduler.so)"],
    "msccl": [f"export MSCCL_XML_FILES=$(ls $PWD/{ALGO_DIR}/*.xml | paste -sd:)",
              "export NCCL_ALGO=MSCCL,RING,TREE"],
}


def readme(b) -> str:
    """The README of bundle ``b`` (``bundle.Bundle``): how to enable its files, when a call runs one, one row per
    file, the step types its files use (all among the runtime's kernel steps), and the bundle's notes."""
    used = {t for f in b.files for t in f.report.step_types}
    lines = [f"# {b.root}: MSCCL programs for {b.runtime}", "",
             f"{b.collective.value} on {b.files[0].report.ranks if b.files else '?'} ranks, written by Topology "
             "Studio. Every file was validated against the runtime's reader rules and limits and simulated "
             "symbolically before it was written.", "",
             "## Enable", "", "```sh", *ENABLE[b.runtime], "```", "",
             f"Step types used: {' '.join(t for t in STEP_TYPES if t in used)} (the kernels of {b.runtime} run "
             f"{' '.join(t for t in STEP_TYPES if t in TARGETS[b.runtime].kernel_steps)}).", "",
             "A call runs a file when its collective and number of ranks match, minBytes <= bytes <= maxBytes "
             "(maxBytes 0: no upper limit; allgather and reduce-scatter count the whole buffer), its element count "
             "is a multiple of the file's nchunksperloop, and its placement (in place or out of place) matches. "
             "Any other call runs the runtime's own algorithms without a word: check the runtime's debug log "
             "(NCCL_DEBUG=INFO) to see which calls used these files.", "",
             "## Files", "",
             "| file | call | protocol | copies | bytes | count multiple of | threadblocks/rank | steps/threadblock "
             "| modelled time (us) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for f, row in zip(b.files, b.rows()):
        lines.append(f"| {row['file']} | {row['call']} | {row['protocol']} | {row['copies']} | "
                     f"{row['min_bytes']}..{row['max_bytes']} | {row['count_multiple_of']} | "
                     f"{row['threadblocks_per_rank']} | {row['steps_per_threadblock']} | "
                     f"{row['modelled_us_low']} at {f.choice.sizes[0]} B .. {row['modelled_us_high']} at "
                     f"{f.choice.sizes[-1]} B |")
    lines += ["", "Protocols and copies were chosen per size range with the studio's runtime model, charging each "
              f"protocol's costs from NCCL's tuning model ({PROTOCOL_SOURCE}). The times are the model's, not "
              "measurements."]
    if b.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in b.notes]
    return "\n".join(lines) + "\n"
