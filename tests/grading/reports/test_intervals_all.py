"""Intervals on request on every report command (issue 14, point 5; SPEC §5: every report command
takes --ci): pairwise_agreement, reliability, stability, cross_grader, verbosity, trait_scores and
calibrate, each checked against the same bootstrap run by hand on the same data: scipy.stats.bootstrap
drawing case positions (seeded 0, 2,000 resamples, percentile) with the figure recomputed
independently of the app (scikit-learn, krippendorff's matrix form, scipy) on the rows of the drawn
cases, undefined draws left out."""
import io
import json
import warnings

import krippendorff
import numpy as np
import pytest
from django.core.management import call_command
from scipy import stats
from sklearn.metrics import cohen_kappa_score, f1_score

from grading.bundles import bundle_import
from tests.bundles import write_bundle

CASES = [f"c{k}" for k in range(1, 7)]
MODELS = ["m1", "m2", "m3"]
RESPONSES = [(c, m) for c in CASES for m in MODELS]
RNG = np.random.default_rng(7)
DOCS = {rater: {r: int(v) for r, v in zip(RESPONSES, RNG.integers(0, 2, len(RESPONSES)))} for rater in ("d1", "d2", "d3")}
del DOCS["d3"][("c2", "m1")], DOCS["d3"][("c5", "m3")]  # two items with two raters only
SOLO = {r: int(v) for r, v in zip(RESPONSES, RNG.integers(0, 2, len(RESPONSES)))}
JUDGE_K = {r: int(v) for r, v in zip(RESPONSES, RNG.integers(0, 2, len(RESPONSES)))}
GRADES = {r: (int(a), int(b)) for r, a, b in zip(RESPONSES, RNG.integers(0, 5, len(RESPONSES)), RNG.integers(0, 5, len(RESPONSES)))}
JUDGE_K2 = {r: int(v) for r, v in zip(RESPONSES, RNG.integers(0, 2, len(RESPONSES)))}
HUMAN_GRADES = {r: int(v) for r, v in zip(RESPONSES, RNG.integers(0, 5, len(RESPONSES)))}
TEXTS = {r: "Word " * int(n) for r, n in zip(RESPONSES, RNG.integers(3, 40, len(RESPONSES)))}
VERDICT = {1: "met", 0: "not_met"}


def rid(r):
    return f"{r[0]}-{r[1]}"


def bundle(directory):
    grades = [{"label": str(v), "value": v} for v in range(5)]
    rubric = [{"criterion_id": "safe", "text": "Safe advice"},
              {"criterion_id": "grade", "text": "Grade 0-4", "kind": "ordinal", "options": grades}]
    judges = [{"name": "j", "backend": "replay", "model": "m-j", "condition": "anonymized", "samples": 2},
              {"name": "k", "backend": "replay", "model": "m-k", "condition": "anonymized"},
              {"name": "k2", "backend": "replay", "model": "m-k2", "condition": "anonymized"},
              {"name": "pk", "backend": "panel", "settings": {"members": ["k", "k2"], "vote": "majority"}}]
    project = {"slug": "cis", "name": "CIs", "rubric": rubric, "cohorts": [{"name": "docs"}, {"name": "solo"}], "judges": judges}
    labels = [{"response_id": rid(r), "criterion_id": "safe", "cohort": "docs", "annotator": who, "verdict": VERDICT[v]}
              for who, mine in DOCS.items() for r, v in mine.items()]
    labels += [{"response_id": rid(r), "criterion_id": "safe", "cohort": "solo", "annotator": "s1", "verdict": VERDICT[v]}
               for r, v in SOLO.items()]
    labels += [{"response_id": rid(r), "criterion_id": "grade", "cohort": "solo", "annotator": "s1", "option": str(v)}
               for r, v in HUMAN_GRADES.items()]
    base = {"condition": "anonymized", "explanation": "", "evidence": [], "raw": "{}"}
    judgments = [{**base, "response_id": rid(r), "criterion_id": "grade", "judge": "j", "judge_model": "m-j", "sample": s,
                  "option": str(GRADES[r][s])} for r in RESPONSES for s in (0, 1)]
    judgments += [{**base, "response_id": rid(r), "criterion_id": "safe", "judge": "k", "judge_model": "m-k", "sample": 0,
                   "verdict": VERDICT[v]} for r, v in JUDGE_K.items()]
    judgments += [{**base, "response_id": rid(r), "criterion_id": "safe", "judge": "k2", "judge_model": "m-k2", "sample": 0,
                   "verdict": VERDICT[v]} for r, v in JUDGE_K2.items()]
    return write_bundle(directory, {
        "project": project, "cases": [{"case_id": c, "prompt": f"Question {c}"} for c in CASES],
        "responses": [{"response_id": rid(r), "case_id": r[0], "model": r[1], "text": TEXTS[r]} for r in RESPONSES],
        "labels": labels, "judgments": judgments})


