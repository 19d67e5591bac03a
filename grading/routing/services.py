"""Writes of routed labelling: extending a cohort's design to a larger budget, which draws the newly chosen
responses and gives them to the cohort's annotators (the assignment service: balanced round-robin)."""
from dataclasses import dataclass

import numpy as np
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from annotation.access import user_may
from annotation.assignments import ROUND_ROBIN, assignments_create
from annotation.models import Cohort, Project, Response
from annotation.projects import audit_record

from ..models import Judge, RoutingDesign, RoutingDraw
from ..selectors.routing import response_uncertainties

MAX_SEED = 2**31 - 1


@dataclass(frozen=True)
class RoutingExtended:
    design: RoutingDesign
    chosen_now: int  # responses drawn by this extension
    chosen: int  # responses drawn in all
    assignments: int  # assignments it created
    population: int  # responses in the design


def _clean(*, project: Project, budget, uniform_share, seed, judges) -> tuple[int, float | None, int | None, list[Judge]]:
    errors = {}
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        errors["budget"] = f"the budget is a whole number of responses, at least 1, not {budget!r}"
    if uniform_share is not None and (isinstance(uniform_share, bool) or not isinstance(uniform_share, (int, float))
                                      or not 0 < uniform_share <= 1):
        errors["uniform_share"] = f"the uniform share lies in (0, 1], not {uniform_share!r}"
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED):
        errors["seed"] = f"the seed is a whole number from 0 to {MAX_SEED}, not {seed!r}"
    chosen = list(Judge.objects.filter(project=project).order_by("name"))
    if judges:
        known = {j.name: j for j in chosen}
        missing = [name for name in judges if name not in known]
        if missing:
            errors["judges"] = f"no judge {', '.join(map(repr, missing))} in this project"
        chosen = [known[name] for name in judges if name in known]
    if not chosen and "judges" not in errors:
        errors["judges"] = "the project has no judge: routing needs a judge's decisions on the responses"
    if errors:
        raise ValidationError(errors)
    return budget, uniform_share, seed, chosen


@transaction.atomic
def routing_extend(*, project: Project, cohort: Cohort, budget: int, by, judges: list[str] | None = None,
                   uniform_share: float | None = None, seed: int | None = None) -> RoutingExtended:
    """Raise the cohort's routing budget to ``budget`` responses (starting its design the first time) and
    give the responses this draws to the cohort's annotators.

    The first extension fixes the judges, the uniform share and the seed; each response keeps the
    uncertainty it had when it entered the design and one uniform number, so raising the budget only
    adds responses, each still drawn with exactly its (new) probability. Responses added to the project
    later enter the design at the next extension."""
    from grading import metrics  # lazy: the metric code loads on first use
    from grading.metrics.active import UNIFORM_SHARE  # lazy: with scipy, on first use
    from grading.reports.inputs import ReportInputs  # lazy: pandas and the report code load on first use

    if by is not None and not user_may(project=project, user=by, action="manage"):  # None: the command line
        raise PermissionDenied("Only the project's managers route labelling work")
    if cohort.project_id != project.pk:
        raise ValidationError({"cohort": "no such cohort in this project"})
    design = RoutingDesign.objects.select_for_update().filter(cohort=cohort).first()
    budget, uniform_share, seed, chosen_judges = _clean(
        project=project, budget=budget, uniform_share=uniform_share, seed=seed,
        judges=judges if design is None else design.judges)
    if design is not None and budget < design.budget:
        raise ValidationError({"budget": f"the budget can only grow: it is {design.budget} responses already "
                                         "(a drawn response cannot be undrawn)"})
    inputs = ReportInputs(project)
    responses = inputs.responses[inputs.responses["author_kind"] == Response.MODEL]
    if budget > len(responses):
        raise ValidationError({"budget": f"the budget {budget} is more than the project's {len(responses)} "
                                         "model-authored responses"})
    case_ids = responses["case_id"]
    n_criteria = inputs.n_binary_criteria_by_case.reindex(case_ids.to_numpy()).fillna(0)
    n_criteria.index = responses.index
    if design is None:
        design = RoutingDesign.objects.create(
            project=project, cohort=cohort, judges=[j.name for j in chosen_judges],
            uniform_share=UNIFORM_SHARE if uniform_share is None else float(uniform_share),
            seed=0 if seed is None else seed, created_by=by)
    draws = {d.response_id: d for d in RoutingDraw.objects.filter(design=design)}
    new_ids = [int(r) for r in responses.index if int(r) not in draws]
    round_number = design.rounds + 1
    if new_ids:
        uncertainty = response_uncertainties(project=project, judges=chosen_judges, n_criteria=n_criteria)
        if uncertainty.empty:
            raise ValidationError({"judges": f"{', '.join(design.judges)} decided none of the responses yet: run a "
                                             "judge first, so that routing knows where it is unsure"})
        fallback = float(uncertainty.mean())  # a response no judge decided yet: as unsure as the average one
        numbers = np.random.default_rng([design.seed, round_number]).random(len(new_ids))
        added = [RoutingDraw(design=design, response_id=r, uncertainty=float(uncertainty.get(r, fallback)),
                             probability=0.0, draw=float(u)) for r, u in zip(new_ids, numbers, strict=True)]
        RoutingDraw.objects.bulk_create(added, batch_size=2000)
        draws.update({d.response_id: d for d in added})
    ordered = [draws[int(r)] for r in responses.index if int(r) in draws]
    probabilities = metrics.routing_probabilities([d.uncertainty for d in ordered], budget,
                                                  uniform_share=design.uniform_share)
    newly = []
    for draw, probability in zip(ordered, probabilities, strict=True):
        draw.probability = float(probability)
        if draw.chosen_round is None and draw.draw < draw.probability:
            draw.chosen_round = round_number
            newly.append(draw.response_id)
    RoutingDraw.objects.bulk_update(ordered, ["probability", "chosen_round"], batch_size=2000)
    design.budget, design.rounds = budget, round_number
    design.save(update_fields=["budget", "rounds", "updated_at"])
    created = assignments_create(cohort=cohort, method=ROUND_ROBIN, by=by,
                                 responses=list(Response.objects.filter(pk__in=newly).order_by("position", "id")))
    n_chosen = sum(d.chosen_round is not None for d in ordered)
    audit_record(project=project, actor=by, action="route", target=f"cohort {cohort.name}",
                 after={"budget": budget, "round": round_number, "chosen_now": len(newly), "chosen": n_chosen,
                        "assignments": len(created), "judges": design.judges, "uniform_share": design.uniform_share,
                        "seed": design.seed})
    return RoutingExtended(design=design, chosen_now=len(newly), chosen=n_chosen, assignments=len(created),
                           population=len(ordered))
