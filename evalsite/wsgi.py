"""WSGI entry point (gunicorn evalsite.wsgi); production settings unless DJANGO_SETTINGS_MODULE says otherwise."""
from django.core.wsgi import get_wsgi_application

from .settings import settings_module_default

settings_module_default()
application = get_wsgi_application()
