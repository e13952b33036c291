"""Every notebook in notebooks/ run cell by cell in JupyterLab, in headless Chromium, with the
real widget manager, in JupyterLab's dark theme.

Run it with ``pytest -m browser tests/browser -s`` (``-s`` shows where the screenshots went).

Asserts, per notebook: every cell ran, no error and no stderr output (no raw warnings), every
widget rendered; for ``fit`` blocks, that the chart was redrawn at least once per epoch while
training and that no progress row overflows or wraps; for profiler timelines, that zoom (wheel
and keyboard) and hover respond, the tooltip stays inside the output, search and range
selection report the ops' time; for the data and diagnosis views (``show_batch``, ``lr_find``,
``interpret``), that their pictures loaded and nothing overflows the output; and that the text
of the timelines, tables, run blocks and views has a WCAG contrast of at least 4.5:1, in the
dark theme and again after switching to the light theme.

Screenshots go to a folder printed at the start (``PHL_BROWSER_SHOTS`` chooses it). Needs
Debian's ``chromium`` (or ``PHL_CHROMIUM=/path``), ``playwright`` (driven through
``executable_path``: no browser download) and ``jupyterlab``; skipped without them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
# generous: on a loaded machine (other jobs on the cores) a notebook can take minutes
NOTEBOOK_TIMEOUT_S = int(os.environ.get("PHL_BROWSER_NOTEBOOK_TIMEOUT", "300"))

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _chromium():
    path = os.environ.get("PHL_CHROMIUM")
    if path:
        return path if os.access(path, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _missing():
    missing = [m for m in ("playwright", "jupyterlab", "ipywidgets", "ipykernel")
               if importlib.util.find_spec(m) is None]
    if _chromium() is None:
        missing.append("chromium (apt-get install -y chromium, or set PHL_CHROMIUM)")
    return missing


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _write_settings(root):
    """User settings for the test's JupyterLab: the dark theme, no news / update checks."""
    files = {
        "@jupyterlab/apputils-extension/themes.jupyterlab-settings": {
            "theme": "JupyterLab Dark"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false", "checkForUpdates": False},
        # every cell in the DOM (no virtual scrolling), so that all outputs can be checked
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
            "windowingMode": "none"},
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(content))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip("browser test needs " + ", ".join(missing))
    work = tmp_path_factory.mktemp("lab")
    # a copy, so that running the notebooks leaves the checkout clean (profiler logs, ...)
    shutil.copytree(REPO / "notebooks", work / "notebooks",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "profiler_log"))
    for extra in ("quickstart.py", "hubconf.py"):
        if (REPO / extra).exists():
            shutil.copy(REPO / extra, work / extra)
    settings = work / ".settings"
    _write_settings(settings)
    port = _free_port()
    token = secrets.token_hex(16)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    env["JUPYTERLAB_SETTINGS_DIR"] = str(settings)
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(work / ".workspaces")
    env["JUPYTER_RUNTIME_DIR"] = str(work / ".runtime")
    env.pop("MPLBACKEND", None)
    log = open(work / "jupyterlab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={work}", "--ServerApp.port_retries=0"]
        + (["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []),
        cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                log.close()
                pytest.fail("JupyterLab did not start:\n" +
                            (work / "jupyterlab.log").read_text()[-3000:])
            time.sleep(0.3)
    try:
        yield {"url": url, "token": token, "work": work}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = os.environ.get("PHL_BROWSER_SHOTS")
    path = pathlib.Path(folder) if folder else tmp_path_factory.mktemp("browser-screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium(), headless=True,
                              args=["--no-sandbox", "--disable-gpu",
                                    "--disable-dev-shm-usage"])
        try:
            yield b
        finally:
            b.close()


# Installed in the page before the cells run: on every DOM change (and every 100 ms) it keeps
# each distinct state of every live chart with the number of epoch markers (circles) it shows.
_MONITOR = """
() => {
  window.__phl = {charts: []};
  const record = () => {
    document.querySelectorAll('.phl-run').forEach((run, i) => {
      const c = run.querySelector('.phl-chart');
      if (!c) return;
      const a = window.__phl.charts[i] = window.__phl.charts[i] || [];
      const key = c.innerHTML.length + ':' + c.querySelectorAll('path').length;
      const n = c.querySelectorAll('circle').length;
      if (!a.length || a[a.length - 1][1] !== key) a.push([n, key, performance.now()]);
    });
  };
  // every DOM change, not a timer: each widget update from the kernel is seen even when
  // epochs end faster than a polling interval
  new MutationObserver(record).observe(document.body,
                                       {childList: true, subtree: true, characterData: true});
  setInterval(record, 100);
}
"""

_STATE = """
() => Array.from(document.querySelectorAll('.jp-CodeCell')).map(c => {
  const p = c.querySelector('.jp-InputPrompt');
  return p ? p.textContent.trim() : '';
})
"""

# Text elements and their effective colours: the nearest non-transparent background behind.
_CONTRAST = """
(selectors) => {
  function parse(c) { const v = (c.match(/[\\d.]+/g) || ['0', '0', '0']).map(Number);
    return v.length > 3 ? v : v.concat([1]); }
  function bg(el) {
    for (let e = el; e; e = e.parentElement) {
      const v = parse(getComputedStyle(e).backgroundColor);
      if (v[3] > 0.5) return v.slice(0, 3);
    }
    return [255, 255, 255];
  }
  function blend(fg, back) {  // translucent text (rgba) over its background
    return [0, 1, 2].map(i => fg[i] * fg[3] + back[i] * (1 - fg[3]));
  }
  const out = [];
  document.querySelectorAll(selectors).forEach(root => {
    root.querySelectorAll('*').forEach(el => {
      const own = Array.from(el.childNodes).some(
        n => n.nodeType === 3 && n.textContent.trim().length > 0);
      if (!own || el.closest('.phl-tip')) return;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      const s = getComputedStyle(el);
      if (s.visibility === 'hidden' || s.display === 'none') return;
      const svg = el instanceof SVGElement;
      const back = bg(el);
      const col = blend(parse(svg ? s.fill : s.color), back);
      out.push({text: el.textContent.trim().slice(0, 40), fg: col, bg: back});
    });
  });
  document.querySelectorAll('.phl-tl').forEach(root => {
    if (root.phlColors) {
      const c = root.phlColors();
      c.pairs.forEach(p => out.push({text: 'canvas: ' + p[0], fg: p[1], bg: p[2]}));
    }
  });
  return out;
}
"""


def _luminance(rgb):
    def chan(c):
        c = c / 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (chan(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg, bg):
    """The WCAG 2 contrast ratio of two sRGB colours."""
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_contrast_formula():
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((119, 119, 119), (255, 255, 255)) == pytest.approx(4.48, abs=0.01)


def _wait_kernel(page, timeout=60):
    """Wait for an idle kernel; accept the kernel dialog JupyterLab may show meanwhile."""
    deadline = time.monotonic() + timeout
    # the status bar says "Python 3 (ipykernel) | Idle" once the kernel is connected
    idle = page.locator(".jp-StatusBar-Widget", has_text=re.compile(r"\| Idle"))
    dialog = page.locator(".jp-Dialog button.jp-mod-accept")
    while time.monotonic() < deadline:
        if dialog.count():
            dialog.first.click()
        elif idle.count():
            page.wait_for_timeout(300)
            if not dialog.count() and idle.count():
                return
        page.wait_for_timeout(200)
    raise AssertionError("the kernel did not start")


def _run_all(page):
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def _wait_done(page, timeout):
    deadline = time.monotonic() + timeout
    started = False
    while time.monotonic() < deadline:
        prompts = page.evaluate(_STATE)
        started = started or any(re.search(r"\[[\d*]+\]", p) for p in prompts)
        if started and not any("*" in p for p in prompts):
            return prompts
        time.sleep(0.25)
    raise AssertionError(f"the notebook did not finish in {timeout} s: {page.evaluate(_STATE)}")


def _check_timeline(page, root, shots, stem, i):
    root.scroll_into_view_if_needed()
    canvas = root.locator("canvas").first
    box = canvas.bounding_box()
    v0 = root.evaluate("r => r.phlView()")
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + 30)
    page.mouse.wheel(0, -400)
    page.wait_for_timeout(150)
    v1 = root.evaluate("r => r.phlView()")
    assert v1[1] - v1[0] < v0[1] - v0[0], ("the wheel did not zoom", v0, v1)
    canvas.focus()
    page.keyboard.press("w")
    page.wait_for_timeout(100)
    v2 = root.evaluate("r => r.phlView()")
    assert v2[1] - v2[0] < v1[1] - v1[0], ("W did not zoom in", v1, v2)
    page.keyboard.press("d")
    page.wait_for_timeout(100)
    v3 = root.evaluate("r => r.phlView()")
    assert v3[0] > v2[0], ("D did not pan right", v2, v3)
    page.keyboard.press("0")  # back to the whole run
    page.wait_for_timeout(100)
    # hover the first and the last drawn rows: the tooltip shows and stays inside
    for which in ("first", "last"):
        pt = root.evaluate(f"r => r.phlPoint('{which}')")
        assert pt is not None, "no event to hover"
        box = canvas.bounding_box()
        page.mouse.move(box["x"] + pt[0], box["y"] + pt[1])
        page.wait_for_timeout(120)
        tip = root.locator(".phl-tip")
        assert tip.is_visible(), f"no tooltip on hover ({which} row)"
        tb, rb = tip.bounding_box(), root.bounding_box()
        assert tb["x"] >= rb["x"] - 1 and tb["x"] + tb["width"] <= rb["x"] + rb["width"] + 1
        assert tb["y"] >= rb["y"] - 1 and tb["y"] + tb["height"] <= rb["y"] + rb["height"] + 1
        if which == "last":
            root.screenshot(path=str(shots / f"{stem}-timeline{i}-hover.png"))
    # shift-drag selects a range: the selected ops' time is added up
    box = canvas.bounding_box()
    y = box["y"] + box["height"] - 10
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + box["width"] * 0.15, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.95, y, steps=4)
    page.mouse.up()
    page.keyboard.up("Shift")
    selected = root.locator(".phl-sel").inner_text()
    assert re.search(r"selection .* \d+ ops.*total", selected), selected
    search = root.locator("input.phl-search")
    search.fill("conv")
    page.wait_for_timeout(150)
    found = root.locator(".phl-found").inner_text()
    assert re.search(r"\d+ match", found), found
    search.fill("")
    page.mouse.move(0, 0)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_in_jupyterlab(lab, browser, shots, capsys, notebook):
    with capsys.disabled():
        print(f"\n[browser] screenshots of {notebook.name}: {shots}")
    page = browser.new_page(viewport={"width": 1280, "height": 1000}, device_scale_factor=2)
    try:
        rel = notebook.relative_to(REPO).as_posix()
        # a workspace of its own: only this notebook is open in the page
        page.goto(f"{lab['url']}/lab/workspaces/{notebook.stem}/tree/{rel}?reset&"
                  f"token={lab['token']}")
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
        _wait_kernel(page)
        page.evaluate(_MONITOR)
        t0 = time.monotonic()
        _run_all(page)
        prompts = _wait_done(page, NOTEBOOK_TIMEOUT_S)
        took = time.monotonic() - t0
        stem = notebook.stem
        page.screenshot(path=str(shots / f"{stem}-end.png"))
        not_run = [i for i, p in enumerate(prompts) if not re.search(r"\[\d+\]", p)]
        stderr = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        errors = [stderr.nth(i).inner_text()[-1500:] for i in range(stderr.count())]
        assert not errors, f"error / stderr output in {notebook.name}:\n" + "\n---\n".join(errors)
        assert not not_run, (f"cells {not_run} of {notebook.name} did not run: {prompts}\n"
                             + (lab["work"] / "jupyterlab.log").read_text()[-3000:])

        # every widget rendered
        text = page.locator(".jp-Notebook").inner_text()
        assert "Error displaying widget" not in text
        views = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.widget-view+json']")
        for i in range(views.count()):
            assert views.nth(i).locator(".jupyter-widgets").count() > 0, f"widget {i} empty"

        # fit blocks: the chart followed the epochs; rows stay on one line, bars one width
        runs = page.locator(".phl-run")
        history = page.evaluate("() => window.__phl.charts")
        for i in range(runs.count()):
            run = runs.nth(i)
            run.scroll_into_view_if_needed()
            run.screenshot(path=str(shots / f"{stem}-run{i}.png"))
            rows = run.evaluate("""r => Array.from(r.querySelectorAll('.phl-row')).map(x => {
                const bar = x.firstElementChild.getBoundingClientRect();
                const st = x.lastElementChild.getBoundingClientRect();
                return {label: x.innerText.split('\\n')[0], sw: x.scrollWidth,
                        cw: x.clientWidth, bar: Math.round(bar.width), h: st.height};})""")
            assert rows, "a run block without rows"
            for r in rows:
                assert r["sw"] <= r["cw"] + 1, f"row overflows: {r}"
                assert r["h"] <= 30, f"row wraps: {r}"
            assert len({r["bar"] for r in rows}) == 1, f"bars of different widths: {rows}"
            if run.locator(".phl-chart").count():
                epochs = sum(1 for r in rows if r["label"].startswith("Epoch"))
                states = history[i] if i < len(history) and history[i] else []
                counts = sorted({n for n, _k, _t in states if n > 0})
                # at least one redraw per epoch (a fast first epoch may end before the chart's
                # empty state is ever painted, so that state is not required)
                assert len(counts) >= epochs, (
                    f"the chart showed {counts} epoch-marker counts for {epochs} epochs")

        # timelines respond
        tls = page.locator(".phl-tl")
        for i in range(tls.count()):
            tl = tls.nth(i)
            tl.scroll_into_view_if_needed()
            tl.screenshot(path=str(shots / f"{stem}-timeline{i}.png"))
            _check_timeline(page, tl, shots, stem, i)

        # data and diagnosis views: pictures loaded, nothing wider than the output
        dviews = page.locator(".phl-view")
        for i in range(dviews.count()):
            view = dviews.nth(i)
            view.scroll_into_view_if_needed()
            view.screenshot(path=str(shots / f"{stem}-view{i}.png"))
            info = view.evaluate("""v => ({cls: v.className, sw: v.scrollWidth,
                cw: v.clientWidth, out: v.closest('.jp-OutputArea-output').clientWidth,
                imgs: Array.from(v.querySelectorAll('img')).map(
                    im => [im.complete, im.naturalWidth, im.getBoundingClientRect().width])})""")
            assert info["sw"] <= info["cw"] + 1, f"view overflows: {info}"
            assert info["cw"] <= info["out"] + 1, f"view wider than its output: {info}"
            assert all(ok and nat > 0 and 0 < w <= info["cw"] + 1
                       for ok, nat, w in info["imgs"]), f"a picture did not load: {info}"

        # dark theme: the text of timelines and tables reads (WCAG AA, 4.5:1)
        pairs = page.evaluate(_CONTRAST, ".phl-tl, .jp-OutputArea-output table, .phl-run, "
                                          ".phl-scaler, .phl-view")
        low = [(p["text"], p["fg"], p["bg"], round(contrast(p["fg"], p["bg"]), 2))
               for p in pairs if contrast(p["fg"], p["bg"]) < 4.5]
        assert not low, f"low contrast in {notebook.name} (text, fg, bg, ratio): {low[:12]}"
        # and in the light theme (switched live: the timeline redraws its canvas)
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^JupyterLab Light$")).click()
        page.wait_for_selector("body[data-jp-theme-light='true']", state="attached",
                               timeout=20_000)
        page.wait_for_timeout(500)
        pairs = page.evaluate(_CONTRAST, ".phl-tl, .jp-OutputArea-output table, .phl-run, "
                                         ".phl-scaler, .phl-view")
        low = [(p["text"], p["fg"], p["bg"], round(contrast(p["fg"], p["bg"]), 2))
               for p in pairs if contrast(p["fg"], p["bg"]) < 4.5]
        assert not low, f"low contrast (light theme) in {notebook.name}: {low[:12]}"
        page.screenshot(path=str(shots / f"{stem}-end-light.png"))
        tables = page.locator(".jp-OutputArea-output table")
        for i in range(min(tables.count(), 3)):
            tables.nth(i).scroll_into_view_if_needed()
            tables.nth(i).screenshot(path=str(shots / f"{stem}-table{i}.png"))
        with capsys.disabled():
            print(f"[browser] {notebook.name}: ran in {took:.0f} s, {runs.count()} run blocks, "
                  f"{tls.count()} timelines, {dviews.count()} views, {len(pairs)} text elements "
                  "checked")
    finally:
        page.close()
