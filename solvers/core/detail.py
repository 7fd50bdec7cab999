"""``Detail``: what a synthesizer found beyond its schedule, typed per synthesizer (TACOS's phases, TE-CCL's
status and gap, ForestColl's x* and k ...), with the hooks that place it in ``Result.as_dict``, the CLI's text
table and Compare's rows. See solvers/registry.py and docs/ARCHITECTURE.md.
"""
from __future__ import annotations


class Detail:
    """What a synthesizer found beyond the schedule, typed per synthesizer (TACOS phases, TE-CCL status and gap,
    ForestColl x*, k ...). The hooks below place its fields in ``Result.as_dict`` and Compare's rows."""

    def leading_fields(self) -> dict:
        """Fields shown right after the verification (before ``bw_optimal``)."""
        return {}

    def fields(self, result) -> dict:
        """Fields shown after ``bw_optimal``."""
        return {}

    def timed_fields(self, result, total_bytes: float) -> dict:
        """Fields that need the vector size M, shown after ``time_us``."""
        return {}

    def text_rows(self, out: dict) -> dict:
        """Rows for the CLI's text table, from ``as_dict``'s output ``out`` (default: none beyond ``out``)."""
        return {}

    def hidden_text_keys(self) -> tuple[str, ...]:
        """Keys of ``as_dict`` that ``text_rows`` replaces in the CLI's text table."""
        return ()

    def compare_note(self) -> str:
        """One line for Compare's ``detail`` column."""
        return ""
