"""After an import the query planner has statistics, so one response's labels are read through
the response index, not every label of the project through the project index."""
from django.db import connection

from annotation.models import Label


def test_an_import_leaves_planner_statistics_and_a_responses_labels_use_its_index(mini_project):
    qs = Label.objects.filter(project=mini_project, response_id__in=[mini_project.responses.first().pk]).order_by()
    plan = qs.values_list("verdict").explain()
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'annotation_label'")
            assert cursor.fetchone()[0] > 0
        assert "response_id=?" in plan and "(project_id=?)" not in plan
    else:
        with connection.cursor() as cursor:
            cursor.execute("SELECT last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL FROM pg_stat_user_tables "
                           "WHERE relname = 'annotation_label'")
            assert cursor.fetchone()[0]
