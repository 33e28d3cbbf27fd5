# The README's commands. Each target does every set-up step it needs, and does it only once.
# Set-up comes in two layers: what building and serving the site needs (requirements-build.lock,
# npm's dependencies: Pyodide and Plotly.js), then, on top of it and without reinstalling it, what
# the tests, notebooks, benchmarks and packaging need (requirements-dev.lock, npm's devDependencies).
PY := .venv/bin/python
PORT ?= 8000
PIP_COMPILE := /tmp/pip-tools-venv/bin/pip-compile --quiet --generate-hashes --strip-extras --allow-unsafe \
  --no-emit-index-url --no-emit-find-links

.PHONY: serve build test test-fast screenshots bench setup setup-build chromium java clean lock placeholders dist

serve: setup-build  ## build the site and serve it on http://127.0.0.1:$(PORT)/
	$(PY) build.py --serve --port $(PORT)

build: setup-build
	$(PY) build.py

test: java setup chromium  ## every test: core, CLI, Pyodide in Node, the site in Chromium; then lint and types (mypy)
	$(PY) -m pytest
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

test-fast: setup  ## the core and the CLI only (no Node, no Chromium): the edit-test loop
	AE_TESTS_FAST=1 $(PY) -m pytest -q -m "not browser and not pyodide and not build and not chromium and not notebook"

screenshots: setup chromium  ## every page at phone and desktop widths, light and dark -> test-artifacts/screens
	$(PY) tests/screenshots.py --wait-python

bench: setup chromium  ## the core's speed (CPython, Pyodide) and the site's in Chromium -> bench/RESULTS.md
	$(PY) bench/core.py --write
	$(PY) bench/site.py --write

dist: setup  ## the wheel and the sdist -> dist/, checked (-I: the root's build.py is the site's, not pypa's build)
	rm -rf dist
	$(PY) -I -m build --no-isolation --outdir dist .
	.venv/bin/twine check --strict dist/*

setup-build: .venv/.build-installed node_modules/.build-installed  ## what `make serve` needs
setup: .venv/.installed node_modules/.installed  ## all of it

# the build's own packages, and the package itself (editable: build.py imports it)
.venv/.build-installed: pyproject.toml requirements-build.lock
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --require-hashes -r requirements-build.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

# the rest of the full lock: pip keeps what the build layer installed at the same pins
.venv/.installed: .venv/.build-installed requirements-dev.lock
	$(PY) -m pip install --quiet --require-hashes -r requirements-dev.lock
	touch $@

lock:  ## re-pin both locks, with hashes, after editing pyproject.toml (the build's pins are the full lock's)
	python3 -m venv /tmp/pip-tools-venv && /tmp/pip-tools-venv/bin/pip install --quiet pip-tools==7.6.2
	$(PIP_COMPILE) --extra build --extra dev -o requirements-dev.lock pyproject.toml
	$(PIP_COMPILE) --extra build -c requirements-dev.lock -o requirements-build.lock pyproject.toml

# npm ci empties node_modules, so only the first layer runs it; the second adds the
# devDependencies at package-lock.json's versions and writes no file of ours
node_modules/.build-installed: package.json package-lock.json
	npm ci --omit=dev --no-audit --no-fund --loglevel=error
	touch $@

node_modules/.installed: node_modules/.build-installed
	npm install --no-save --no-audit --no-fund --loglevel=error
	touch $@

chromium:  ## Debian's Chromium: Playwright cannot download its own browser here
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

java:  ## Debian's Java, which runs the Nu HTML checker (npm's vnu-jar) in tests/site
	@command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq default-jre-headless)

clean:
	rm -rf site .venv node_modules

placeholders: setup chromium  ## each embed's static picture (default state) -> sitebuild/placeholders/, for snippets and oEmbed
	$(PY) buildtools/placeholders.py
