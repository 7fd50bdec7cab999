"""Issue 58, share C: hostile machine imports, many imports in one go, and the results cache's replies.

* ``nvidia-smi topo -m`` cells ``NV#`` above the most NVLinks NCCL probes on one GPU (18) are refused;
* NCCL topology XML whose ``<pci>`` elements repeat a bus id, or whose GPU has an NVLink to itself, or whose GPU
  adds up more than 18 NVLinks, is refused in one line (no self-loop, no silent parallel link is built);
* 40 files named in one comma-joined argument in the current folder, 256 boxes named by full paths longer than
  the OS's path limit, a folder of topology files and a glob are all read; a folder where a file is expected is
  named in one line;
* a cached reply or result replaced by a folder (empty or not) is a miss: the command answers and ``cache
  clear`` works; ``TOPOLOGY_STUDIO_CACHE`` naming a file is refused by every command that reads the cache, and a
  relative value is refused without creating a folder in the current directory.

Every command runs in a child process with a timeout and a memory limit (``_run``): a hang or a blow-up fails the
test instead of the suite."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from topologies import TopologyError, load
from topologies.imports import read_import
from topologies.nccl_topo import from_nccl_topology
from topologies.smi import from_nvidia_smi

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "examples" / "nccl-topo-dgx-a100.xml"
MEMORY = 1536 * 2 ** 20


def _limit():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _run(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 20):
    """``python -m studio ARGS`` in a child under 1.5 GB of address space and ``timeout`` seconds."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "studio", *args], cwd=cwd or ROOT, env=environ,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=_limit)


