import sys

from shuffledp.cli import main

sys.exit(main())
