"""Error messages worded for the web pages.

The libraries word some errors for the command line: the node limit says to raise it with ``--max-nodes`` or
``STUDIO_MAX_NODES``, and a few hints name a flag (``use --algo bfb``). A page has neither, so ``for_page(error)``
gives the one line a page shows instead: the limit as what the page takes, a flag as the page's control, and
any other parenthesis that names a flag or an environment variable dropped.
"""
from __future__ import annotations

import re

_NODE_LIMIT = re.compile(r"above the limit of (\d+) nodes / (\d+) links\s*"
                         r"\(raise it with --max-nodes or STUDIO_MAX_NODES\)")
_USE_ALGO = re.compile(r"\buse --algo ([\w-]+)")
_CLI_ASIDE = re.compile(r"\s*\([^()]*(?:--[a-z][\w-]*|\bSTUDIO_[A-Z_]+\b)[^()]*\)")


def for_page(error: BaseException | str) -> str:
    """The first line of ``error`` with its command-line advice reworded for a page."""
    text = str(error).strip()
    text = text.splitlines()[0] if text else type(error).__name__
    text = _NODE_LIMIT.sub(r"above the limit of \1 nodes / \2 links: too large for this page", text)
    text = _USE_ALGO.sub(r"choose the \1 algorithm", text)
    return _CLI_ASIDE.sub("", text)
