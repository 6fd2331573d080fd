from django.urls import path

from apps.accounts import views

app_name = "accounts"

urlpatterns = [
    path("accounts/login/", views.login_view, name="login"),
    path("accounts/logout/", views.logout_view, name="logout"),
    path("accounts/signup/", views.signup_view, name="signup"),
    path("settings/", views.preferences_view, name="preferences"),
    path("settings/password/", views.password_change_view, name="password"),
    path("settings/theme/", views.theme_view, name="theme"),
]