@pytest.fixture
def cis(db, tmp_path):
    bundle_import(path=bundle(tmp_path / "cis"))


def run(*args):
    out = io.StringIO()
    call_command(*args, "--project", "cis", "--json", stdout=out)
    return json.loads(out.getvalue())


def by_hand(figure, cases=CASES):
    """The 95% percentile interval of ``figure(drawn case names)`` over scipy's seeded draws of case positions."""
    def on_cases(drawn):
        value = figure([cases[i] for i in drawn])
        return np.nan if value is None else value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant draws: undefined figures, left out below
        draws = stats.bootstrap((np.arange(len(cases)),), on_cases, vectorized=False, n_resamples=2000,
                                method="percentile", rng=np.random.default_rng(0)).bootstrap_distribution
    defined = draws[~np.isnan(draws)]
    if defined.size < 0.9 * draws.size:
        return None  # the app's rule: no interval for a figure that fewer than 90% of the resamples define
    return list(np.quantile(defined, [0.025, 0.975]))


def mf1(truth, prediction):
    """Macro F1 of met (1) and not met (0), written from its definition (F1 = 2TP / (2TP + FP + FN)
    per class, undefined when that is 0/0): twelve thousand bootstrap draws below, where
    scikit-learn's validation cost 3 ms a call; checked against scikit-learn's ``f1_score`` next."""
    truth, prediction = np.asarray(truth), np.asarray(prediction)
    scores = []
    for kind in (1, 0):
        tp = np.sum((truth == kind) & (prediction == kind))
        wrong = np.sum((truth == kind) != (prediction == kind))  # FP + FN
        scores.append(np.nan if 2 * tp + wrong == 0 else 2 * tp / (2 * tp + wrong))
    return float(np.mean(scores))


def test_the_by_hand_mf1_is_scikit_learns():
    rng = np.random.default_rng(3)
    cases = [([1, 1, 1], [1, 1, 1]), ([0, 0], [0, 0]), ([1, 0], [0, 1]), ([1], [0])]
    cases += [tuple(rng.integers(0, 2, size=(2, n))) for n in (1, 2, 5, 40, 200) for _ in range(20)]
    for truth, prediction in cases:
        theirs = float(np.mean(f1_score(truth, prediction, labels=[1, 0], average=None, zero_division=np.nan)))
        assert mf1(truth, prediction) == pytest.approx(theirs, nan_ok=True), (truth, prediction)


def test_pairwise_weighted_mean_and_grader(cis):
    result = run("pairwise_agreement", "--source", "cohort:docs", "--grader", "judge:k", "--min-n", "0", "--ci")

    def weighted(drawn, raters=("d1", "d2", "d3")):
        pairs = {}
        for case in drawn:
            for r in [r for r in RESPONSES if r[0] == case]:
                present = [who for who in DOCS if r in DOCS[who]]
                for me in present:
                    for other in present:
                        if other != me:
                            pairs.setdefault(me, []).append((DOCS[other][r], DOCS[me][r]))
        figures = [(mf1(*zip(*p)), len(p)) for who, p in pairs.items() if who in raters]
        figures = [(m, n) for m, n in figures if not np.isnan(m)]
        return sum(m * n for m, n in figures) / sum(n for _, n in figures) if figures else None

    def grader(drawn):
        pairs = [(DOCS[who][r], JUDGE_K[r]) for case in drawn for r in RESPONSES if r[0] == case for who in DOCS if r in DOCS[who]]
        return mf1(*zip(*pairs))

    assert result["weighted_mean_mf1_ci"] == pytest.approx(by_hand(weighted))
    assert result["grader"]["mf1_ci"] == pytest.approx(by_hand(grader))
    assert "weighted_mean_mf1_ci" not in run("pairwise_agreement", "--source", "cohort:docs", "--min-n", "0")
    # d1 and d2 have 34 pairs each, d3 32: with --min-n 33 the mean is d1's and d2's in every resample,
    # even where d3's resampled pairs pass 33; with --min-n 40 nobody is in it: no mean, no interval
    assert run("pairwise_agreement", "--source", "cohort:docs", "--min-n", "33", "--ci")["weighted_mean_mf1_ci"] == \
        pytest.approx(by_hand(lambda drawn: weighted(drawn, raters=("d1", "d2"))))
    nobody = run("pairwise_agreement", "--source", "cohort:docs", "--min-n", "40", "--ci")
    assert nobody["weighted_mean_mf1"] is None and nobody["weighted_mean_mf1_ci"] is None


