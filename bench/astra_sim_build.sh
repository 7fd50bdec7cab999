#!/usr/bin/env bash
# Build ASTRA-sim 2.0's analytical network backends (congestion-aware and -unaware) offline, from local git copies.
#
#   ASTRA_SOURCES=/folder/with/git/copies  ASTRA_BUILD=/where/to/build  bash bench/astra_sim_build.sh
#
# ASTRA_SOURCES holds one git repository per project, found as <owner>+<name>/repo, <owner>+<name>, <name> or
# <name>.git (set ASTRA_ONLINE=1 to clone the missing ones from GitHub instead). The pins are those that built here:
# astra-sim 518bd513; three of its submodule pins were not in the copies, so chakra f37c2bb,
# astra-network-analytical 599a047 and spdlog 62302019 (v1.x) stand in for them. Two local patches follow the
# notes: the analytical backend adds its own yaml-cpp only when no target of that name exists yet, and chakra's
# feeder_v3/et_feeder.h also declares Chakra::ETFeeder (astra-sim refers to it there).
# Needs cmake >= 3.22, g++ (C++17), libprotobuf-dev and protobuf-compiler (Debian: apt-get install cmake g++
# libprotobuf-dev protobuf-compiler). About 10 minutes with -j2. The binaries end up in
# $ASTRA_BUILD/astra-sim/build/astra_analytical/build/bin/; point ASTRA_SIM_BIN at
# AstraSim_Analytical_Congestion_Aware for bench/astra_sim.py.
set -euo pipefail

: "${ASTRA_SOURCES:?set ASTRA_SOURCES to the folder holding the git copies}"
: "${ASTRA_BUILD:?set ASTRA_BUILD to an empty folder outside the repository}"
JOBS="${JOBS:-2}"

ASTRA_SIM_REV=518bd513
CHAKRA_REV=f37c2bb
NETWORK_REV=599a047
MEMORY_REV=641cce8
FMT_REV=7e73566
SPDLOG_REV=62302019
YAML_REV=a83cd31

repo_dir() {  # owner name -> path of a local git copy (cloned when ASTRA_ONLINE=1)
  local owner="$1" name="$2" d
  for d in "$ASTRA_SOURCES/$owner+$name/repo" "$ASTRA_SOURCES/$owner+$name" "$ASTRA_SOURCES/$name" \
           "$ASTRA_SOURCES/$name.git"; do
    if git -C "$d" rev-parse --git-dir >/dev/null 2>&1; then echo "$d"; return; fi
  done
  if [[ "${ASTRA_ONLINE:-0}" == 1 ]]; then
    git clone --quiet "https://github.com/$owner/$name.git" "$ASTRA_SOURCES/$owner+$name"
    echo "$ASTRA_SOURCES/$owner+$name"; return
  fi
  echo "no git copy of $owner/$name under $ASTRA_SOURCES" >&2; exit 2
}

unpack() {  # owner name rev destination: the tree of rev, without .git
  local src; src="$(repo_dir "$1" "$2")"
  rm -rf "$4"; mkdir -p "$4"
  # Large files a partial copy lacks (test data) are left out rather than failing the archive.
  local -a skip=()
  while read -r _ _ sha path; do
    if ! git -C "$src" cat-file -e "$sha" 2>/dev/null; then skip+=(":(exclude)$path"); fi
  done < <(git -C "$src" ls-tree -r "$3" | awk '$2 == "blob"')
  git -C "$src" archive "$3" -- . "${skip[@]}" | tar -x -C "$4"
}

ROOT="$ASTRA_BUILD/astra-sim"
unpack astra-sim astra-sim "$ASTRA_SIM_REV" "$ROOT"
unpack astra-sim chakra "$CHAKRA_REV" "$ROOT/extern/graph_frontend/chakra"
unpack astra-sim astra-network-analytical "$NETWORK_REV" "$ROOT/extern/network_backend/analytical"
unpack astra-sim astra-memory-analytical "$MEMORY_REV" "$ROOT/extern/remote_memory_backend/analytical"
unpack fmtlib fmt "$FMT_REV" "$ROOT/extern/helper/fmt"
unpack gabime spdlog "$SPDLOG_REV" "$ROOT/extern/helper/spdlog"
unpack jbeder yaml-cpp "$YAML_REV" "$ASTRA_BUILD/yaml-cpp"

# Patch 1: the analytical backend's yaml-cpp only when astra-sim's (FetchContent) is not there already.
NET_CMAKE="$ROOT/extern/network_backend/analytical/CMakeLists.txt"
sed -i 's|^add_subdirectory(${CMAKE_CURRENT_SOURCE_DIR}/extern/yaml-cpp yaml-cpp)|if(NOT TARGET yaml-cpp)\n  &\nendif()|' "$NET_CMAKE"
grep -q 'if(NOT TARGET yaml-cpp)' "$NET_CMAKE"
# Patch 2: Chakra::ETFeeder as astra-sim's CustomAlgorithm.hh names it.
FEEDER_H="$ROOT/extern/graph_frontend/chakra/src/feeder_v3/et_feeder.h"
sed -i 's|^} // namespace FeederV3|&\nusing ETFeeder = FeederV3::ETFeeder;|' "$FEEDER_H"
grep -q '^using ETFeeder = FeederV3::ETFeeder;' "$FEEDER_H"

# The Chakra ET schema compiled for C++ (astra-sim's own build.sh does the same).
PROTO_DIR="$ROOT/extern/graph_frontend/chakra/schema/protobuf"
protoc et_def.proto --proto_path="$PROTO_DIR" --cpp_out="$PROTO_DIR"

BUILD_DIR="$ROOT/build/astra_analytical/build"
mkdir -p "$BUILD_DIR"
cmake -S "$ROOT/build/astra_analytical" -B "$BUILD_DIR" -DBUILDTARGET=all -DCMAKE_BUILD_TYPE=Release \
  -DFETCHCONTENT_FULLY_DISCONNECTED=ON -DFETCHCONTENT_SOURCE_DIR_YAML-CPP="$ASTRA_BUILD/yaml-cpp"
cmake --build "$BUILD_DIR" -j "$JOBS"
ls -l "$BUILD_DIR/bin/"
