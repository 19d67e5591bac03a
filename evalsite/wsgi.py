"""WSGI entry point (gunicorn evalsite.wsgi); production settings unless DJANGO_SETTINGS_MODULE says
otherwise. Once the application is loaded (settings, models, middleware, every view module the URL
patterns import and the tables that reverse URLs), what it allocated is moved out of the garbage
collector's sight (``gc.freeze``): those objects live as long as the process, and without this every
full collection walks all of them again, a pause of tens of milliseconds for every thread of the
worker. A URL configuration that cannot load now stops the worker at start, not each request."""
import gc

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

from .settings import settings_module_default

settings_module_default()
application = get_wsgi_application()
get_resolver().reverse_dict  # imports every view and builds the reverse tables, not in the first request
gc.collect()
gc.freeze()
