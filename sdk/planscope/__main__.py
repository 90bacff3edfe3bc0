"""``python -m planscope`` is the ``planscope`` command."""

from planscope._cli import main

main()
