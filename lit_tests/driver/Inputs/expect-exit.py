"""expect-exit.py CODE CMD ARGS...: runs CMD, passes its stdout and stderr
through, and fails unless it exits with CODE (lit's `not` accepts any
non-zero code; the command-line tests tell 1, a failed job, from 2, bad
usage)."""
import subprocess
import sys

code = int(sys.argv[1])
r = subprocess.run(sys.argv[2:])
if r.returncode != code:
    print(f"expect-exit: exit code {r.returncode}, expected {code}", file=sys.stderr)
    sys.exit(1)
