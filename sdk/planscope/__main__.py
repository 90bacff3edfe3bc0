"""``python -m planscope`` is the ``planscope`` command."""

import os
import sys

import planscope

if getattr(planscope, "__file__", None) is None and not sys.flags.safe_path:
    # A folder named ``planscope`` in the current directory (a clone of this repository, say)
    # shadowed the installed package as a namespace package, which would silently lose every
    # subcommand: run again without the current directory on sys.path (``python -P``).
    os.execv(sys.executable, [sys.executable, "-P", "-m", "planscope", *sys.argv[1:]])

from planscope._cli import main

main()
