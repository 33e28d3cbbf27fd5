# The README's commands. Each target does every set-up step it needs, and does it only once.
PY := .venv/bin/python
PORT ?= 8000

.PHONY: serve build test test-fast screenshots lint bench setup chromium java clean lock placeholders dist

serve: setup  ## build the site and serve it on http://127.0.0.1:$(PORT)/
	$(PY) build.py --serve --port $(PORT)

build: setup
	$(PY) build.py

test: java setup chromium  ## every test: core, CLI, Pyodide in Node, the site in Chromium; then lint
	$(PY) -m pytest
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

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

setup: .venv/.installed node_modules/.installed

.venv/.installed: pyproject.toml requirements-dev.lock
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --require-hashes -r requirements-dev.lock
	$(PY) -m pip install --quiet --no-deps -e .
	touch $@

lock:  ## re-pin the whole Python dependency tree, with hashes, after editing pyproject.toml
	python3 -m venv /tmp/pip-tools-venv && /tmp/pip-tools-venv/bin/pip install --quiet pip-tools==7.6.2
	/tmp/pip-tools-venv/bin/pip-compile --quiet --generate-hashes --extra dev --strip-extras \
	  --no-emit-index-url --no-emit-find-links -o requirements-dev.lock pyproject.toml

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

chromium:  ## Debian's Chromium: Playwright cannot download its own browser here
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)

java:  ## Debian's Java, which runs the Nu HTML checker (npm's vnu-jar) in tests/site
	@command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq default-jre-headless)

clean:
	rm -rf site .venv node_modules

placeholders: setup chromium  ## each embed's static picture (default state) -> sitebuild/placeholders/, for snippets and oEmbed
	$(PY) buildtools/placeholders.py
