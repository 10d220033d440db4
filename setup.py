"""Build step of the package (everything else is in pyproject.toml): the HTML templates live
at the top of the repository (``templates/``), and a built wheel carries them inside the
package as ``grader/templates``, where ``grader.templates_dir`` looks first. An editable
install reads them where they are."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithTemplates(build_py):
    def run(self) -> None:
        super().run()
        if not self.editable_mode:
            target = Path(self.build_lib) / "grader" / "templates"
            shutil.copytree(Path(__file__).parent / "templates", target, dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithTemplates})
