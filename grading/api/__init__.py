"""The pipeline API under ``/api/`` (issue 15): a study from bundle to gold without the browser.

Every view fetches its project through ``annotation.access.project_get_for`` with the action it
performs (the same rule as the pages: 404 without a role, 403 for a role that does not allow it),
has one input and one output serializer, paginates its lists (``limit``/``offset``) in a stable
order, and calls the same services as the pages and commands: a report endpoint returns the JSON
its command prints. The annotators' endpoints are ``annotation.apis``.
"""
