"""Runs a command and prints the peak resident memory of its largest descendant (kilobytes) on stderr::

    python peak_wrapper.py COMMAND [ARGS...]

exits with the command's exit code.
"""

import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(rc)
