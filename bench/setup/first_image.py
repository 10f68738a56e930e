#!/usr/bin/env python3
"""bench/setup/first_image.py SIEVE ARGS...: runs `SIEVE render ARGS...` and prints the seconds from the
process's start to its "setup: first frame" line (the first image on the film) and to its exit.
The render's report holds first_image_s from the job's start; this adds what comes before it (the
program's loading) and is the figure to set beside another renderer's time to its first image."""
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.Popen([sys.argv[1], "render"] + sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
first = None
for line in p.stdout:
    if first is None and line.startswith("setup: first frame"):
        first = time.monotonic() - t0
p.wait()
print(f"first_image_from_start_s {first:.3f} exit_s {time.monotonic() - t0:.3f}")
