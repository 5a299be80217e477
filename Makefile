# Breja: `make run` serves everything on SQLite; `make test` runs the whole suite.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8000
PYTHON ?= python3
# The addresses the API and pages give (url, city_url, canonical) follow the port served.
SITE_URL ?= http://127.0.0.1:$(PORT)
DEV_ENV := DEBUG=1 ENVIRONMENT=development SITE_URL=$(SITE_URL) DATASETS_REFRESH_IN_PROCESS=1

.PHONY: install install-dev run test lint bench bench-mcp migrate clean

$(VENV)/.installed: pyproject.toml datasets/_dealrows.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	mkdir -p var
	$(DEV_ENV) $(PY) manage.py migrate --noinput -v0
	$(DEV_ENV) $(PY) manage.py load_demo --if-empty
	$(DEV_ENV) $(PY) manage.py collectstatic --noinput -v0
	$(DEV_ENV) $(PY) manage.py export_datasets
	@echo "Breja on http://127.0.0.1:$(PORT)/ (admin: /admin/, API docs: /api/v1/docs, datasets: /api/v1/index.json, MCP: /mcp)"
	$(DEV_ENV) $(VENV)/bin/uvicorn config.asgi:application --no-proxy-headers --no-access-log --host 127.0.0.1 --port $(PORT)

test: install-dev
	$(PY) -m tests.backends
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

bench: install-dev
	@command -v wrk >/dev/null || ! command -v apt-get >/dev/null \
	  || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) \
	  || echo "bench: could not install wrk; the throughput figures will be skipped" >&2
	$(PY) -m bench.run
	BENCH_EXPORT_DB=breja_bench_export $(PY) -m bench.export_bench --rows 100000,1000000

bench-mcp: install-dev
	$(PY) -m bench.mcp_bench

clean:
	rm -rf $(VENV) var