def _alpha(drawn):
    columns = [r for case in drawn for r in RESPONSES if r[0] == case]
    data = np.array([[DOCS[who].get(r, np.nan) for r in columns] for who in DOCS], dtype=float)
    try:
        return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal", value_domain=[0.0, 1.0])
    except ValueError:
        return None


def test_krippendorff_alpha(cis):
    result = run("reliability", "--source", "cohort:docs", "--ci")
    assert result["alpha_ci"] == pytest.approx(by_hand(_alpha))
    assert result["alpha_ci"][0] <= result["krippendorff_alpha"] <= result["alpha_ci"][1]


def test_stability_mu_per_cell(cis):
    result = run("stability", "--judge", "j", "--ci")
    cell = next(c for c in result["cells"] if (c["target"], c["criterion"]) == ("m2", "grade"))

    def mu(drawn):
        return np.mean([np.mean([GRADES[(case, "m2")][s] for case in drawn]) for s in (0, 1)])

    assert cell["mu_ci"] == pytest.approx(by_hand(mu))
    assert all("mu_ci" not in c for c in run("stability", "--judge", "j")["cells"])


def test_cross_grader(cis):
    result = run("cross_grader", "--a", "cohort:solo", "--b", "judge:k", "--ci")

    def rates(drawn, decisions, model):
        return 100 * np.mean([decisions[(case, model)] for case in drawn])

    def mean_abs_diff(drawn):
        return np.mean([abs(rates(drawn, SOLO, m) - rates(drawn, JUDGE_K, m)) for m in MODELS])

    def spearman(drawn):
        rho = stats.spearmanr([rates(drawn, SOLO, m) for m in MODELS], [rates(drawn, JUDGE_K, m) for m in MODELS]).statistic
        return None if np.isnan(rho) else rho

    assert result["mean_abs_diff_pp_ci"] == pytest.approx(by_hand(mean_abs_diff))
    expected = by_hand(spearman)  # three models' rates over six cases: often tied, rho undefined in many draws
    assert result["spearman_rho_ci"] == (pytest.approx(expected) if expected is not None else None)
    assert result["rates"]["m1"]["b_pct_ci"] == pytest.approx(by_hand(lambda drawn: rates(drawn, JUDGE_K, "m1")))
    assert "mean_abs_diff_pp_ci" not in run("cross_grader", "--a", "cohort:solo", "--b", "judge:k")


def test_verbosity_correlations(cis):
    result = run("verbosity", "--source", "cohort:solo", "--k", "1", "--ci")

    def pearson(drawn):
        rows = [r for case in drawn for r in RESPONSES if r[0] == case]
        return stats.pearsonr([len(TEXTS[r]) for r in rows], [100.0 * SOLO[r] for r in rows]).statistic

    assert result["rubric_accuracy"]["pearson_ci"] == pytest.approx(by_hand(pearson))
    assert set(result["cacs"]) == {"pearson", "spearman", "partial", "pearson_ci", "spearman_ci"}


def ruler_parts():
    """test_traits' compiled rubric with each response a case of its own."""
    from tests.grading.reports.test_traits import parts

    ruler = parts()
    for k, response in enumerate(ruler["responses"]):
        response["case_id"] = f"c{k + 1}"
    ruler["cases"] = [{"case_id": f"c{k + 1}", "prompt": "Chest pain?"} for k in range(3)]
    return ruler


def ruler_qwk(drawn):
    judge, cohort = {"c1": 5, "c2": 3, "c3": 1}, {"c1": 5, "c2": 2, "c3": 2}  # test_traits.test_trait_scores_by_hand
    a, b = [judge[c] for c in drawn], [cohort[c] for c in drawn]
    if len(set(a) | set(b)) < 2:
        return None
    return cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4, 5])


def test_trait_qwk_interval(db, tmp_path):
    bundle_import(path=write_bundle(tmp_path / "ruler", ruler_parts()))
    out = io.StringIO()
    call_command("trait_scores", "--project", "ruler", "--source", "judge:j", "--reference", "cohort:docs", "--ci", "--json",
                 stdout=out)
    result = json.loads(out.getvalue())
    assert result["qwk_ci"]["clarity"] == pytest.approx(by_hand(ruler_qwk, ["c1", "c2", "c3"]))


def test_calibrate_intervals_of_the_held_out_qwk(cis):
    result = run("calibrate", "--source", "judge:j", "--reference", "cohort:solo", "--criterion", "grade", "--ci")
    assert result["n_holdout"] == 9
    for key in ("qwk_before_ci", "qwk_after_ci"):
        low, high = result[key]
        assert -1 <= low <= high <= 1
    assert "qwk_before_ci" not in run("calibrate", "--source", "judge:j", "--reference", "cohort:solo", "--criterion", "grade")


def pm_text(pair):
    return f"{pair[0]:.3f} – {pair[1]:.3f}"


