"""The URLs of Settings → SSH profiles (mounted at /settings/ssh/)."""

from django.urls import path

from apps.agents import settings_views

app_name = "ssh_profiles"

urlpatterns = [
    path("", settings_views.profile_list, name="list"),
    path("add/", settings_views.profile_add, name="add"),
    path("<id:pk>/", settings_views.profile_detail, name="detail"),
    path("<id:pk>/check/", settings_views.profile_check, name="check"),
    path("<id:pk>/accept/", settings_views.profile_accept, name="accept"),
    path("<id:pk>/forget/", settings_views.profile_forget, name="forget"),
    path("<id:pk>/delete/", settings_views.profile_delete, name="delete"),
]
