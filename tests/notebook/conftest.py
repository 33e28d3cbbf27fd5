"""tests/notebook: the widgets in real notebooks; the servers' helpers, nbservers.py, beside."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
