"""WSGI entry point (gunicorn evalsite.wsgi); production settings unless DJANGO_SETTINGS_MODULE says otherwise.

Once the application is loaded (settings, models, middleware, and the URL patterns with every view
module they import), everything it allocated is moved out of the garbage collector's sight
(``gc.freeze``): those objects live as long as the process, and without this every full collection
walks all of them again, a pause of tens of milliseconds for every thread of the worker, several
times a minute under load.
"""
import gc

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from .settings import settings_module_default

settings_module_default()
application = get_wsgi_application()
get_resolver().url_patterns  # noqa: B018 - imports every view now, not in the first request
gc.collect()
gc.freeze()
