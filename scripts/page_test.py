#!/usr/bin/env python3
"""Drive the page of `eval serve --http` in a real headless browser (Debian's chromium through
chromedriver and selenium), as a person would: play moves by clicking cells, ask for an
analysis, turn the ownership overlay on, ask for the swap map; check after each step that the
board and the panels changed as they should. Exits non-zero, saying what did not happen, if
any step fails.

Usage: page_test.py URL [--moves N] [--ownership] [--screenshot PAGE.png]

--ownership: the served player is a network, so the ownership overlay must be drawn.
"""
import argparse
import shutil
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def browser():
    opts = webdriver.ChromeOptions()
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,1000"]:
        opts.add_argument(arg)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:
        opts.binary_location = chromium
    driver = shutil.which("chromedriver")
    service = webdriver.ChromeService(executable_path=driver) if driver else None
    return webdriver.Chrome(options=opts, service=service)


class Page:
    def __init__(self, driver):
        self.d = driver

    def all(self, css):
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def ready(self, what, timeout=120):
        """Wait until the page is idle again after `what`."""
        def idle(d):
            return d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "ready"
        try:
            WebDriverWait(self.d, timeout).until(idle)
        except TimeoutException:
            fail(f"{what}: the page was still busy after {timeout} s")

    def ply(self):
        return int(self.d.find_element(By.TAG_NAME, "body").get_attribute("data-ply") or -1)

    def error(self):
        return self.d.find_element(By.ID, "error").text

    def click(self, element, what):
        element.click()
        self.ready(what)


def fail(why):
    sys.exit(f"page test: {why}")


def play_moves(page, moves):
    """Click cells until `moves` of ours (Black's) were accepted; the served player answers
    each, so after every accepted click Black is to move again, or the game is over."""
    played = 0
    for attempt in range(200):
        if played == moves:
            return
        before = page.ply()
        cells = page.all("#board .cell")
        cell = cells[(attempt * 7) % len(cells)]
        name = cell.get_attribute("data-cell")
        page.click(cell, f"clicking {name}")
        after = page.ply()
        if after == before:
            # An occupied or illegal cell: the page says why and nothing moves.
            if not page.error():
                fail(f"clicking {name} neither played nor said why")
            continue
        status = page.d.find_element(By.ID, "status").text
        if "game over" in status:
            return
        if "black to move" not in status:
            fail(f"after clicking {name} (ply {before} -> {after}) the page says {status!r}")
        if not page.all("#board .stone"):
            fail(f"after clicking {name} no stone is drawn")
        played += 1
    fail(f"could not play {moves} moves by clicking")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--moves", type=int, default=2)
    ap.add_argument("--ownership", action="store_true")
    ap.add_argument("--screenshot")
    a = ap.parse_args()
    d = browser()
    try:
        d.get(a.url)
        page = Page(d)
        page.ready("loading the page")
        if page.error():
            fail(f"loading the page: {page.error()}")
        cells = page.all("#board .cell")
        if not cells or page.ply() != 0:
            fail(f"expected an empty board at ply 0, got {len(cells)} cells at ply {page.ply()}")
        play_moves(page, a.moves)
        stones = len(page.all("#board .stone"))
        if stones == 0:
            fail("moves were played but no stone is drawn")

        page.click(d.find_element(By.ID, "analyze"), "analyze")
        rows = page.all("#analysis tbody tr")
        marks = page.all("#board g.analysis text")
        if not rows or not marks:
            fail(f"analyze: {len(rows)} rows in the table, {len(marks)} marks on the board; {page.error()}")
        if "value for" not in d.find_element(By.ID, "value").text:
            fail("analyze: no value shown")

        if a.ownership:
            page.click(d.find_element(By.ID, "ownership"), "ownership")
            title = d.find_element(By.CSS_SELECTOR, "#board svg text").text
            if "ownership" not in title or page.error():
                fail(f"ownership overlay not drawn: title {title!r}, error {page.error()!r}")

        page.click(d.find_element(By.ID, "swapmap"), "swap map")
        if not page.all("#swap svg") or page.error():
            fail(f"no swap map drawn; {page.error()}")

        if a.screenshot:
            d.save_screenshot(a.screenshot)
        print(f"page test: {a.moves} moves by clicking, {len(rows)} analysed actions, "
              f"{len(page.all('#swap svg .cell, #swap svg polygon, #swap svg rect'))} swap-map shapes")
    finally:
        d.quit()


if __name__ == "__main__":
    main()
