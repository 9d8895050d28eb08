"""`python -m trinityfs.rest --root LAKE [--host H] [--port P] ...`"""

import sys

from trinityfs.rest.server import main

sys.exit(main())
