#!/bin/sh
# Runs libFuzzer targets for a fixed time each, on their checked-in corpus.
#
#   tests/fuzz/run-fuzzers.sh BUILD_FUZZ_DIR SECONDS TARGET...
#   (BUILD_FUZZ_DIR is <build>/tests/fuzz of a -Dfuzzing=true clang build;
#    TARGET is thumbnail, library, …)
#
# A tests/fuzz/<target>.dict, when present, is passed as libFuzzer's -dict.
# Inputs may grow to 4 MiB (-max_len; libFuzzer's default is the largest seed,
# 4,096 bytes before issue 19): enough for 200,000 nested brackets, a path of
# two million folders, or a zlib stream holding gigabytes of zeros after its
# rows — the shapes that crashed or hung the loaders and a 4 KiB cap could
# never reach. libFuzzer still starts small and grows inputs gradually.
# New inputs go to a scratch directory, never into tests/fuzz/corpus: the
# checked-in corpus only changes by a reviewed commit. A crash, leak or
# timeout stops with status 1 and leaves the input in the scratch directory,
# whose path is printed; the final libFuzzer statistics of each target are
# printed as they come (look for "cov:" and "ft:" on the DONE line).
set -eu
build=$1; seconds=$2; shift 2
# GLib's slice allocator hides leaked GLib and json-glib nodes from LeakSanitizer.
export G_SLICE=always-malloc
corpus_root=$(cd "$(dirname "$0")" && pwd)/corpus
scratch=$(mktemp -d "${TMPDIR:-/tmp}/likeness-fuzz-XXXXXX")
status=0
for target in "$@"; do
  mkdir -p "$scratch/$target/new" "$scratch/$target/artifacts"
  dict=""
  [ ! -f "$corpus_root/../$target.dict" ] || dict="-dict=$corpus_root/../$target.dict"
  echo "== fuzz-$target for ${seconds}s (scratch: $scratch/$target)"
  if ! "$build/fuzz-$target" -max_total_time="$seconds" -max_len=4194304 -timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=256 \
      -print_final_stats=1 -artifact_prefix="$scratch/$target/artifacts/" $dict \
      "$scratch/$target/new" "$corpus_root/$target" 2>"$scratch/$target/log"; then
    status=1
    tail -n 60 "$scratch/$target/log"
    echo "fuzz-$target FAILED; inputs: $scratch/$target/artifacts/" >&2
  fi
  grep -E '^#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units' "$scratch/$target/log" || true
done
[ "$status" -ne 0 ] || rm -rf "$scratch"
exit "$status"
