"""nbgrader's configuration for the labs: this folder is an nbgrader course directory, with each
lab's teacher's version (solutions, hidden tests, reflection answers) in source/<lab>/<lab>.ipynb.
See the course page (content/course.md, "Labs") for the commands.
"""

c = get_config()  # noqa: F821 (nbgrader's config loader defines it)

c.CourseDirectory.course_id = "allreduce-explainer"
c.CourseDirectory.root = "."
# A lab's widget cell draws a view; an executed lab keeps its outputs under nbgrader's limit.
c.ExecutePreprocessor.timeout = 300
