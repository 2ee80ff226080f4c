"""The task guides' worked examples: every command of docs/guides/*.md is run, in order.

Files shown with a title (```toml title="census.toml"```) are written first; each ``$ ``
line of a ``console`` block runs (``sdckit`` as ``python -m sdckit``) and must exit 0, or the
code its ``# exits N`` comment states; ``python`` blocks run as scripts. The guides share one
working folder, in the order a reader follows them.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

GUIDES = Path(__file__).resolve().parents[2] / "docs" / "guides"
ORDER = ["release_census.md", "undo_pram.md", "verify.md", "protect_table.md", "cluster.md", "from_sdcmicro.md",
         "catalogue_formats.md", "output_checking.md"]
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.S | re.M)


def blocks(text: str):
    for m in FENCE.finditer(text):
        lang, info, body = m.group(1), m.group(2), m.group(3)
        title = re.search(r'title="([^"]+)"', info)
        yield lang, title.group(1) if title else None, body


def run_guide(name: str, work: Path) -> list[str]:
    ran = []
    for lang, title, body in blocks((GUIDES / name).read_text("utf-8")):
        if title:
            (work / title).write_text(body, "utf-8")
        elif lang == "console":
            for line in body.splitlines():
                if not line.startswith("$ "):
                    continue
                cmd = line[2:]
                expect = 0
                m = re.search(r"#\s*exits (\d+)\s*$", cmd)
                if m:
                    expect, cmd = int(m.group(1)), cmd[:m.start()]
                argv = shlex.split(cmd)
                argv = ([sys.executable, "-m", "sdckit", *argv[1:]] if argv[0] == "sdckit" else
                        [sys.executable, *argv[1:]] if argv[0] == "python" else argv)
                r = subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=600)
                assert r.returncode == expect, f"{name}: `{cmd}` exited {r.returncode}: {r.stderr[-1500:]}"
                ran.append(cmd)
        elif lang == "python":
            r = subprocess.run([sys.executable, "-c", body], cwd=work, capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, f"{name}: python block failed: {r.stderr[-1500:]}"
            ran.append("python block")
    return ran


def test_every_guide_is_run():
    assert sorted(ORDER) == sorted(p.name for p in GUIDES.glob("*.md"))


@pytest.mark.slow
def test_guides_commands_pass(tmp_path):
    ran = {name: run_guide(name, tmp_path) for name in ORDER}
    assert all(ran[n] for n in ORDER if n != "from_sdcmicro.md")
    # what the guides promise is there
    assert (tmp_path / "census-release" / "certificate.json").is_file()
    assert (tmp_path / "census-release-report.pdf").is_file()
    assert not (tmp_path / "census-release" / "report.pdf").exists()
    assert (tmp_path / "delinquent_public.csv").is_file()


def test_protect_table_guide(tmp_path):
    """The table guide stands alone (its data are in the guide): run it in the default suite."""
    import pandas as pd

    assert run_guide("protect_table.md", tmp_path)
    pub = pd.read_csv(tmp_path / "delinquent_public.csv", dtype=str)
    assert (pub.loc[pub["status"] == "suppressed", "value"] == "x").all() and (pub["status"] == "suppressed").sum() == 7
