#!/usr/bin/env bash
# What a real GPU host reports about itself, collected for the studio's importers and the runtime model's
# calibration: nvidia-smi's topology matrix and query, and, where PyTorch with NCCL is installed, NCCL's own
# topology and graph dumps (NCCL_TOPO_DUMP_FILE, NCCL_GRAPH_DUMP_FILE) and its INFO log from a one-process
# allreduce. Writes into $OUT (default ./machine). Nothing here needs the network.
set -u
out=${OUT:-./machine}
mkdir -p "$out"
run() { local name=$1; shift; timeout 60 "$@" > "$out/$name" 2>&1; echo "exit $?" >> "$out/$name"; }
run nvidia-smi.txt nvidia-smi
run topo-m.txt nvidia-smi topo -m
run nvidia-smi-q.xml nvidia-smi -q -x
run nvlink-s.txt nvidia-smi nvlink -s
run uname.txt uname -a
(pip list 2>/dev/null || python3 -m pip list 2>/dev/null) | grep -i -E "torch|nccl|cupy|cuda" > "$out/pip.txt"
find / -xdev \( -name 'libnccl*.so*' -o -name 'all_reduce_perf' -o -name 'librccl*.so*' \) 2>/dev/null \
  | head -50 > "$out/found.txt"
python3 - > "$out/nccl-run.txt" 2>&1 <<'PY'
import os, sys
out = os.environ.get("OUT", "./machine")
os.environ.update(NCCL_TOPO_DUMP_FILE=f"{out}/nccl-topo.xml", NCCL_GRAPH_DUMP_FILE=f"{out}/nccl-graph.xml",
                  NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,GRAPH,ENV", MASTER_ADDR="127.0.0.1",
                  MASTER_PORT="29511")
try:
    import torch
    import torch.distributed as dist
except Exception as exc:
    sys.exit(f"no torch: {exc}")
print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(),
      "devices", torch.cuda.device_count())
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print("allreduce ok", float(x[0]))
dist.destroy_process_group()
PY
ls -la "$out"
