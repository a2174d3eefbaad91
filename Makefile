# Two commands do all set-up on a fresh machine: `make run` and `make check` (lint, then the tests).
# `make run` installs only what the demo needs (the core and the analysis extra; the Claude Code CLI
# ships in the claude-agent-sdk wheel), `make run AGENT=...` adds that agent's CLI, `make check` and
# `make setup` everything (scripts/install.sh: uv when it can be had, pip otherwise).
PYTHON ?= python3
export PYTHON
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
RUN_STAMP := $(VENV)/.installed-run
CODEX_STAMP := $(VENV)/.installed-codex
# OpenCode and Gemini CLI (npm, pinned by package-lock.json) in ./node_modules, and ripgrep.
CLIS_STAMP := node_modules/.installed
# `make run AGENT=codex` (or opencode, gemini) runs the demo on another agent; the default is Claude Code.
AGENT ?=
# With ANTHROPIC_API_KEY set, `make run` uses a real model (MODEL, default below) under a spending cap
# (MAX_COST_USD); without a key it runs the offline demo against the scripted model server.
DEFAULT_MODEL := claude-sonnet-4-6
MODEL ?= $(if $(AGENT),,$(if $(ANTHROPIC_API_KEY),$(DEFAULT_MODEL),))
MAX_COST_USD ?= 5

.PHONY: setup system-deps run test check lint format lab view demo-figures schema clean

$(STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh $(VENV) dev
	@touch $(STAMP) $(RUN_STAMP) $(CODEX_STAMP)

$(RUN_STAMP): pyproject.toml scripts/install.sh
	bash scripts/install.sh $(VENV) analysis
	@touch $(RUN_STAMP)

$(CODEX_STAMP): $(RUN_STAMP)
	bash scripts/install.sh $(VENV) analysis,agents
	@touch $(CODEX_STAMP)

$(CLIS_STAMP): package.json package-lock.json scripts/agent-clis.sh
	@bash scripts/agent-clis.sh
	@mkdir -p node_modules && touch $(CLIS_STAMP)

setup: $(STAMP) $(CLIS_STAMP)

system-deps:
	@bash scripts/system-deps.sh

# The skill A/B demo through the real Claude Code CLI (or AGENT=codex, opencode, gemini): offline
# (scripted model) without an API key.
# Bubblewrap is installed first when it is missing and we may: without it the sandbox is a plain folder.
AGENT_CLI := $(if $(filter codex,$(AGENT)),$(CODEX_STAMP),$(if $(filter opencode gemini,$(AGENT)),$(CLIS_STAMP)))
run: $(RUN_STAMP) $(AGENT_CLI)
	@bash scripts/system-deps.sh bubblewrap
	$(VENV)/bin/coder-eval run --experiment experiments/skills_ab.yaml -j 4 \
	  $(if $(AGENT),--agent $(AGENT)) \
	  $(if $(MODEL),--model $(MODEL) --max-cost-usd $(MAX_COST_USD))

# The tests run in TEST_JOBS processes (pytest-xdist), a test file per process at a time, the longest
# files first (tests/conftest.py's FIRST; xdist would otherwise sort files by their number of tests).
# On 2 cores, 3 processes took as long as 2 for the whole suite (each test slower), and timing-bound
# tests suffer.
TEST_JOBS ?= 2
test: setup system-deps
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder --durations=30

lint: $(STAMP)
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

check: lint test

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

schema: $(STAMP)
	$(PY) -c 'from pathlib import Path; from coder_eval.trajectory import export_schema; export_schema(Path("docs/trajectory.schema.json"))'

# JupyterLab on the templates, with coder_eval's transcript pages for trajectory links (as root, as
# in a container, JupyterLab must be told --allow-root). LAB_OPTIONS: more options, e.g. --port=8899.
LAB_OPTIONS ?=
lab: $(STAMP)
	$(VENV)/bin/jupyter lab notebooks/ --ServerApp.jpserver_extensions="{'coder_eval.cli.viewer': True}" \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_OPTIONS)

# The explorer on every run under runs/, in a browser.
view: $(STAMP)
	$(VENV)/bin/coder-eval view

# Run the whole demo and rewrite the figures section of docs/demo.md from it (tests/test_demo.py checks it).
demo-figures: $(STAMP)
	$(PY) -m tests.demo_figures --write

clean:
	rm -rf runs reports .pytest_cache .mypy_cache .ruff_cache