@pytest.fixture
def viewer(client, cis):
    from django.contrib.auth import get_user_model

    from annotation.models import Project
    from tests.roles import grant

    user = get_user_model().objects.create_user(username="res", password="pw-12345")
    grant(user, Project.objects.get(slug="cis"), "viewer")
    client.force_login(user)
    return client


def test_judges_page_toggle(viewer):
    from django.urls import reverse

    response = viewer.get(reverse("report-judges", args=["cis"]) + "?ci=1")
    assert 'name="ci" value="1" checked' in response.content.decode()
    tables = response.context["result"]["tables"]
    positive = {row[0]: dict(zip(tables["positive_rates"]["columns"], row)) for row in tables["positive_rates"]["rows"]}
    solo = by_hand(lambda drawn: np.mean([SOLO[(c, m)] for c in drawn for m in MODELS]))
    assert positive["cohort:solo"]["positive_rate 95% CI"] == pm_text(solo)
    stability = {row[0]: dict(zip(tables["stability"]["columns"], row)) for row in tables["stability"]["rows"]}
    sds = by_hand(lambda drawn: np.mean([abs(GRADES[(c, m)][0] - GRADES[(c, m)][1]) / np.sqrt(2) for c in drawn for m in MODELS]))
    assert stability["judge:j"]["mean_sd_ordinal 95% CI"] == pm_text(sds)
    assert "mean_abs_diff_pp 95% CI" in tables["robustness"]["columns"]
    plain = viewer.get(reverse("report-judges", args=["cis"])).context["result"]["tables"]
    assert not any("95% CI" in c for table in plain.values() for c in table["columns"])


def test_stability_mean_sd_per_kind(cis):
    result = run("stability", "--judge", "j", "--ci")
    sds = by_hand(lambda drawn: np.mean([abs(GRADES[(c, m)][0] - GRADES[(c, m)][1]) / np.sqrt(2) for c in drawn for m in MODELS]))
    assert result["by_kind"]["ordinal"]["mean_sd_ci"] == pytest.approx(sds)


def test_panel_mean_agreement(cis):
    result = run("agreement", "--a", "cohort:solo", "--b", "judge:pk", "--ci")
    expected = by_hand(lambda drawn: np.mean([1.0 if JUDGE_K[(c, m)] == JUDGE_K2[(c, m)] else 0.5 for c in drawn for m in MODELS]))
    assert result["panel"]["mean_agreement_ci"] == pytest.approx(expected)
    assert "mean_agreement_ci" not in run("agreement", "--a", "cohort:solo", "--b", "judge:pk")["panel"]


def test_traits_page_toggle(client, db, tmp_path):
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    from annotation.models import Project
    from tests.roles import grant

    bundle_import(path=write_bundle(tmp_path / "ruler", ruler_parts()))
    user = get_user_model().objects.create_user(username="res", password="pw-12345")
    grant(user, Project.objects.get(slug="ruler"), "viewer")
    client.force_login(user)
    url = reverse("report-traits", args=["ruler"]) + "?source=judge:j&reference=cohort:docs"
    table = client.get(url + "&ci=1").context["result"]["tables"]["traits"]
    row = dict(zip(table["columns"], table["rows"][0]))
    assert row["qwk 95% CI"] == pm_text(by_hand(ruler_qwk, ["c1", "c2", "c3"]))
    assert "qwk 95% CI" not in client.get(url).context["result"]["tables"]["traits"]["columns"]


def _next_case_ids_straddle_a_power_of_ten(n_cases: int) -> None:
    """Set the database's next case id so that the next ``n_cases`` ids straddle a power of ten
    (98, 99, 100, ...), where ids as text sort in another order than the cases do."""
    from django.db import connection

    from annotation.models import Case

    table = Case._meta.db_table
    above = (Case.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + n_cases
    start = 10 ** len(str(above)) - n_cases // 2
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT setval(pg_get_serial_sequence(%s, 'id'), %s, false)", [table, start])
        else:
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [start - 1, table])
            if not cursor.rowcount:
                cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, start - 1])


def test_krippendorff_alpha_interval_does_not_depend_on_the_cases_ids(db, tmp_path):
    """The resampling draws cases in the order of their names, whatever ids the database gave them:
    an exported study imported again has the same interval."""
    from annotation.models import Case

    _next_case_ids_straddle_a_power_of_ten(len(CASES))
    bundle_import(path=bundle(tmp_path / "cis"))
    ids = [str(pk) for pk in Case.objects.filter(project__slug="cis").order_by("pk").values_list("pk", flat=True)]
    assert sorted(ids) != ids  # as text the ids are out of the cases' order
    result = run("reliability", "--source", "cohort:docs", "--ci")
    assert result["alpha_ci"] == pytest.approx(by_hand(_alpha))
