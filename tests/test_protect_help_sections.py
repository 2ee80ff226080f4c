"""``sdckit protect --help`` lists every spec section and key, from the declarations (issue: the
help named no ``[explore]``, ``[[candidates]]`` or ``[report]`` keys)."""

from __future__ import annotations

from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.explore.spec import CANDIDATE_KEYS, EXPLORE_KEYS
from sdckit.spec import SPEC_SECTIONS


def _help() -> str:
    out = CliRunner().invoke(app, ["protect", "--help"], env={"COLUMNS": "2000"}).output
    return " ".join(out.replace("│", " ").split())


def test_every_section_and_key_is_listed():
    text = _help()
    for name, (_meaning, keys) in SPEC_SECTIONS.items():
        assert f"[{name}]" in text
        for key in keys:
            assert key in text, (name, key)
    for section in ("[[steps]]", "[gate]", "[explore]", "[[candidates]]"):
        assert section in text
    for key in EXPLORE_KEYS | CANDIDATE_KEYS:
        assert key in text


def test_sections_match_what_the_reader_accepts(tmp_path):
    """The listed keys are the ones the spec reader accepts: an unlisted key is refused."""
    import pytest

    from sdckit.errors import SpecError
    from sdckit.spec import spec_from_dict

    for name in SPEC_SECTIONS:
        raw = {"input": {"path": "x.csv"}, name: {"not_a_listed_key": 1}}
        with pytest.raises(SpecError, match="not_a_listed_key"):
            spec_from_dict(raw, base_dir=tmp_path)
