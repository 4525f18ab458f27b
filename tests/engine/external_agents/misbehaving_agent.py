"""An external agent that fails on purpose, for the runner's failure classes:
crash (exits 3 after a line on stderr), hang (sleeps past any timeout, with a
child of its own that must not outlive the trial), silent (prints nothing),
signal (kills itself), flood (prints without end)."""
import os, signal, subprocess, sys, time

mode = sys.argv[1]
sys.stdin.read()
if mode == "crash":
    print("Traceback: the agent crashed on purpose", file=sys.stderr)
    sys.exit(3)
if mode == "hang":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(str(child.pid))
    time.sleep(3600)
if mode == "silent":
    sys.exit(0)
if mode == "signal":
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "flood":
    while True:
        sys.stdout.write("x" * 65536)
