"""All-reduce explained: ring, tree and hierarchical all-reduce simulated on real vectors.

The core (everything in this package but the CLI's argument parsing) uses only the standard
library, so the same code runs at build time under CPython and in the browser under Pyodide.
"""

__version__ = "0.1.0"
