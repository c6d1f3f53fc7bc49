import sys

from shredfold.cli import main

sys.exit(main())
