"""The API's filter sets: a filter given with an empty value is refused (400 naming it) unless it
filters by text. django-filter reads ``?status=`` as no filter, which a schema whose enum (or
integer, or boolean) does not hold the empty text cannot state; leaving the parameter out is the
way to ask for no filter. A text filter (``CharFilter``) keeps reading an empty value as none,
as its schema (a string) allows."""
import django_filters


class StrictFilterSet(django_filters.FilterSet):
    def __init__(self, data=None, *args, **kwargs):
        super().__init__(data, *args, **kwargs)
        for name, flt in self.filters.items():
            if isinstance(flt, django_filters.CharFilter) or data is None or name not in data:
                continue
            flt.extra["required"] = True  # given: an empty value is refused, not read as no filter
            flt.extra["error_messages"] = {**flt.extra.get("error_messages", {}),
                                           "required": "give a value, or leave the parameter out for no filter"}
            flt.__dict__.pop("_field", None)  # made again with these (a copy may hold the class's form field)
