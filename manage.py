#!/usr/bin/env python
"""Django's command-line entry point for evalsite: production settings unless
DJANGO_SETTINGS_MODULE names others (the demo's are ``evalsite.settings.local``, which ``make
demo`` sets). Settings that cannot load (a missing SECRET_KEY, a replaced variable) end the
command with one line saying which and why, not a traceback."""
import sys


def main() -> None:
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from evalsite.settings import settings_module_default

    module = settings_module_default()
    try:
        settings.INSTALLED_APPS  # noqa: B018 - loads the settings module
    except ImproperlyConfigured as exc:
        sys.exit(f"evalsite: the settings {module} cannot start: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
