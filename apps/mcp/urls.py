from django.urls import path

from apps.mcp import views

app_name = "mcp"

urlpatterns = [
    path("settings/mcp/", views.settings_page, name="settings"),
    path("settings/mcp/tokens/", views.create, name="token_create"),
    path("settings/mcp/tokens/<id:pk>/revoke/", views.revoke, name="token_revoke"),
]
