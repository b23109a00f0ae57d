# The two commands of the README: `make demo` (PORT=8001 to serve on another port) and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8000
# The MCP SDK's 1.x client, which the interop tests run as a subprocess (tests/mcp1/).
MCP1 := .venv-mcp1
MCP1_STAMP := $(MCP1)/.installed

.PHONY: demo test lint bench clean screenshots

$(STAMP): requirements.txt requirements-dev.txt setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

$(MCP1_STAMP): tests/mcp1/requirements.txt
	test -x $(MCP1)/bin/python || $(PYTHON) -m venv $(MCP1)
	$(MCP1)/bin/python -m pip install --quiet --upgrade pip
	$(MCP1)/bin/python -m pip install --quiet -r tests/mcp1/requirements.txt
	touch $(MCP1_STAMP)

demo: $(STAMP)
	DEBUG=true $(BIN)/python manage.py migrate --noinput
	DEBUG=true PORT=$(PORT) $(BIN)/python -c "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'project.settings'); django.setup(); from project.demo import ensure_superuser; ensure_superuser()"
	DEBUG=true $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

lint: $(STAMP)
	$(BIN)/flake8 webtools project tests bench manage.py

test: lint $(MCP1_STAMP)
	$(BIN)/python -m pytest

# The browser tests, saving each page at phone and desktop widths into docs/screenshots/.
screenshots: $(STAMP)
	WEBTOOLS_SCREENSHOTS=1 $(BIN)/python -m pytest -q -m browser

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/guard_overhead.py
	$(BIN)/python bench/read_url.py
	$(BIN)/python bench/extract.py
	$(BIN)/python bench/reading_budget.py
	$(BIN)/python bench/render.py
	$(BIN)/python bench/render_hostile.py
	$(BIN)/python bench/load.py
	$(BIN)/python bench/focus.py
	$(BIN)/python bench/provenance.py
	$(BIN)/python bench/redaction.py
	$(BIN)/python bench/concurrent_saves.py
	$(BIN)/python bench/mcp_conversation.py

clean:
	rm -rf $(VENV) $(MCP1) build dist *.egg-info
