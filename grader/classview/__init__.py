"""What an instructor reads about a whole class, rendered from OUT's gradebook.sqlite:
``gradebook`` (gradebook.csv) and ``dashboard`` (index.html, with ``templates/dashboard.html.j2``),
whose insight sections (failure groups, alike answers side by side) ``insight_view`` prepares
for ``templates/dashboard_insight.html.j2``. ``lms`` writes the grades as Moodle and Canvas
import them (``grade export``), joined with a class roster by ``roster``.

A submission's own renderings (text, HTML, the classroom formats) are in ``grader.result``; the
analyses these pages show are computed in ``grader.analysis``.
"""
