from django.urls import path

from apps.accounts import memory_views, views

app_name = "accounts"

urlpatterns = [
    path("accounts/login/", views.login_view, name="login"),
    path("accounts/logout/", views.logout_view, name="logout"),
    path("accounts/signup/", views.signup_view, name="signup"),
    path("settings/", views.preferences_view, name="preferences"),
    path("settings/password/", views.password_change_view, name="password"),
    path("settings/theme/", views.theme_view, name="theme"),
    path("settings/memories/", memory_views.memories, name="memories"),
    path("settings/memories/add/", memory_views.add, name="memory_add"),
    path("settings/memories/<id:pk>/", memory_views.update, name="memory_update"),
    path("settings/memories/<id:pk>/delete/", memory_views.delete, name="memory_delete"),
]
