"""A busy/idle workload: 0.5 s busy loop, 0.5 s sleep, 8 cycles (``python busy_idle.py
[CYCLES]``).

Each phase ends at a deadline, so the period is 1.0 s by construction however long the
process waits for a CPU after its sleep on a loaded machine. Recorded by
benchmarks/record_command.py, benchmarks/periodicity_real.py and their tests.
"""

import sys
import time

cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 8
start = time.monotonic()
for k in range(cycles):
    while time.monotonic() < start + k + 0.5:
        pass
    time.sleep(max(0.0, start + k + 1.0 - time.monotonic()))
