"""Ask a running `python serve.py` a question through its page in headless Chromium, and save a screenshot.

    python serve.py &                      # after `python train.py`
    python -m bench.serve_page --question "what city was the writer of [The Narrow Tide] born in" \\
        --out bench/results/serve_page.png

Needs Debian's chromium + chromium-driver (scripts/install-chromium.sh) and selenium (test extra).
tests/serve/test_page.py drives the page through `ask_in_browser` too.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from bench.common import arguments

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900"]


def browser_binaries() -> tuple[str, str] | None:
    """(chromium, chromedriver) from PATH, or None."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def ask_in_browser(url: str, question: str, screenshot: str | Path | None = None, timeout: float = 30) -> dict:
    """Type `question` into the page at `url`, wait for the answers, and read back what the page shows:
    answer ids in order, the drawn nodes by kind (topic / hop / answer) and edges, the knowledge text."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    found = browser_binaries()
    if found is None:
        raise RuntimeError("chromium and chromedriver are not installed (scripts/install-chromium.sh)")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    with tempfile.TemporaryDirectory(prefix="rra-chromium-") as profile:
        for flag in FLAGS + [f"--user-data-dir={profile}"]:  # a fresh profile every time
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service(found[1]), options=options)
        try:
            driver.get(url)
            box = driver.find_element(By.ID, "question")
            box.clear()
            box.send_keys(question)
            driver.find_element(By.ID, "ask").click()
            WebDriverWait(driver, timeout).until(
                lambda d: d.find_elements(By.CSS_SELECTOR, "#answers li") or "error" in d.find_element(By.ID, "status").get_attribute("class"))
            nodes = {kind: [g.get_attribute("data-id") for g in driver.find_elements(By.CSS_SELECTOR, f"#graph g.node.{kind}")]
                     for kind in ("topic", "hop", "answer")}
            shown = {
                "status": driver.find_element(By.ID, "status").text,
                "answers": [li.get_attribute("data-id") for li in driver.find_elements(By.CSS_SELECTOR, "#answers li")],
                "nodes": nodes,
                "node_labels": [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#graph g.node text")],
                "edges": [g.get_attribute("data-relation") for g in driver.find_elements(By.CSS_SELECTOR, "#graph g.edge")],
                "knowledge": driver.find_element(By.ID, "knowledge").text,
                "console_errors": [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"],
            }
            if screenshot:
                Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(screenshot))
            return shown
        finally:
            driver.quit()


def parser():
    """The command line of `python -m bench.serve_page`."""
    ap = arguments("serve_page", __doc__)
    ap.add_argument("--url", default="http://127.0.0.1:8000/")
    ap.add_argument("--question", default="what city was the writer of [The Narrow Tide] born in")
    ap.add_argument("--out", default="bench/results/serve_page.png")
    return ap


def main() -> None:
    args = parser().parse_args()
    shown = ask_in_browser(args.url, args.question, args.out)
    print(f"answers {shown['answers'][:5]}; drawn {shown['nodes']}; wrote {args.out}")


if __name__ == "__main__":
    main()
