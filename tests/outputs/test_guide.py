"""The output-checking guide's worked example runs, command by command (docs/guides/output_checking.md),
with the guides' runner (tests/docs/test_guides.py)."""

import json

from tests.docs.test_guides import run_guide


def test_output_checking_guide(tmp_path):
    ran = run_guide("output_checking.md", tmp_path)
    assert len(ran) >= 10
    cert = json.loads((tmp_path / "outputs-release" / "certificate.json").read_text())
    assert [o["id"] for o in cert["outputs"]] == ["output_0", "output_1", "output_4"]
    assert cert["rejected"] == ["output_2", "output_3"]
