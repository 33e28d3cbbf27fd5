"""tests/notebook: the widgets in real notebooks; the servers' helpers, nbservers.py, and the
labs' course directory, course.py, beside."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from course import Course, graded  # noqa: E402


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Course:
    """Every lab generated and autograded once (nbgrader), for the labs' tests and the tests
    that read an executed lab: the solved student's autograded notebooks ran every cell."""
    return graded(tmp_path_factory.mktemp("course"))
