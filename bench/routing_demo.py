"""What prediction-powered estimates and routed labelling buy on the demo study (issue 28's figures):

    DJANGO_SETTINGS_MODULE=evalsite.settings.local python -m bench.routing_demo [--project clinical-demo]
        [--human gold] [--judge judge:claude-judge] [--fraction 0.25] [--repetitions 300]

1. Per model, the 95% interval width of rubric accuracy from a uniform random ``fraction`` of the human
   labels alone, and with the judge on every response (the ``ppi_estimate`` report's figures).
2. Over all models, for the width that uniform sample gives with the judge: the labelled responses
   uniform sampling and routing by the judges' uncertainty need (``routing``'s plan, predicted from
   the labels in hand), and, as a check of the prediction, the mean width of ``repetitions`` actual
   routed draws of that many responses (the human labels of every response are known on the demo, so
   each draw is labelled at once).

It reads the project in the database ``DATABASE_URL`` names (the demo's by default: run ``make demo``
once, or ``manage.py load_demo``) and writes nothing.
"""
import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.routing_demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--project", default="clinical-demo")
    parser.add_argument("--human", default="gold")
    parser.add_argument("--judge", default="judge:claude-judge")
    parser.add_argument("--fraction", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repetitions", type=int, default=300)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings.local")
    import django

    django.setup()
    import numpy as np

    from grading import metrics
    from grading.models import Judge
    from grading.reports.inputs import ReportInputs
    from grading.reports.ppi import PPI, paired_figures
    from grading.selectors.routing import response_uncertainties
    from grading.sources import project_get, source_parse

    project = project_get(slug=args.project)
    human, judge = (source_parse(text=text, project=project) for text in (args.human, args.judge))
    ppi = PPI.run(project=project, human=human, judge=judge, metric="rubric_accuracy", k=None,
                  label_fraction=args.fraction, seed=args.seed)
    print(f"{args.project}: rubric accuracy (points), {human.spec} on a uniform {args.fraction:g} of the responses, "
          f"{judge.spec} on all")
    print(f"{'model':24} {'labelled':>8} {'humans alone':>13} {'with judge':>11} {'worth':>7}")
    for model, entry in [*ppi["models"].items(), ("all models", ppi["overall"])]:
        alone = entry["human_only"]["ci"][1] - entry["human_only"]["ci"][0]
        both = entry["ci"][1] - entry["ci"][0]
        print(f"{model:24} {entry['n_labelled']:>8} {alone:>13.2f} {both:>11.2f} {entry['effective_n']:>7.0f}")

    inputs = ReportInputs(project)
    _, humans, judged = paired_figures(inputs=inputs, human=human, judge=judge, metric="rubric_accuracy", k=None)
    population = judged.index.intersection(humans.index).sort_values()
    y = humans.loc[population, "value"].to_numpy(dtype=float)
    f = judged.loc[population, "value"].to_numpy(dtype=float)
    n = len(population)
    n_criteria = inputs.n_binary_criteria_by_case.reindex(inputs.responses.loc[population, "case_id"].to_numpy()).fillna(0)
    n_criteria.index = population
    judges = list(Judge.objects.filter(project=project))
    u = response_uncertainties(project=project, judges=judges, n_criteria=n_criteria)
    u = u.reindex(population).fillna(float(u.mean())).to_numpy(dtype=float)
    rng = np.random.default_rng(args.seed)
    budget = int(round(args.fraction * n))
    uniform_pi = np.full(n, budget / n)
    labelled = np.zeros(n, dtype=bool)
    labelled[rng.choice(n, size=budget, replace=False)] = True
    values = np.where(labelled, y, np.nan)
    found = metrics.active_mean(values, f, uniform_pi)
    target = found.width
    anchor = target / metrics.design_width(values, f, uniform_pi, uniform_pi, lam=found.lam)
    by_uniform = metrics.budget_for_width(target / anchor, values, f, uniform_pi, metrics.uniform_design(n), lam=found.lam)
    by_routing = metrics.budget_for_width(target / anchor, values, f, uniform_pi, metrics.routed_design(u), lam=found.lam)
    print(f"\nall models: {budget} uniformly drawn labels with the judge give a {target:.2f}-point interval "
          f"(λ = {found.lam:.2f}); judges' uncertainty from {len(judges)} judges")
    print(f"labels needed for that width (predicted): uniform {by_uniform}, routed {by_routing}"
          + (f": {by_uniform - by_routing} fewer ({100 * (by_uniform - by_routing) / by_uniform:.0f}%)"
             if by_uniform and by_routing else ""))
    for name, design in (("uniform", metrics.uniform_design(n)), ("routed", metrics.routed_design(u))):
        size = by_routing or budget
        pi = design(size)
        widths, errors = [], []
        for _ in range(args.repetitions):
            drawn = rng.random(n) < pi
            if drawn.sum() < 2:
                continue
            draw = metrics.active_mean(np.where(drawn, y, np.nan), f, pi)
            widths.append(draw.width)
            errors.append(draw.estimate - y.mean())
        print(f"{args.repetitions} actual {name} draws of {size} expected labels: mean width {np.mean(widths):.2f}, "
              f"mean error {np.mean(errors):+.3f} (± {np.std(errors) / np.sqrt(len(errors)):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
