"""Screenshots of the memory inspector for the README (docs/inspector-*.png).

Runs ``memfs demo`` into a temporary home (the sample pair alex/mira: pins, a
conversation compacted and dreamed by the offline rules, the dream reverted), serves it
with uvicorn on 127.0.0.1, and photographs the timeline, the dream and the pins editor
in Debian's chromium (the pins editor just after an invalid edit was refused, showing the
problem inline). Usage: ``python scripts/inspector_screenshots.py [OUT_DIR]``.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memfs.app import MemoryStore  # noqa: E402
from memfs.keys import KeyStore  # noqa: E402
from memfs.runtime.host import Host  # noqa: E402
from memfs.ui import create_app  # noqa: E402
from tests._serve import live_server  # noqa: E402
from tests._ui import chromium  # noqa: E402


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        subprocess.run([sys.executable, "-c", "from memfs.cli import entry; entry()",
                        "--home", str(home), "demo"], check=True, stdout=subprocess.DEVNULL)
        store = MemoryStore(home)
        pair = store.pair("alex", "mira", create=False)
        dreams = [e for e in pair.log() if e.is_dream]
        dream = next((e for e in dreams if "superseded" in e.subject), dreams[0])
        host = Host(store, keys=KeyStore(home), allow_open=True)
        with live_server(host, create_app(host, mcp=False)) as url, chromium() as browser:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            shots = {"timeline": "/ui/alex/mira", "dream": f"/ui/alex/mira/commits/{dream.sha}",
                     "pins": "/ui/alex/mira/pins"}
            for name, path in shots.items():
                page.goto(url + path)
                if name == "pins":
                    page.fill("#pins-file", page.input_value("#pins-file")
                              + "Remember: Alex's birthday is in May\n")
                    page.click("text=Save pins")
                page.screenshot(path=str(out / f"inspector-{name}.png"), full_page=True)
                print(out / f"inspector-{name}.png")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
         / "docs")
