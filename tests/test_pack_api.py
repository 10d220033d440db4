"""The reference of the public face (docs/pack-api.md) is written from the code and is never
stale, and the face's names and signatures are a snapshot (tests/pack_api.txt): a change to what
packs import fails here until the snapshot is written again, on purpose.

To accept a change to the face: ``python -m grader.authoring.face_reference`` (the page) and
``python -c "from grader.authoring.face_reference import signatures; print(signatures(),
end='')" > tests/pack_api.txt`` (the snapshot), then say why in the commit.
"""

from __future__ import annotations

import ast

from support import ROOT

from grader.authoring import face_reference
from grader.pack import judge, worker

SNAPSHOT = ROOT / "tests" / "pack_api.txt"


def test_the_page_is_what_the_code_gives():
    assert face_reference.PAGE == ROOT / "docs" / "pack-api.md"
    assert face_reference.PAGE.read_text(encoding="utf-8") == face_reference.render(), (
        "docs/pack-api.md is stale: run python -m grader.authoring.face_reference"
    )
    assert face_reference.main(["--check"]) == 0


def test_the_faces_names_and_signatures_are_the_snapshot():
    assert SNAPSHOT.read_text(encoding="utf-8") == face_reference.signatures(), (
        "the public face changed: if on purpose, write tests/pack_api.txt again (see above)"
    )


def test_every_exported_name_has_a_signature_a_docstring_and_an_example_that_parses():
    page = face_reference.PAGE.read_text(encoding="utf-8")
    for face in (judge, worker):
        for name in face.__all__:
            assert f"### `{name}`" in page
            ast.parse(face_reference.EXAMPLES[name])
    assert "same_module_as_reference(*, name: str, answer: str" in face_reference.signatures()
    assert "- `call(self, action: str, timeout: float | None = None" in page
    unused = set(face_reference.EXAMPLES) - {*judge.__all__, *worker.__all__}
    assert not unused, f"examples of names the face does not export: {unused}"


def test_a_changed_signature_is_seen(monkeypatch):
    def close(got, expected, what, tolerance=0.1):  # a parameter renamed
        """Another comparison."""

    monkeypatch.setattr(judge, "close", close)
    assert "grader.pack.judge: close(got, expected, what, tolerance=0.1)" in (
        face_reference.signatures()
    )
    assert face_reference.signatures() != SNAPSHOT.read_text(encoding="utf-8")
    assert face_reference.main(["--check"]) == 1