def _one_error(proc, *words: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode != 0 and len(lines) == 1, (proc.returncode, proc.stderr[-2000:])
    assert lines[0].startswith("error: ") and all(w in lines[0] for w in words), lines[0]
    return lines[0]


# -- nvidia-smi topo -m

def _smi(cell: str) -> str:
    return ("\tGPU0\tGPU1\tGPU2\tCPU Affinity\n"
            f"GPU0\t X \t{cell}\tSYS\t0-7\n"
            f"GPU1\t{cell}\t X \tSYS\t0-7\n"
            "GPU2\tSYS\tSYS\t X \t0-7\n")


@pytest.mark.parametrize("cell", ["NV999", "NV19", "NV100"])
def test_smi_nvlink_counts_above_ncclS_per_gpu_maximum_are_refused(cell, tmp_path):
    with pytest.raises(TopologyError) as info:
        from_nvidia_smi(_smi(cell), name="smi.txt")
    message = str(info.value)
    assert cell in message and "18" in message and "\n" not in message and message.startswith("smi.txt")
    path = tmp_path / "smi.txt"
    path.write_text(_smi(cell))
    _one_error(_run("topo", str(path)), "smi.txt", cell)


def test_smi_nv18_the_most_ncclS_probes_is_read():
    topo = from_nvidia_smi(_smi("NV18")).topology
    assert max(l.bandwidth for l in topo.links) == 18 * 20


def test_smi_direct_nvlinks_adding_up_above_18_on_a_gpu_are_refused():
    """An NVSwitch box with one pair a link short (NV12 everywhere, NV11 once) is not a box of direct links of 12:
    refused, not priced as 83 NVLinks per GPU."""
    rows = ["\t" + "\t".join(f"GPU{j}" for j in range(8))]
    for g in range(8):
        cells = ["X" if g == j else "NV11" if {g, j} == {0, 1} else "NV12" for j in range(8)]
        rows.append(f"GPU{g}\t" + "\t".join(cells))
    with pytest.raises(TopologyError, match=r"row GPU0: its NV# cells add up to 83 NVLinks, above the 18"):
        from_nvidia_smi("\n".join(rows) + "\n", name="smi.txt")


# -- NCCL topology XML

def _gpu(dev: int, busid: str, links: str = "") -> str:
    return (f'<pci busid="{busid}" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">'
            f'<gpu dev="{dev}" sm="80" rank="{dev}" gdr="1">{links}</gpu></pci>')


def _bridge(busid: str, inside: str) -> str:
    return f'<pci busid="{busid}" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">{inside}</pci>'


def _system(inside: str) -> str:
    return f'<system version="1"><cpu numaid="0" arch="x86_64" vendor="AuthenticAMD">{inside}</cpu></system>'


def _to(busid: str, count: int = 2, tclass: str = "0x030200") -> str:
    return f'<nvlink target="{busid}" count="{count}" tclass="{tclass}"/>'


@pytest.mark.parametrize("text, words", [
    # two PCIe switches with one bus id: the old reader made one node of both, joined twice to the CPU
    (_system(_bridge("0000:03:00.0", _gpu(0, "0000:04:00.0")) + _bridge("0000:03:00.0", _gpu(1, "0000:05:00.0"))),
     ["0000:03:00.0", "repeated"]),
    # a PCIe switch inside itself (the tree's cycle): the old reader linked the node to itself
    (_system(_bridge("0000:03:00.0", _bridge("0000:03:00.0", _gpu(0, "0000:04:00.0") + _gpu(1, "0000:05:00.0")))),
     ["0000:03:00.0", "repeated"]),
    # two GPUs at one bus id: every NVLink to it went to one of them
    (_system(_gpu(0, "0000:04:00.0", _to("0000:05:00.0")) + _gpu(1, "0000:04:00.0", _to("0000:05:00.0"))),
     ["0000:04:00.0", "repeated"]),
    # a GPU with an NVLink to itself: the old reader built a self-loop
    (_system(_gpu(0, "0000:04:00.0", _to("0000:04:00.0") + _to("0000:05:00.0"))
             + _gpu(1, "0000:05:00.0", _to("0000:04:00.0"))), ["GPU 0", "itself"]),
    # 24 NVLinks on one sm 80 GPU: NCCL probes 12 there (18 from sm 90 on)
    (_system(_gpu(0, "0000:04:00.0", _to("0000:c0:00.0", 12, "0x068000") + _to("0000:c1:00.0", 12, "0x068000"))
             + _gpu(1, "0000:05:00.0", _to("0000:c0:00.0", 12, "0x068000"))), ["GPU 0", "24 NVLinks", "12", "sm 80"]),
])
def test_nccl_xml_a_machine_cannot_have_is_refused_in_one_line(text, words, tmp_path):
    with pytest.raises(TopologyError) as info:
        from_nccl_topology(text, "bad.xml")
    message = str(info.value)
    assert message.startswith("bad.xml") and "\n" not in message and all(w in message for w in words), message
    path = tmp_path / "bad.xml"
    path.write_text(text)
    _one_error(_run("topo", str(path)), "bad.xml", *words)


def test_ncclS_own_files_still_read_without_self_loops_or_parallel_links():
    for path in (SAMPLE, ROOT / "tests" / "data" / "real" / "h100-nccl-2.28.9" / "nccl-topo-dump.xml"):
        topo = read_import(path).topology
        pairs = [(l.src, l.dst) for l in topo.links]
        assert all(a != b for a, b in pairs) and len(pairs) == len(set(pairs))


# -- many imports in one go

def _small_box() -> str:
    """Two GPUs joined by NVLink and one NIC: a box of 3 nodes, so 256 of them fit the default node limit."""
    nic = ('<pci busid="0000:0c:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">'
           '<nic><net name="mlx5_0" dev="0" speed="200000"/></nic></pci>')
    return _system(_gpu(0, "0000:04:00.0", _to("0000:05:00.0")) + _gpu(1, "0000:05:00.0", _to("0000:04:00.0"))
                   + nic)


def test_forty_files_comma_joined_in_the_current_folder_are_read(tmp_path):
    names = [f"node{i:02d}.xml" for i in range(40)]
    for name in names:
        (tmp_path / name).write_text(_small_box())
    joined = ",".join(names)
    assert len(joined) > 255                   # longer than one file name may be: "File name too long" before
    proc = _run("topo", joined, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-1000:]
    got = json.loads(proc.stdout)
    assert got["nodes"] == 80 and got["switches"] == 41             # 2 GPUs and a NIC a box, one network switch


def test_256_boxes_by_full_paths_longer_than_path_max_are_read(tmp_path):
    deep = tmp_path
    for i in range(4):
        deep = deep / (f"level{i}_" + "x" * 40)
    deep.mkdir(parents=True)
    paths = []
    for i in range(256):
        p = deep / f"box{i:03d}.xml"
        p.write_text(_small_box())
        paths.append(str(p))
    joined = ",".join(paths)
    assert len(joined) > 4096                  # PATH_MAX: the joined text is no path the OS can take
    topo = load(joined, max_nodes=2048)
    assert topo.n == 512 and len(topo.names) == 256 * 3 + 1        # 2 GPUs and a NIC a box, one network switch
    proc = _run("topo", joined, "--max-nodes", "2048", timeout=60)
    assert proc.returncode == 0, proc.stderr[-1000:]


def test_a_folder_and_a_glob_of_topology_files_are_boxes(tmp_path):
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    for i in range(3):
        (boxes / f"n{i}.xml").write_text(_small_box())
    (boxes / "README.md").write_text("not a box")
    assert load(str(boxes)).n == 6 and load(f"{boxes}/").n == 6
    assert load(str(boxes / "*.xml")).n == 6 and load(str(boxes / "n[01].xml")).n == 4
    assert _run("topo", str(boxes)).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TopologyError, match=r"empty.*no \.xml file"):
        load(str(empty))
    with pytest.raises(TopologyError, match=r"no file matches"):
        load(str(boxes / "zz*.xml"))


