"""A task of a parameter-server ElasticJob that can be killed like a real
fault.

Usage: elastic_ps.py: print the task TF_CONFIG gives and WORKER_NUM
(role=TYPE index=N worker_num=M, None when unset) and the whole
TF_CONFIG, then run the work in a child process and exit with its exit
status, 128+N when signal N killed it, as a shell would. The child writes its pid to /tmp/child.pid and prints a heartbeat
every second until /tmp/stop exists; then it exits 0. (PID 1 of a
container ignores a SIGKILL sent from inside it; the child does not.)
SIGTERM is passed on to the child.
"""

import json
import os
import signal
import subprocess
import sys
import time

PID_FILE = "/tmp/child.pid"
STOP_FILE = "/tmp/stop"


def work():
    with open(PID_FILE + ".new", "w") as f:
        f.write(str(os.getpid()))
    os.rename(PID_FILE + ".new", PID_FILE)
    beat = 0
    while not os.path.exists(STOP_FILE):
        print(f"heartbeat {beat} pid={os.getpid()}", flush=True)
        beat += 1
        time.sleep(1)
    print("stopping", flush=True)


def main():
    raw = os.environ["TF_CONFIG"]
    task = json.loads(raw)["task"]
    workers = os.environ.get("WORKER_NUM")
    print(f"role={task['type']} index={task['index']} worker_num={workers}", flush=True)
    print(f"TF_CONFIG={raw}", flush=True)
    child = subprocess.Popen([sys.executable, __file__, "--work"])
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    code = child.wait()
    if code < 0:
        print(f"work killed by signal {-code}", flush=True)
        code = 128 - code
    sys.exit(code)


if __name__ == "__main__":
    if sys.argv[1:] == ["--work"]:
        work()
    else:
        main()
