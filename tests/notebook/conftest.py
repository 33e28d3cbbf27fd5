"""tests/notebook: the widgets in real notebooks. Its helpers (nbservers.py) sit beside the tests."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
