import sys

from pagezero.cli import main

sys.exit(main())
