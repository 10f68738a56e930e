#!/bin/bash
# up5 run 2: the kernels' load traced, preload designs, sieve beside Mitsuba 3 (right after it, 3 s after, alone), the GPU tests.
cd "$(dirname "$0")/../.."
T=/tmp/u; mkdir -p $T && tar xJf .device/up5/pack.tar.xz -C $T
R=$OUT/r; mkdir -p $R out
export PYTHONUNBUFFERED=1 SIEVE_SCENES_DIR=$PWD/scenes
nvidia-smi --query-gpu=name,driver_version,persistence_mode,clocks.sm,pstate --format=csv > $R/device.txt
cat $T/commit.txt >> $R/device.txt
L=$T/lib-new:$T/lib
python3 scripts/make-heightfield-ply out/heightfield-2048.ply > /dev/null 2>&1 &
for t in staged_copy_cuda_test ploc_cuda_test render_cuda_test; do [ -x $T/bin/$t ] && { echo "== $t"; LD_LIBRARY_PATH=$L timeout 100 $T/bin/$t 2>&1 | tail -4; } >> $R/tests.txt; done
wait
ARGS="--width 1024 --height 768 --spp 16 --set environment.color=[1,1,1] --set film.max_bounces=4 --out out/t.png --json out/t.json"
one() {
  local tag=$1; shift
  local line=$(env LD_LIBRARY_PATH=$L "$@" python3 bench/setup/first_image.py $T/bin/sieve-new out/heightfield-2048.ply $ARGS)
  echo "$tag $line $(python3 -c 'import json;d=json.load(open("out/t.json"));print(json.dumps(d.get("setup_s",{}),separators=(",",":")))')" >> $R/first.txt
}
one new; rm -f $R/first.txt
LD_LIBRARY_PATH=$L SIEVE_PRELOAD_TRACE=1 $T/bin/sieve-new render out/heightfield-2048.ply $ARGS > $R/trace.txt 2>&1
LD_LIBRARY_PATH=$L SIEVE_PRELOAD=parallel SIEVE_PRELOAD_TRACE=1 $T/bin/sieve-new render out/heightfield-2048.ply $ARGS > $R/trace-parallel.txt 2>&1
for r in 1 2 3; do
  one new
  one new-nopreload env SIEVE_PRELOAD=off
  one new-parallel env SIEVE_PRELOAD=parallel
  one new-stack env SIEVE_STACK_RESERVE=4096
  one new-off env SIEVE_PRELOAD=off SIEVE_UPLOAD=pageable
done
mkdir -p /tmp/mts && tar xJf .device/mitsuba/mts.tar.xz -C /tmp/mts && mkdir -p /tmp/mts/drjit/llvm /tmp/mts/drjit/scalar && touch /tmp/mts/drjit/llvm/__init__.py /tmp/mts/drjit/llvm/ad.py /tmp/mts/drjit/scalar/__init__.py
export PYTHONPATH=/tmp/mts
for r in 1 2 3; do
  python3 .device/up5/mts_child.py $T/bin/sieve-new out/heightfield-2048.ply >> $R/mitsuba.txt 2>&1
  one new-aftermts
  python3 .device/up5/mts_child.py $T/bin/sieve-new out/heightfield-2048.ply >> $R/mitsuba.txt 2>&1
  sleep 3
  one new-aftermts3s
  one new-alone
done
(cd $OUT && tar czf results.tgz r)
