"""The browser tests: JupyterLab in headless Chromium (marker ``browser``)."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: runs the notebooks in JupyterLab in headless Chromium (needs the "
        "chromium package, playwright and jupyterlab; skipped without them)")
