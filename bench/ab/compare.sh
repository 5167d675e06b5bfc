#!/bin/sh
# Compares builds of the library call by call in one process (docs/performance.md, "How to compare
# two builds"):
#
#   bench/ab/compare.sh [--rounds N] [--batch-us U] [--filter TEXT] [--list] [--limit]
#                       BASE OTHER...
#
# BASE and each OTHER is a git revision (main, HEAD~1, 83eef0c), "." for the working tree, or a
# directory that holds include/rope; "@FLAGS" after it sets that build's compile flags instead of
# $AB_FLAGS (default "-O3 -march=native -DNDEBUG"): ".@-O3 -march=haswell -DNDEBUG" is the working
# tree's AVX2 kernels. Each build is bench/ab/ab_caller.cpp (of the working tree) compiled against
# that revision's headers into a shared object; a copy of BASE's is the control. ab_driver then
# times every row's call of each build in shuffled rounds over the same buffers and prints, per
# row, BASE's time per call and each build's time over BASE's: the median over the rounds and the
# quartiles. The control's column is what the machine's noise alone gives. --limit adds a column:
# BASE's time over the row's limit (a pass over the same bytes) timed in the same rounds.
#
# The default rows (all but those of 1024 tokens and more: --filter t1024, .., --filter t8192) take
# about two minutes with one other build. $CXX (g++), $AB_EIGEN (the Eigen include directory,
# /usr/include/eigen3) and $AB_WORK (where the builds go, a new directory under ${TMPDIR:-/tmp})
# may be set.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cxx=${CXX:-g++}
eigen=${AB_EIGEN:-/usr/include/eigen3}
default_flags=${AB_FLAGS:-"-O3 -march=native -DNDEBUG"}
work=${AB_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/rope-ab.XXXXXX")}
mkdir -p "$work"

driver_args=""
specs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds|--batch-us|--filter)
      [ $# -ge 2 ] || { echo "compare.sh: $1 needs a value" >&2; exit 2; }
      driver_args="$driver_args $1 '$2'"; shift 2 ;;
    --list|--limit) driver_args="$driver_args $1"; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) specs="$specs
$1"; shift ;;
  esac
done
count=$(printf '%s\n' "$specs" | grep -c . || true)
if [ "$count" -lt 2 ] && ! printf '%s' "$driver_args" | grep -q -- --list; then
  echo "usage: bench/ab/compare.sh [--rounds N] [--batch-us U] [--filter TEXT] [--list] [--limit] BASE OTHER..." >&2
  exit 2
fi

# The headers of a spec into $work/v$i/include (a revision) or where they are (a directory).
headers() {
  spec=$1 i=$2
  if [ "$spec" = "." ]; then
    echo "$root/include"
  elif [ -d "$spec/include/rope" ]; then
    echo "$(cd "$spec" && pwd)/include"
  else
    mkdir -p "$work/v$i"
    git -C "$root" archive "$spec" include | tar -x -C "$work/v$i"
    echo "$work/v$i/include"
  fi
}

i=0
pids=""
labels=""
echo "$specs" | grep . > "$work/specs"
while IFS= read -r full; do
  case "$full" in
    *@*) spec=${full%%@*} flags=${full#*@} ;;
    *) spec=$full flags=$default_flags ;;
  esac
  include=$(headers "$spec" "$i")
  # shellcheck disable=SC2086  # the flags are words
  "$cxx" -std=c++17 $flags -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden \
    -Wl,-Bsymbolic -I "$include" -isystem "$eigen" "$root/bench/ab/ab_caller.cpp" \
    -o "$work/build$i.so" &
  pids="$pids $!"
  labels="$labels
$full"
  i=$((i + 1))
  if [ $((i % 2)) -eq 0 ]; then  # two compilers at a time
    for p in $pids; do wait "$p"; done
    pids=""
  fi
done < "$work/specs"
for p in $pids; do wait "$p"; done
"$cxx" -std=c++17 -O2 "$root/bench/ab/ab_driver.cpp" -o "$work/ab_driver" -ldl
cp "$work/build0.so" "$work/control.so"

set -- "$work/build0.so:$(echo "$labels" | sed -n 2p)" "$work/control.so:control"
j=1
while [ "$j" -lt "$i" ]; do
  set -- "$@" "$work/build$j.so:$(echo "$labels" | sed -n "$((j + 2))p")"
  j=$((j + 1))
done
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //') ($(nproc) CPUs); builds in $work"
eval "\"$work/ab_driver\" $driver_args \"\$@\""
