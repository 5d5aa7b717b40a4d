"""`python -m overlap.cli`: the same as the `overlap` console script."""

from . import main

main()
