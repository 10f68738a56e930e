#!/bin/bash
# up5 run 1: the first frame's steps, the setup's designs (staged uploads, kernels preloaded, eager module loading), main beside.
cd "$(dirname "$0")/../.."
T=/tmp/u; mkdir -p $T && tar xJf .device/up5/pack.tar.xz -C $T
R=$OUT/r; mkdir -p $R out
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,persistence_mode,clocks.sm,clocks.max.sm --format=csv > $R/device.txt
cat $T/commit.txt >> $R/device.txt; nproc >> $R/device.txt
LD_LIBRARY_PATH=$T/lib $T/bin/staged_copy_cuda_test > $R/tests.txt 2>&1; echo "rc $?" >> $R/tests.txt
( time python3 scripts/make-heightfield-ply out/heightfield-2048.ply ) > $R/ply.txt 2>&1
ARGS="--width 1024 --height 768 --spp 16 --set environment.color=[1,1,1] --set film.max_bounces=4 --out out/t.png --json out/t.json"
one() {  # tag [env...]: one first image from the process's start, its setup_s
  local tag=$1; shift
  local v=${tag%%-*}
  local line=$(env LD_LIBRARY_PATH=$T/lib-$v:$T/lib "$@" python3 bench/setup/first_image.py $T/bin/sieve-$v out/heightfield-2048.ply $ARGS)
  echo "$tag $line $(python3 -c 'import json;d=json.load(open("out/t.json"));print(json.dumps(d.get("setup_s",{}),separators=(",",":")))')" >> $R/first.txt
}
one main; one new; rm -f $R/first.txt  # the page cache and the driver warm
for r in 1 2 3 4; do
  one main
  one new
  one new-off env SIEVE_PRELOAD=off SIEVE_UPLOAD=pageable
  one new-nopreload env SIEVE_PRELOAD=off
  one new-pageable env SIEVE_UPLOAD=pageable
  one new-eager env CUDA_MODULE_LOADING=EAGER SIEVE_PRELOAD=off
done
LD_LIBRARY_PATH=$T/lib-new:$T/lib $T/bin/sieve-new render out/heightfield-2048.ply $ARGS > $R/render-new.txt 2>&1
LD_LIBRARY_PATH=$T/lib-new:$T/lib SIEVE_PRELOAD=off $T/bin/sieve-new render out/heightfield-2048.ply $ARGS --build sah > $R/render-new-sah.txt 2>&1
LD_LIBRARY_PATH=$T/lib-new:$T/lib SIEVE_UPLOAD=pageable SIEVE_PRELOAD=off $T/bin/sieve-new render out/heightfield-2048.ply $ARGS --build sah > $R/render-new-sah-pageable.txt 2>&1
(cd $OUT && tar czf results.tgz r)
