"""Rewrite src/sdckit/data/table_protection_keys.json from the table-method registry.

``sdckit table --help`` lists each method's ``[protection]`` keys from that file while its
fingerprint matches the files that declare the keys (reading the registry itself would load
numpy and numba for a help text); run this after a table method's declarations change, then run
tests/test_table_help_keys.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    sys.path.insert(0, str(ROOT / "src"))
    from sdckit.cli_table import LISTING_FILE, listing_fingerprint, protection_key_listing

    text = json.dumps({"fingerprint": listing_fingerprint(), "listing": protection_key_listing()}, indent=1) + "\n"
    old = LISTING_FILE.read_text(encoding="utf-8") if LISTING_FILE.is_file() else None
    if text != old:
        LISTING_FILE.write_text(text, encoding="utf-8")
    print(f"{LISTING_FILE.relative_to(ROOT)}: {'rewritten' if text != old else 'already current'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
