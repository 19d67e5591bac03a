"""How a page's plain form POST words a refusal in its flash message: the form's field errors, or what a
service's ValidationError (or a ValueError / LookupError of a domain rule) says, in one line each."""
from django.core.exceptions import ValidationError


def form_problems(form) -> str:
    """Every field error of an invalid form, as "field: error; field: error"."""
    return "; ".join(f"{field}: {error}" for field, errors in form.errors.items() for error in errors)


def refusal_text(exc: Exception) -> str:
    """A service's refusal in words: a ValidationError's messages, else the exception's text."""
    return "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