def test_a_folder_given_as_an_import_is_named_with_what_is_wrong(tmp_path):
    folder = tmp_path / "dir.xml"
    folder.mkdir()
    line = _one_error(_run("topo", str(folder)), str(folder))
    assert "folder" in line and "Is a directory" not in line
    line = _one_error(_run("topo", f"{SAMPLE},{folder}"), str(folder), "folder")
    assert not line.startswith("error: 3") and not line.startswith("error: 4")


# -- the results cache

def _answer(stdout: str) -> list[str]:
    """What a forestcoll reply says, without its timings."""
    return [line for line in stdout.splitlines() if not line.startswith("seconds")]


def _cache_env(tmp_path) -> dict:
    return {"TOPOLOGY_STUDIO_CACHE": str(tmp_path / "cache")}


@pytest.mark.parametrize("full", [False, True])
def test_a_cached_reply_replaced_by_a_folder_is_a_miss_and_cache_clear_works(tmp_path, full):
    env = _cache_env(tmp_path)
    first = _run("forestcoll", "ring(4)", env=env)
    assert first.returncode == 0, first.stderr
    replies = list((tmp_path / "cache").glob("reply-*.result"))
    assert replies
    for entry in replies:
        entry.unlink()
        entry.mkdir()
        if full:
            (entry / "inside").write_text("x")
    again = _run("forestcoll", "ring(4)", env=env)
    assert again.returncode == 0 and _answer(again.stdout) == _answer(first.stdout), again.stderr
    assert "Traceback" not in again.stderr
    cleared = _run("cache", "clear", env=env)
    assert cleared.returncode == 0 and "Traceback" not in cleared.stderr, cleared.stderr
    assert not [p for p in (tmp_path / "cache").glob("*.result") if p.is_file()]


def test_a_cached_result_replaced_by_a_folder_is_a_miss(tmp_path):
    env = _cache_env(tmp_path)
    args = ("schedule", "ring(4)", "--algo", "ring", "--collective", "allgather")
    first = _run(*args, env=env)
    assert first.returncode == 0, first.stderr
    for entry in (tmp_path / "cache").glob("*.result"):
        entry.unlink()
        entry.mkdir()
        (entry / "inside").mkdir()
    again = _run(*args, "--no-cache", env=env)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert _run("cache", "clear", env=env).returncode == 0


