# The two set-up commands of the README: `make demo` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN = $(VENV)/bin

.PHONY: demo test install install-dev system-deps bench

demo: install
	$(BIN)/companion serve --demo

test: install-dev system-deps
	$(BIN)/python -m pytest

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
