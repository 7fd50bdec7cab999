"""``python -m studio``: the command-line interface (see studio/cli/)."""
import sys

from studio.cli import main

sys.exit(main())
