"""The codes a ``ValidationError`` carries when a request was refused for what the server holds,
not for its shape: a service or a field raises with one, and the API answers 404 or 409 by it
(``evalsite.api_errors``); pages and commands show the message as for any other refusal."""

NOT_FOUND = "not_found"  # the request names an object the project does not have
CONFLICT = "conflict"  # the objects are in a state that does not allow it (a name taken, work undecided)
