"""docs/deploy.md against the code (issue 26, point 4): the settings table names every environment
variable the production settings read (``evalsite/settings/base.py`` and ``production.py``, found
in their source) and no variable they do not read; the documented example environment, alone,
gives production settings that ``manage.py check --deploy`` passes without a warning and that say
what the page says they do (PostgreSQL, Redis for the broker and for the shared rate limits, the
trusted proxy and the judge endpoints)."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "deploy.md"
SETTINGS = [ROOT / "evalsite" / "settings" / name for name in ("base.py", "production.py")]
ENV_READERS = {"str", "int", "bool", "list", "float", "db"}  # env.str(...), environ.Env().str(...)


def _variables_read(path: Path) -> set[str]:
    """The environment variables a settings module reads: the first argument, a string constant, of
    ``env(...)``, ``env.<reader>(...)``, ``environ.Env().<reader>(...)``, ``os.environ.get(...)``,
    and the names of a literal tuple a comprehension checks in ``os.environ`` (the replaced variables)."""
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            if (isinstance(func, ast.Name) and func.id == "env") or (isinstance(func, ast.Attribute) and (
                    func.attr in ENV_READERS or (func.attr == "get" and ast.unparse(func.value) == "os.environ"))):
                names.add(node.args[0].value)
        if isinstance(node, ast.comprehension) and isinstance(node.iter, ast.Tuple) and "os.environ" in ast.unparse(node):
            names |= {e.value for e in node.iter.elts if isinstance(e, ast.Constant)}
    return {n for n in names if re.fullmatch(r"[A-Z][A-Z0-9_]*", n)}


def _section_after(marker: str) -> str:
    text = DOC.read_text()
    assert marker in text, f"docs/deploy.md has no {marker!r} marker"
    return text.split(marker, 1)[1]


def _documented_settings() -> set[str]:
    table = _section_after("<!-- deploy-settings").split("\n\n", 1)[0]  # the marker's line and the table under it
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    return {re.match(r"\| `([A-Z0-9_]+)`", row).group(1) for row in rows}


def _example_environment() -> dict:
    block = _section_after("<!-- deploy-env").split("```sh\n", 1)[1].split("```", 1)[0]
    pairs = [line.split("=", 1) for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return {name: value for name, value in pairs}


def test_the_finder_sees_the_settings_variables():
    """The scan itself: it finds what the settings plainly read (so an empty scan cannot pass)."""
    read = _variables_read(SETTINGS[0]) | _variables_read(SETTINGS[1])
    assert {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "EVALSITE_TRUSTED_PROXIES", "EVALSITE_JUDGE_ENDPOINTS",
            "EVALSITE_JUDGE_CREDENTIALS", "EVALSITE_VAR_DIR", "CONN_MAX_AGE", "SECURE_PROXY_SSL_HEADER"} <= read


def test_every_variable_the_production_settings_read_is_documented_and_nothing_else():
    read = set().union(*(_variables_read(path) for path in SETTINGS)) | {"DJANGO_SETTINGS_MODULE"}
    documented = _documented_settings()
    assert not read - documented, f"read by the settings, missing from docs/deploy.md: {sorted(read - documented)}"
    assert not documented - read, f"in docs/deploy.md, read by no setting: {sorted(documented - read)}"


def _with_example_environment(*args: str) -> subprocess.CompletedProcess:
    example = _example_environment()
    # Only the documented environment: nothing of this process's (its DATABASE_URL, a test's broker)
    # may make the example pass.
    read = set().union(*(_variables_read(path) for path in SETTINGS))
    environment = {k: v for k, v in os.environ.items()
                   if k not in read and k not in ("DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    environment.update(example)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=environment, capture_output=True,
                          text=True, timeout=120)


def test_the_documented_environment_passes_check_deploy_without_a_warning():
    example = _example_environment()
    assert example["DJANGO_SETTINGS_MODULE"] == "evalsite.settings.production"
    result = _with_example_environment("check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout + result.stderr


def test_the_documented_environment_configures_what_the_page_says():
    code = ("from django.conf import settings as s; "
            "print(s.SETTINGS_MODULE, s.DEBUG, s.DATABASES['default']['ENGINE'], s.CELERY_BROKER_URL, "
            "s.EVALSITE_RATE_LIMIT_REDIS_URL, s.EVALSITE_TRUSTED_PROXIES, s.REST_FRAMEWORK['NUM_PROXIES'], "
            "s.SECURE_PROXY_SSL_HEADER, s.EVALSITE_JUDGE_ENDPOINTS, s.EVALSITE_JOBS_DIR, s.CELERY_TASK_DEFAULT_QUEUE, sep='|')")
    result = _with_example_environment("shell", "-c", code)
    assert result.returncode == 0, result.stderr
    example = _example_environment()
    printed = result.stdout.strip().splitlines()[-1].split("|")
    assert printed == [
        "evalsite.settings.production", "False", "evalsite.postgresql", example["CELERY_BROKER_URL"],
        example["CELERY_BROKER_URL"],  # the rate limits are shared through the broker's Redis by default
        "1", "1", "('HTTP_X_FORWARDED_PROTO', 'https')",
        "[('https://api.openai.com/v1', 'OPENAI_API_KEY'), ('http://10.0.0.5:8000/v1', 'VLLM_KEY')]",
        example["EVALSITE_JOBS_DIR"], "celery",
    ]
