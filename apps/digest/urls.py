from django.urls import path

from apps.digest import views

app_name = "digest"

urlpatterns = [
    path("", views.index, name="index"),
    path("settings/", views.settings_page, name="settings"),
    path("run/", views.run_now, name="run"),
    path("<id:pk>/", views.detail, name="detail"),
    path("<id:pk>/papers/<id:number>/add/", views.add_paper, name="add_paper"),
]
