"""Rewrite ``ROOT_HELP`` in src/sdckit/cli_dispatch.py from the verbs' declarations.

``sdckit --help`` prints that constant (it does not build the typer application); run this after
adding a verb or changing a verb's first docstring line, then run tests/test_cli_dispatch.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "src" / "sdckit" / "cli_dispatch.py"


def main() -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from sdckit.cli import root_help_text

    text = root_help_text(80)
    if '"""' in text or "\\" in text:
        raise SystemExit("the help text holds a triple quote or a backslash; quote it by hand")
    source = TARGET.read_text(encoding="utf-8")
    new, n = re.subn(r'ROOT_HELP = """\\\n.*?"""\n', lambda _: f'ROOT_HELP = """\\\n{text}"""\n', source, flags=re.S)
    if n != 1:
        raise SystemExit(f"{TARGET.name}: no single ROOT_HELP constant to rewrite")
    if new != source:
        TARGET.write_text(new, encoding="utf-8")
    print(f"{TARGET.relative_to(ROOT)}: ROOT_HELP {'rewritten' if new != source else 'already current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
