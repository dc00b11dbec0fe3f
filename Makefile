# The two set-up commands of the README: `make demo` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN = $(VENV)/bin

.PHONY: demo test lint install install-dev system-deps bench

# `make test` runs the linter first (the whole tree passes ruff); `make test LINT=no` skips it.
# (Not `LINT ?= yes`: make has a built-in LINT, for C's lint, that `?=` leaves in place.)
ifeq ($(origin LINT),default)
LINT = yes
endif

demo: install
	$(BIN)/companion serve --demo

test: install-dev system-deps $(if $(filter yes,$(LINT)),lint)
	$(BIN)/python -m pytest

# ruff (settings in pyproject.toml): the lint rules, then the format, checked, not applied.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	$(BIN)/companion bench

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

# Browser tests drive Debian's chromium; speech tests render with espeak-ng;
# the Pi installer is linted with shellcheck.
# Installed when missing and this user may run apt-get; otherwise those tests
# are skipped and say why.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	command -v espeak-ng >/dev/null || missing="$$missing espeak-ng"; \
	command -v shellcheck >/dev/null || missing="$$missing shellcheck"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	else echo "note: missing$$missing; install them with apt to run the browser, speech and installer tests"; exit 0; fi; \
	echo "installing$$missing with apt-get"; \
	$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null
