"""API tokens: one per user (DRF's ``authtoken``), created or replaced by the user on the API
token page or by ``manage.py api_token``. Creating one replaces the old key at once; each change
is in the audit trail (without the key)."""
from django.db import transaction
from rest_framework.authtoken.models import Token

from .projects import audit_record


def api_token_issue(*, user, by=None, rotate: bool = True) -> str:
    """The user's API key: a new one (the old key stops working), or with ``rotate=False`` the
    existing key if there is one."""
    with transaction.atomic():
        current = Token.objects.select_for_update().filter(user=user).first()
        if current is not None and not rotate:
            return current.key
        if current is not None:
            current.delete()
        token = Token.objects.create(user=user)
        audit_record(project=None, actor=by or user, action="api_token", target=user.username,
                     before={"created": current.created.isoformat()} if current else None,
                     after={"created": token.created.isoformat()})
    return token.key


def api_token_revoke(*, user, by=None) -> bool:
    with transaction.atomic():
        deleted, _ = Token.objects.filter(user=user).delete()
        if deleted:
            audit_record(project=None, actor=by or user, action="api_token", target=user.username,
                         before={"revoked": True}, after=None)
    return bool(deleted)


def api_token_created(*, user):
    """When the user's current key was created, or None."""
    return Token.objects.filter(user=user).values_list("created", flat=True).first()
