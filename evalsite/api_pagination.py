"""The pagination of every list of the API (annotation's and grading's): ``limit`` / ``offset``."""
from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """``limit`` (1 to 1,000, default 100) and ``offset`` (0 or more); anything else is a 400
    naming the parameter, not silently the default."""
    default_limit = 100
    max_limit = 1000

    def _number(self, request, name: str, default: int, low: int, high: int | None) -> int:
        values = request.query_params.getlist(name)
        if not values:
            return default
        if len(values) > 1:
            raise exceptions.ValidationError({name: ["give it once"]})
        try:
            value = int(values[0])
        except ValueError:
            raise exceptions.ValidationError({name: [f"{values[0][:40]!r} is not a whole number"]}) from None
        if value < low or (high is not None and value > high):
            raise exceptions.ValidationError({name: [f"must be between {low} and {high}" if high else f"must be {low} or more"]})
        return value

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        bounds = {self.limit_query_param: {"minimum": 1, "maximum": self.max_limit}, self.offset_query_param: {"minimum": 0}}
        for parameter in parameters:
            parameter["schema"].update(bounds.get(parameter["name"], {}))
        return parameters

    def get_limit(self, request):
        return self._number(request, self.limit_query_param, self.default_limit, 1, self.max_limit)

    def get_offset(self, request):
        return self._number(request, self.offset_query_param, 0, 0, None)
