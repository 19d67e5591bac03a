"""The labeling page's sentence bank as one piece of HTML: a response of one megabyte can hold
25,000 sentences, and a template ``{% for %}`` over them took over a second to render. Here the
numbers are integers and each text is rendered as inline Markdown and sanitized
(``annotation.markdown.markdown_inline``), so ``**Most important:**`` reads as bold text."""
from django import template
from django.utils.safestring import mark_safe

from annotation.markdown import markdown_inline

register = template.Library()


@register.simple_tag
def sentence_items(sentences):
    return mark_safe("\n".join(  # noqa: S308 - ints and escaped text only
        f'<li id="sent-{int(s.id)}" data-sid="{int(s.id)}" data-from="{int(s.start)}" data-to="{int(s.end)}">{markdown_inline(s.text)}</li>'
        for s in sentences))
