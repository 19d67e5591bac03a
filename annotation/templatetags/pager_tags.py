"""The pager under every paginated list of the pages (issue 26, point 5): ``{% pager page %}``.

Its links are real ``href``s that keep the request's other parameters (a filter, another list's
page) and change only the list's own (``param``), so the list works without JavaScript. Given a
``target`` (the id of the element that holds the list), each link also fetches that list alone
with htmx and swaps it in place, pushing the link's URL so back and forward and a reload show the
same page; the view answers such a request with the list's partial (``htmx_partial``)."""
from django import template

register = template.Library()


def htmx_partial(request, target: str) -> bool:
    """Whether to answer with the partial that ``target`` names: an htmx request aimed at it, and not
    htmx restoring a page of its history it no longer holds (that one needs the whole page)."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request and htmx.target == target


@register.inclusion_tag("_pager.html", takes_context=True)
def pager(context, page, param: str = "page", target: str = "", label: str = "Pages", anchor: str = ""):
    """``anchor``: the id the links scroll to (on a page in tabs, one inside the list's tab)."""
    request = context.get("request")

    def href(number: int) -> str:
        query = request.GET.copy() if request is not None else {}
        query[param] = str(number)
        return "?" + query.urlencode() + (f"#{anchor}" if anchor else "")

    return {
        "page": page, "target": target, "label": label,
        "previous": href(page.previous_page_number()) if page.has_previous() else "",
        "next": href(page.next_page_number()) if page.has_next() else "",
    }
