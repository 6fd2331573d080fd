from django.urls import path

from apps.core import views, webapp

app_name = "core"

urlpatterns = [
    path("jobs/", views.jobs, name="jobs"),
    path("jobs/<str:name>/run/", views.job_run_now, name="job_run_now"),
    path("notices/<int:pk>/dismiss/", views.notice_dismiss_view, name="notice_dismiss"),
    path("notices/seen/", views.notices_seen_view, name="notices_seen"),
    path("healthz", views.healthz, name="healthz"),
    # The installable app (apps/core/webapp.py): the worker at the root, so its scope is the site.
    path("manifest.webmanifest", webapp.manifest, name="manifest"),
    path("sw.js", webapp.service_worker, name="service_worker"),
    path("offline/", webapp.offline, name="offline"),
]
