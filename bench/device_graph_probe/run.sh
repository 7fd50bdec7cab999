#!/usr/bin/env bash
# Loads a graph file written by solvers.export.nccl_graph (default: the recorded one-GPU file,
# tests/data/real/h100-nccl-2.28.9/studio-graph.xml) into the real NCCL through PyTorch on a one-GPU host
# (NCCL_GRAPH_FILE), with two broken variants (a decimal dev="10", an <?xml?> declaration), and records what
# NCCL's loader made of each: the exit code, the channels it read, its warnings. Output in $OUT (default ./probe).
set -u
out=${OUT:-./probe}; mkdir -p "$out"
root=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-$root/tests/data/real/h100-nccl-2.28.9/studio-graph.xml}
cp "$src" "$out/ours.xml"
sed '0,/<gpu dev="0"\/>/s//<gpu dev="10"\/>/' "$src" > "$out/bad_dev10.xml"
{ echo '<?xml version="1.0"?>'; cat "$src"; } > "$out/bad_decl.xml"
for f in ours bad_dev10 bad_decl; do
  NCCL_GRAPH_FILE="$out/$f.xml" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH,ENV MASTER_ADDR=127.0.0.1 \
  MASTER_PORT=29512 timeout 120 python3 - > "$out/$f.log" 2>&1 <<'PY'
import torch, torch.distributed as dist
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(1 << 20, device="cuda"); dist.all_reduce(x); torch.cuda.synchronize()
print("allreduce ok", float(x[0])); dist.destroy_process_group()
PY
  echo "== $f rc=$?"; grep -E "GRAPH_FILE|Pattern|not found|WARN|rror|allreduce ok" "$out/$f.log" | head -8
done
