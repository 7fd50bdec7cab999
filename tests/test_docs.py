"""The README is a landing page and the docs hold the rest (issue 59, finding 14): the README stays short and shows
the studio (three screenshots, Learn's N = 64 figure among them); every relative link and image of README.md and
docs/*.md names a file in the repository, and every #anchor a heading of its file; docs/cli.md has a section for
every command of ``python -m studio`` and names every one of its flags, and names no flag the CLI lacks.
The docs' commands themselves run in tests/test_readme.py."""
import argparse
import re
from pathlib import Path

import pytest

from studio.cli import parser

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKDOWN = [README] + sorted((ROOT / "docs").glob("*.md"))
CLI = ROOT / "docs" / "cli.md"
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
MAX_README_LINES = 150


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(markdown: str) -> str:
    """The text outside fenced blocks (where a # is a comment, not a heading)."""
    return FENCE.sub("", markdown)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation (backticks, parentheses, colons) dropped, spaces as
    hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(markdown: str) -> list[tuple[int, str]]:
    return [(len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#{1,6}) (.+)$", prose(markdown), re.M)]


def links(markdown: str) -> list[str]:
    return LINK.findall(CODE.sub("", prose(markdown)))


def test_the_readme_is_a_landing_page():
    readme = text(README)
    assert len(readme.splitlines()) <= MAX_README_LINES
    images = [t for t in links(readme) if t.endswith(".png")]
    assert len(images) >= 3
    assert "tests/browser/screenshots/learn-n64.png" in images, "Learn's ring/tree/direct-connect figure at N = 64"
    for doc in ["docs/user-guide.md", "docs/cli.md", "docs/deployment.md", "docs/ARCHITECTURE.md",
                "bench/RESULTS.md"]:
        assert doc in links(readme), f"the README's read-on list lacks {doc}"


@pytest.mark.parametrize("path", MARKDOWN, ids=[p.relative_to(ROOT).as_posix() for p in MARKDOWN])
def test_every_relative_link_and_image_resolves(path):
    own = {slug(h) for _, h in headings(text(path))}
    missing = []
    for target in links(text(path)):
        if re.match(r"[a-z]+:", target):                  # http(s), mailto: not ours to check
            continue
        file, _, anchor = target.partition("#")
        where = (path.parent / file).resolve() if file else path
        if not where.exists() or ROOT not in where.parents:
            missing.append(target)
        elif anchor and where.suffix == ".md":
            anchors = own if where == path else {slug(h) for _, h in headings(text(where))}
            if anchor not in anchors:
                missing.append(target)
    assert not missing, f"{path.name} points at missing files or anchors: {missing}"


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every command and subcommand of ``python -m studio`` ('genmodel plans', ...), with its parser."""
    out = {}

    def walk(p, prefix):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out[f"{prefix} {name}".strip()] = sub
                    walk(sub, f"{prefix} {name}")
    walk(parser(), "")
    return out


def sections(markdown: str) -> dict[str, str]:
    """Each heading's text: everything up to the next heading of its level or above."""
    body = prose(markdown)
    spots = [(m.start(), len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#{1,6}) (.+)$", body, re.M)]
    out = {}
    for i, (start, level, title) in enumerate(spots):
        end = next((s for s, lv, _ in spots[i + 1:] if lv <= level), len(body))
        out[title] = body[start:end]
    return out


def test_the_cli_reference_covers_every_command_and_flag():
    parts = sections(text(CLI))
    shared = "".join(body for title, body in parts.items()
                     if title.startswith(("What every command shares", "The synthesizers")))
    missing = []
    for name, sub in commands().items():
        title = next((t for t in parts if t.startswith(f"`{name}`")), None)
        if title is None:
            missing.append(f"a section for `{name}`")
            continue
        for action in sub._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag != "--help" and flag not in FLAG.findall(parts[title] + shared):
                    missing.append(f"{name} {flag}")
    assert not missing, f"docs/cli.md lacks: {missing}"


def test_the_cli_reference_names_no_flag_the_cli_lacks():
    known = {flag for sub in commands().values() for action in sub._actions for flag in action.option_strings}
    # a benchmark's own flags, written inside its `python -m bench.X ...` span, and other programs' flags
    cli = CODE.sub(lambda m: "" if "bench." in m.group(0) or "smi" in m.group(0) else m.group(0), text(CLI))
    unknown = sorted(set(FLAG.findall(cli)) - known)
    assert not unknown, f"docs/cli.md names flags that python -m studio does not take: {unknown}"