@pytest.mark.parametrize("args", [("forestcoll", "ring(4)"), ("find", "--nodes", "4", "--degree", "2"),
                                  ("calibrate", "--topo", "ring(4)", "no-such.log"),
                                  ("schedule", "ring(4)", "--algo", "ring"), ("cache", "info")])
def test_every_command_refuses_a_cache_setting_that_names_a_file(args, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("x")
    proc = _run(*args, env={"TOPOLOGY_STUDIO_CACHE": str(plain)})
    _one_error(proc, "TOPOLOGY_STUDIO_CACHE", str(plain))
    assert proc.returncode == 2


@pytest.mark.parametrize("value", ["junk", "rel/cache", "~nosuchuser-58/cache", "./x"])
def test_a_relative_cache_setting_is_refused_and_creates_no_folder(value, tmp_path):
    before = sorted(os.listdir(tmp_path))
    proc = _run("forestcoll", "ring(4)", cwd=tmp_path, env={"TOPOLOGY_STUDIO_CACHE": value})
    _one_error(proc, "TOPOLOGY_STUDIO_CACHE", "absolute")
    assert sorted(os.listdir(tmp_path)) == before


def test_the_library_never_makes_a_relative_cache_folder(tmp_path, monkeypatch):
    from solvers.results_cache import ResultsCache, cached_synthesize
    from topologies import parse_topology

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOPOLOGY_STUDIO_CACHE", "junk")
    warned = []
    result, hit = cached_synthesize(parse_topology("ring(4)"), "ring", "allgather", cache=ResultsCache.default(),
                                    warn=warned.append)
    assert result.verification.ok and hit is None and os.listdir(tmp_path) == []
    assert warned and all("absolute" in w for w in warned)


def test_a_reply_for_a_folder_or_a_long_list_follows_every_file_it_names(tmp_path):
    """The reply key hashes each file a folder, a glob or a list longer than 4096 characters names: a file changed
    in it is solved again, never answered from the old reply."""
    deep = tmp_path / ("d" * 200)
    deep.mkdir()
    paths = []
    for i in range(30):
        p = deep / f"box{i:02d}.xml"
        p.write_text(_small_box())
        paths.append(str(p))
    env = _cache_env(tmp_path)
    for spec in (str(deep), str(deep / "*.xml"), ",".join(paths)):
        first = _run("forestcoll", spec, env=env, timeout=60)
        assert first.returncode == 0, first.stderr[-1000:]
        assert "answered from the results cache" in _run("forestcoll", spec, env=env, timeout=60).stderr
        Path(paths[-1]).write_text(_small_box().replace('count="2"', 'count="4"'))
        again = _run("forestcoll", spec, env=env, timeout=60)
        assert again.returncode == 0 and "answered from the results cache" not in again.stderr
        Path(paths[-1]).write_text(_small_box())


def test_a_fifo_in_an_import_folder_is_named_not_waited_on(tmp_path):
    boxes = tmp_path / "boxes"
    boxes.mkdir()
    (boxes / "a.xml").write_text(_small_box())
    os.mkfifo(boxes / "b.xml")
    _one_error(_run("topo", str(boxes)), "b.xml", "FIFO")


def test_a_run_naming_more_than_the_hash_budget_is_not_replied(tmp_path, monkeypatch):
    """Files past ``MAX_HASHED_BYTES`` in all are not hashed (a folder of 256 large files would be read whole
    before the command refuses the first): the run has no reply key and simply runs."""
    from argparse import Namespace

    from studio.cli import replies

    boxes = tmp_path / "boxes"
    boxes.mkdir()
    for i in range(3):
        (boxes / f"n{i}.xml").write_text(_small_box())
    args = Namespace(command="forestcoll", expr=str(boxes))
    assert replies.reply_key(args) is not None
    monkeypatch.setattr(replies, "MAX_HASHED_BYTES", 2 * len(_small_box()))
    assert replies.reply_key(args) is None
