"""`python -m trinityfs.fuse ROOT MOUNTPOINT [options]`: the mount command on its own."""

import sys

from trinityfs.fuse.mount import main

sys.exit(main())
