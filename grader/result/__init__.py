"""The grading result (JSON schema version 1, ``schema``) and its renderings: the terminal
report, the HTML report and the classroom formats. Renderers read a result and nothing else."""
