"""What a panel of judges shows of itself (issue 14, point 6): how much its members agree
(``metrics.panel_agreement``, the ensemble vote's mean agreement) and, per criterion, how their
votes fall (a count per decision), on the judges page and in ``agreement`` when B is a panel.
Per criterion for the project-wide criteria (a case-specific rubric's criteria are pooled by
kind), so a 75,000-criterion project gives a short table."""
from collections import Counter

from grading import metrics
from grading.selectors import judges_frame, panel_members

from .inputs import ReportInputs, as_number, interval_pair

PER_CRITERION_MAX = 100


def _label(verdict, option, value) -> str:
    if option is not None:
        return str(option)
    if verdict is not None:
        return str(verdict)
    return "(no decision)" if value != value else f"{value:g}"


def panel_summary(*, inputs: ReportInputs, source, ci: bool = False) -> dict | None:
    """None for anything but a panel. With ``ci``, the mean agreement's bootstrap 95% interval
    resampling cases (``mean_agreement_ci``)."""
    judge = source.obj
    if source.kind != "judge" or judge is None or not judge.kind.votes_over_members:
        return None
    own = inputs.for_source(source)
    members = panel_members(judge=judge)
    frame = judges_frame(judges=members, responses=own.responses, criteria=own.criteria)
    frame = frame[frame["response_id"].isin(own.responses.index)]
    criteria = own.criteria
    votes = frame.rename(columns={"judge": "member"}).assign(kind=frame["criterion_id"].map(criteria["kind"]))
    settings = judge.typed_settings
    mean, n, items = metrics.panel_agreement(votes, keys=["response_id", "criterion_id"], rule=settings.vote,
                                             weights=settings.weights or None, per_item=True)
    # Each criterion's group named once, then mapped onto the votes (millions at full scale).
    names = criteria["criterion_external_id"].astype(str).where(
        criteria["case_id"].isna(), "(case criteria, " + criteria["kind"].astype(str) + ")")
    group = votes["criterion_id"].map(names)
    distributions: dict[str, Counter] = {}
    for key, verdict, option, value in zip(group, votes["verdict"], votes["option"], votes["value"]):
        if key in distributions or len(distributions) < PER_CRITERION_MAX:
            distributions.setdefault(key, Counter())[_label(verdict, option, value)] += 1
    interval = {}
    if ci:
        cases = items["response_id"].map(own.responses["case_id"]).to_numpy()
        interval["mean_agreement_ci"] = interval_pair(
            metrics.case_bootstrap_mean_ci(items["agreement"].to_numpy(dtype=float), cases) if len(items) else None)
    return {"members": [m.name for m in members], "vote": settings.vote,
            "mean_agreement": as_number(mean), "n_items": n, **interval,
            "votes_by_criterion": {key: dict(sorted(counts.items())) for key, counts in sorted(distributions.items())}}
