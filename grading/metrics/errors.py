"""The one domain error of the metrics package. Every function here raises
`MetricError` (a `ValueError`) for input it cannot give a meaning to — arrays of
different lengths, values outside a scale, an unknown strategy — so that the service
layer can turn it into a clear 400 without catching unrelated exceptions. Figures that
are merely undefined for valid input (an F1 of an absent class, a kappa with no
variance) are not errors: they come back as `None`.
"""


class MetricError(ValueError):
    """Input that a metric cannot be computed from."""
