import sys

from launchcard.cli import main

sys.exit(main())
