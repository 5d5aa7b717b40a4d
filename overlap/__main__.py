"""`python -m overlap`: the same as the `overlap` console script."""

from .cli import main

main()
