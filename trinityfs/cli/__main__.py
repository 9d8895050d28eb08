"""`python -m trinityfs.cli ...` runs the trinityfs command."""

import sys

from trinityfs.cli import main

if __name__ == "__main__":
    sys.exit(main())
