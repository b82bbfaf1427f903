"""``python -m ecocc``: the same command line as the ``ecocc`` script."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="ecocc")
