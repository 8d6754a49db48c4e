# make demo: a full game refereed end to end against the simulated board (no hardware).
# make test: the test suite.  Both create .venv on first use (Raspberry Pi OS refuses a
# system-wide pip install, so everything goes into the project's own virtual environment);
# make test also installs Debian's chromium and chromium-driver for the browser tests and
# mosquitto for the MQTT tests.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CHROMEDRIVER := /usr/bin/chromedriver
MOSQUITTO := /usr/sbin/mosquitto
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: demo test bench bench-cores bench-strength lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/companion demo $(DEMO_ARGS)

test: $(STAMP) $(CHROMEDRIVER) $(MOSQUITTO)
	$(BIN)/python -m pytest -q $(TEST_ARGS)

# The live page's tests drive a headless Chromium through its driver (tests/test_web.py);
# the MQTT tests start Mosquitto brokers of their own (tests/conftest.py).  One recipe for
# both (&:), so that the package lists are fetched once.
$(CHROMEDRIVER) $(MOSQUITTO) &:
	$(SUDO) apt-get update -qq
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
		mosquitto

bench: $(STAMP)
	$(BIN)/python bench/run.py

# CORES_ARGS="--tree DIR" measures the rules cores of another checkout (see bench/cores.py).
bench-cores: $(STAMP)
	$(BIN)/python bench/cores.py --steps $(CORES_ARGS)

# STRENGTH_ARGS="--games 50 --players 2" measures fewer games (see bench/strength.py).
bench-strength: $(STAMP)
	nice $(BIN)/python bench/strength.py $(STRENGTH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check companion tests bench
	$(BIN)/mypy companion

clean:
	rm -rf $(VENV) out .pytest_cache .hypothesis .mypy_cache .ruff_cache
