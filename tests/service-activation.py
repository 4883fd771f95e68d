#!/usr/bin/env python3
"""Socket activation of perfhubd (LISTEN_FDS): see tests/service-daemon.py."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(subprocess.call([sys.executable, os.path.join(here, "service-daemon.py"), "--activation"]))
