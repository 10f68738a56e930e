# One Mitsuba first image from its process's start (bench/setup/mitsuba_first_image.py's child), the camera sieve check prints.
import os, subprocess, sys, time
sys.path.insert(0, "bench/setup")
import mitsuba_first_image as m
sieve, model = sys.argv[1], sys.argv[2]
if not os.path.exists("/tmp/cam.txt"):
    env = dict(os.environ, LD_LIBRARY_PATH="/tmp/u/lib-new:/tmp/u/lib")
    old = os.environ.get("LD_LIBRARY_PATH")
    os.environ["LD_LIBRARY_PATH"] = env["LD_LIBRARY_PATH"]
    open("/tmp/cam.txt", "w").write(" ".join(str(v) for v in m.camera_of(sieve, model, 4)))
    if old is None: del os.environ["LD_LIBRARY_PATH"]
    else: os.environ["LD_LIBRARY_PATH"] = old
cam = open("/tmp/cam.txt").read().split()
t0 = time.time()
out = subprocess.run([sys.executable, "-c", m.CHILD, repr(t0), model] + cam + ["1024", "768", "16", "5"], capture_output=True, text=True)
t_exit = time.time() - t0
print((out.stdout.strip().splitlines() or ["mitsuba failed: " + out.stderr.strip()[-300:]])[-1], f"exit_s {t_exit:.3f}", flush=True)
