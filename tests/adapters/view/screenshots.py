"""The screenshots of docs/review.md, taken in Debian's chromium through Playwright.

    PYTHONPATH=.:adapters .venv/bin/python -m tests.adapters.view.screenshots
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import anyio

from scorecore_adapters.view import Label, LabelStore, running
from tests.adapters.view.stores import rows, store_with

IMAGES = Path(__file__).resolve().parents[3] / "docs" / "images"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


def main() -> None:
    """Write docs/images/view-queue.png and docs/images/view-run.png."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - the dev extra

    with tempfile.TemporaryDirectory() as folder:
        url = store_with(Path(folder) / "scores.db", rows("v1", 40), rows("v2", 40, shift=0.1))
        labels = [Label(batch_id="v2", item_id=f"item-{i:03d}", scorer_id="judge",
                        value=i % 3 != 0, queued=("random",), reviewer="ana",
                        note="misses the date" if i == 3 else None) for i in range(0, 24, 2)]

        async def label() -> None:
            async with LabelStore(url) as store:
                await store.add(labels)

        anyio.run(label)
        with running(url) as address, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium",
                                                 args=FLAGS)
            page = browser.new_page(viewport={"width": 1100, "height": 760})
            page.goto(address)
            base = address.split("/?", maxsplit=1)[0]
            page.goto(f"{base}/queue?id=v2&baseline=v1&sample=12")
            page.keyboard.press("j")
            page.screenshot(path=IMAGES / "view-queue.png")
            page.goto(f"{base}/run?batch=v2&item=item-003")
            page.screenshot(path=IMAGES / "view-run.png")
            browser.close()


if __name__ == "__main__":
    main()
