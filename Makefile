# evalsite: `make demo` sets up and runs the app on one machine; `make test` runs the suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: venv demo serve worker test lint bench bench-full clean

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	touch $@

venv: $(VENV)/.installed

# Migrate the embedded SQLite database, load the demo, start a Celery worker on the
# embedded file-system broker in the background, with Celery beat inside it (-B: the judge-run
# sweeper, which hands a dead worker's run over; a deployment runs `celery -A evalsite beat` once,
# apart), and the web server in the foreground. Every
# command of the demo runs with the demo's settings; without DJANGO_SETTINGS_MODULE, manage.py,
# Celery and WSGI use production's (evalsite/settings/__init__.py).
demo: export DJANGO_SETTINGS_MODULE = evalsite.settings.local
demo: venv
	mkdir -p var/broker/queue var/broker/processed
	$(BIN)/python manage.py migrate --noinput -v 0
	$(BIN)/python manage.py createcachetable
	$(BIN)/python manage.py load_demo --url http://$(HOST):$(PORT)/
	@echo "Starting the Celery worker with beat (log: var/worker.log) and the web server on http://$(HOST):$(PORT)/ (Ctrl-C stops both)"
	@$(BIN)/celery -A evalsite worker -B -s var/celerybeat-schedule --loglevel=warning --concurrency=2 > var/worker.log 2>&1 & \
	  worker=$$!; trap "kill $$worker 2>/dev/null" EXIT INT TERM; \
	  $(BIN)/python manage.py runserver $(HOST):$(PORT) --noreload

# Guard rails first (ruff: pyflakes, pycodestyle, import order; import-linter: the layering
# contracts in .importlinter), then the whole suite: in two processes (xdist; each has its own
# test database, live server and Chromium) and in a new random order each run (pytest-randomly;
# the seed is printed first and last: replay it with PYTEST_ARGS=--randomly-seed=N).
PYTEST_ARGS ?=
test: venv lint
	DJANGO_SETTINGS_MODULE=evalsite.settings.test $(BIN)/python -m pytest -q -n 2 -p randomly $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache

bench: venv
	DJANGO_SETTINGS_MODULE=evalsite.settings.local $(BIN)/python -m bench.run

# The full-scale study of issue 26 on PostgreSQL (127.0.0.1:5432): 2,500 cases x 11 models x 30 criteria, two
# cohorts with overlap 2, three judges (one with 3 samples), generated once into bench/out (about 2 GB), imported
# into a throw-away database, then every report, page, the adjudication queue and page, 50 annotators' saves while
# a report computes, and the gold export timed against their targets. SCALE=0.1 runs a tenth of the cases first.
bench-full: venv
	DJANGO_SETTINGS_MODULE=evalsite.settings.local $(BIN)/python -m bench.full $(if $(SCALE),--scale $(SCALE))

clean:
	rm -rf var staticfiles
