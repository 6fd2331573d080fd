from django.urls import path

from apps.core import views

app_name = "core"

urlpatterns = [
    path("jobs/", views.jobs, name="jobs"),
    path("jobs/<str:name>/run/", views.job_run_now, name="job_run_now"),
    path("notices/<int:pk>/dismiss/", views.notice_dismiss_view, name="notice_dismiss"),
    path("healthz", views.healthz, name="healthz"),
]
